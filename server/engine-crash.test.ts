// An engine thread that dies, through the real server: the requests it held fail (a 500, or a stream's error frame),
// a fresh thread reloads the model and serves the same answers, and a second death within a minute marks the model
// unavailable: /health answers 503 naming it and the cause, and generation and token counts are refused (503 / 529).
// The thread is ended by the engine's test-only hook (WorkerEngine.exitThreadForTesting), as a crash would end it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

let model: ModelServer;
/** The server's error log: request id and message of each failure it logged. */
const logged: { requestId: string; message: string }[] = [];
const EXIT_CODE = 42;
const STOPPED = `the engine thread stopped: the engine thread exited with code ${EXIT_CODE}`;
const UNAVAILABLE = `the engine is unavailable: the engine thread exited with code ${EXIT_CODE}`;

beforeAll(async () => {
  model = await startModelServer({ preset: "tiny-llama", contextSize: 512, key: "sk-crash", engineTestHooks: true,
    server: { log: { requestError: (requestId, _route, error) => logged.push({ requestId, message: (error as Error).message }) } },
  });
});
afterAll(async () => {
  await model?.close();
});

const headers = () => ({ authorization: `Bearer ${model.key}`, "content-type": "application/json" });
const chat = (body: Record<string, unknown>) => fetch(`${model.base}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify({ model: model.chatModel, ...body }) });
const greedy = { messages: [{ role: "user", content: "Tell me about the storm" }], temperature: 0, max_tokens: 8 };

/**
 * Starts a non-streamed and a streamed request that would run for a while, ends the engine thread once the stream
 * has a token, and returns both answers: the non-streamed one's status and body, the stream's frames.
 */
async function killedDuringRequests(): Promise<{ whole: { status: number; body: unknown; requestId: string | null }; frames: string[] }> {
  const long = { messages: [{ role: "user", content: "A long story, please" }], max_tokens: 400, temperature: 0 };
  const whole = chat(long).then(async (response) => ({ status: response.status, body: await response.json(), requestId: response.headers.get("x-request-id") }));
  const streamed = await chat({ ...long, stream: true });
  expect(streamed.status).toBe(200);
  const frames: string[] = [];
  const decoder = new TextDecoder();
  let buffered = "";
  let killed = false;
  for await (const chunk of streamed.body!) {
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    const parts = buffered.split("\n\n");
    buffered = parts.pop()!;
    frames.push(...parts);
    if (!killed && frames.some((frame) => frame.includes('"content":"') && !frame.includes('"content":""'))) {
      killed = true;
      model.worker.exitThreadForTesting(EXIT_CODE);
    }
  }
  expect(killed, "the stream produced a token before the thread was ended").toBe(true);
  return { whole: await whole, frames };
}

async function health(): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${model.base}/health`);
  return { status: response.status, body: await response.json() };
}

describe("an engine thread that dies", () => {
  it("fails the requests in flight, then a fresh thread serves the same answers", async () => {
    const before = await chat(greedy);
    expect(before.status).toBe(200);
    const expected = ((await before.json()) as { choices: [{ message: { content: string } }] }).choices[0].message.content;

    const { whole, frames } = await killedDuringRequests();
    expect(whole.status).toBe(500);
    expect(whole.body).toMatchObject({ error: { type: "server_error", message: `the model failed while generating: ${STOPPED}` } });
    expect(frames.at(-1)).toBe(`data: ${JSON.stringify({ error: { message: `the model failed while generating: ${STOPPED}`, type: "server_error", param: null, code: null } })}`);
    expect(frames.join("\n")).not.toContain("[DONE]");
    expect(logged).toContainEqual({ requestId: whole.requestId, message: `the model failed while generating: ${STOPPED}` });

    // Restarted, not unavailable: the next request waits for the reload and gets the same greedy answer.
    expect(model.worker.unavailable).toBeUndefined();
    const after = await chat(greedy);
    expect(after.status).toBe(200);
    expect(((await after.json()) as { choices: [{ message: { content: string } }] }).choices[0].message.content).toBe(expected);
    expect(await health()).toEqual({ status: 200, body: { status: "ok", models: 1, version: expect.any(String) } });
  });

  it("a second death within a minute marks the model unavailable: /health says so and requests are refused", async () => {
    const { whole } = await killedDuringRequests();
    expect(whole.status).toBe(500);
    expect(model.worker.unavailable?.message).toBe(UNAVAILABLE);

    expect(await health()).toEqual({ status: 503, body: { status: "unavailable", models: 1, unavailable: [{ model: model.chatModel, error: UNAVAILABLE }], version: expect.any(String) } });

    const refused = await chat(greedy);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(await refused.json()).toEqual({ error: { message: `the model is unavailable: ${UNAVAILABLE}`, type: "server_error", param: null, code: "server_overloaded" } });

    const anthropic = { "x-api-key": model.key, "anthropic-version": "2023-06-01", "content-type": "application/json" };
    const message = { model: model.messagesModel, messages: [{ role: "user", content: "Hi" }] };
    for (const [path, body] of [["/v1/messages", { ...message, max_tokens: 8 }], ["/v1/messages/count_tokens", message]] as const) {
      const response = await fetch(`${model.base}${path}`, { method: "POST", headers: anthropic, body: JSON.stringify(body) });
      expect(response.status, path).toBe(529);
      expect(await response.json(), path).toEqual({ type: "error", error: { type: "overloaded_error", message: `the model is unavailable: ${UNAVAILABLE}` } });
    }
    expect(model.engine.requests.at(-1)?.input).toMatchObject({ messages: [{ role: "user", content: "A long story, please" }] }); // the refused ones never reached it
  });
});
