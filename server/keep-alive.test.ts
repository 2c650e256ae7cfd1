// Messages streams send ping events during long silences (a slow prefill or a long think), and nothing else does.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEndpoints } from "./adapters/endpoints.js";
import { OpenAccess } from "./http/auth.js";
import { type LoomServer, startServer } from "./server.js";
import { ModelRegistry } from "./models.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "./testing/scripted-engine.js";

const engine = new ScriptedEngine();
let server: LoomServer;

beforeAll(async () => {
  const registry = new ModelRegistry([{ model: SCRIPTED_MODEL, engine, slugs: { openai: ["service/tim-x-27b"], anthropic: ["service/x-marathon"] }, created: 1 }]);
  server = await startServer({ registry, auth: new OpenAccess(), endpoints: createEndpoints(registry), pingSeconds: 0.05 }, "127.0.0.1", 0);
});
afterAll(() => server?.close());

const post = (path: string, body: object) =>
  fetch(`http://127.0.0.1:${server.port}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

it("pings a messages stream while it is silent, between content and the end", async () => {
  engine.script = { deltas: ["Hello", " world"], pauseBeforeFinishMs: 400 };
  const text = await (await post("/v1/messages", { model: "service/x-marathon", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] })).text();
  const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
  expect(events[0]).toBe("message_start");
  expect(events.at(-1)).toBe("message_stop");
  const firstPing = events.indexOf("ping");
  expect(firstPing).toBeGreaterThan(events.indexOf("content_block_delta"));
  expect(firstPing).toBeLessThan(events.indexOf("message_delta"));
  expect(text).toContain('data: {"type": "ping"}');
});

it("sends no pings on chat-completion streams (the format has none)", async () => {
  engine.script = { deltas: ["Hello"], pauseBeforeFinishMs: 200 };
  const text = await (await post("/v1/chat/completions", { model: "service/tim-x-27b", stream: true, messages: [{ role: "user", content: "hi" }] })).text();
  expect(text).not.toContain("ping");
  expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
});
