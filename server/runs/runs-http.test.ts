// Agent runs over HTTP with a real server and database (PGlite and PostgreSQL), the model's turns scripted: create and
// poll to `succeeded` with the exact step sequence, every body rule with its field named, unknown and model-less
// engines, another organization's run as 404, cancel (queued and processing), timeout, a tool error fed back, the step
// budget, answerFormat / reasoningFormat objects that validate, and the run's tokens in the organization's usage.
import Ajv from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import type { EngineRequest } from "../../engine/request.js";
import { utcDay } from "../platform/limits/daily.js";
import { TEST_BACKENDS } from "../platform/testing/test-databases.js";
import { SCRIPTED_PROMPT_TOKENS, type Script, ScriptedEngine } from "../testing/scripted-engine.js";
import { startWebhookReceiver } from "./callbacks/testing/webhook-receiver.js";
import { FIXED_PAGES as PAGES, fixedTools as tools } from "./testing/fixed-tools.js";
import { type RunsServer, startRunsServer } from "./testing/runs-server.js";

/** A model turn that calls one tool. */
function call(name: string, args: Record<string, unknown>): Script {
  return { deltas: ["Let me check.", `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`] };
}

/** A model turn that answers. */
function answer(text: string): Script {
  return { deltas: [text] };
}

const ALL_TOOLS = [{ id: "web_search" }, { id: "read_page" }];

async function settle(server: RunsServer, runId: string, key?: string, timeoutMs = 10_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await server.call("GET", `/v1/runs/${runId}`, undefined, key);
    expect(status).toBe(200);
    if (body.status === "succeeded" || body.status === "failed") return body;
    if (Date.now() > until) throw new Error(`run ${runId} still ${body.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The requests the engine ran (model turns), without those it only counted (each turn's admission). */
function submitted(engine: ScriptedEngine): EngineRequest[] {
  return engine.requests.filter((request) => request.id !== "count");
}

/** The messages of the engine request a turn sent. */
function messagesOf(request: EngineRequest): Array<{ role: string; content: string }> {
  return (request.input as { messages: Array<{ role: string; content: string }> }).messages;
}

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`agent runs over HTTP on ${backend.name}`, backend.reason), () => {
    let server: RunsServer;
    let engine: ScriptedEngine;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      engine = new ScriptedEngine();
      server = await startRunsServer(backend, {
        engine,
        runs: { tools, engines: { "tim-edge": { maxSteps: 3, maxToolCalls: 5 }, "tim-1.5": { model: null } } },
      });
    }, 60_000);
    afterAll(async () => server?.close());

    it("creates a run (202, queued), runs search -> read_page -> answer, and shows the result, usage and steps", async () => {
      engine.queue.push(call("web_search", { query: "loom kv cache" }), call("read_page", { url: "https://docs.example/loom" }), answer("It uses fixed-size pages."));
      const created = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "How does loom keep its KV cache?", tools: ALL_TOOLS } });
      expect(created.status).toBe(202);
      expect(created.body).toEqual({ runId: expect.stringMatching(/^run_[0-9a-f]{32}$/), status: "queued" });
      const run = await settle(server, created.body.runId);
      expect(run).toMatchObject({ runId: created.body.runId, status: "succeeded", engine: "tim", result: { answer: "It uses fixed-size pages." } });
      expect(run.result.reasoning).toContain("Let me check.");
      expect(run.usage).toEqual({ inputTokens: 3 * SCRIPTED_PROMPT_TOKENS, outputTokens: 2 + 2 + 1, durationMs: expect.any(Number) });
      expect(run.error).toBeUndefined();

      const { status, body } = await server.call("GET", `/v1/runs/${created.body.runId}/steps`);
      expect(status).toBe(200);
      expect(body.steps.map((step: any) => [step.kind, step.tool ?? step.toolCalls?.[0]?.name ?? null, step.status])).toEqual([
        ["model", "web_search", "finished"],
        ["tool", "web_search", "finished"],
        ["model", "read_page", "finished"],
        ["tool", "read_page", "finished"],
        ["model", null, "finished"],
      ]);
      expect(body.steps[3].result).toBe(PAGES["https://docs.example/loom"]);
      // The page's text reached the model in the last turn, as the result of its call.
      const last = submitted(engine).at(-1)!;
      expect(messagesOf(last).at(-1)).toMatchObject({ role: "tool", content: PAGES["https://docs.example/loom"] });
      expect(last.priority).toBe(1);

      // The run's tokens are the organization's usage today, one request per model turn.
      const rows = await server.platform.stores.usage.rows(server.owner.organizationId, utcDay(Date.now()));
      expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(3);
      expect(rows.reduce((sum, row) => sum + row.outputTokens, 0)).toBe(5);
    });

    it("feeds a tool's error back to the model as the call's result", async () => {
      engine.queue.push(call("read_page", { url: "https://docs.example/missing" }), answer("The page is missing."));
      const created = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "Read it.", tools: [{ id: "read_page" }] } });
      const run = await settle(server, created.body.runId);
      expect(run).toMatchObject({ status: "succeeded", result: { answer: "The page is missing." } });
      const { body } = await server.call("GET", `/v1/runs/${created.body.runId}/steps`);
      expect(body.steps[1]).toMatchObject({ kind: "tool", status: "failed", error: expect.stringContaining("404 Not Found") });
      expect(messagesOf(submitted(engine).at(-1)!).at(-1)!.content).toContain("Error: could not read https://docs.example/missing: 404 Not Found");
    });

    it("ends within the step budget: the last allowed turn offers no tools, so the run answers", async () => {
      const before = submitted(engine).length;
      engine.queue.push(call("web_search", { query: "a" }), call("web_search", { query: "b" }), answer("Done searching."));
      const created = await server.call("POST", "/v1/runs", { engine: "tim-edge", input: { instructions: "Search forever.", tools: ALL_TOOLS } });
      const run = await settle(server, created.body.runId);
      expect(run).toMatchObject({ status: "succeeded", result: { answer: "Done searching." } });
      const turns = submitted(engine).slice(before);
      expect(turns).toHaveLength(3);
      expect(turns.map((request) => request.constraint?.format.type ?? "free")).toEqual(["tool_calls", "tool_calls", "free"]);
      expect((turns[2]!.input as { tools?: unknown[] }).tools ?? []).toEqual([]);
    });

    it("shapes the answer and the reasoning by their JSON Schemas, and both validate", async () => {
      const answerFormat = { type: "object", properties: { city: { type: "string" }, population: { type: "integer" } }, required: ["city", "population"], additionalProperties: false };
      const reasoningFormat = { type: "object", properties: { steps: { type: "array", items: { type: "string" } } }, required: ["steps"] };
      engine.queue.push(answer('{"city": "Lyon", "population": 522250}'), answer('{"steps": ["recalled the census"]}'));
      const created = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "Third city of France?", answerFormat, reasoningFormat } });
      const run = await settle(server, created.body.runId);
      expect(run.status).toBe("succeeded");
      const ajv = new Ajv();
      expect(ajv.validate(answerFormat, run.result.answer)).toBe(true);
      expect(ajv.validate(reasoningFormat, run.result.reasoning)).toBe(true);
      const [answerTurn, reasoningTurn] = submitted(engine).slice(-2);
      expect(answerTurn!.constraint?.format).toMatchObject({ type: "json_schema", schema: answerFormat });
      expect(reasoningTurn!.constraint?.format).toMatchObject({ type: "json_schema", schema: reasoningFormat });
    });

    it("cancels a queued run at once and a processing run within its engine step", async () => {
      engine.queue.push({ deltas: ["thinking slowly"], pauseBeforeFinishMs: 30_000 });
      const slow = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "Take your time." } });
      const until = Date.now() + 5000;
      while ((await server.call("GET", `/v1/runs/${slow.body.runId}`)).body.status !== "processing") {
        if (Date.now() > until) throw new Error("the run never started");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const started = Date.now();
      const cancelled = await server.call("POST", `/v1/runs/${slow.body.runId}/cancel`);
      expect(cancelled.status).toBe(200);
      const run = await settle(server, slow.body.runId);
      expect(run).toMatchObject({ status: "failed", error: { code: "cancelled" } });
      expect(Date.now() - started).toBeLessThan(5000);

      // A run created and cancelled before a worker takes it never runs.
      await server.runs.worker.stop();
      try {
        const queued = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "Never mind." } });
        const answerNow = await server.call("POST", `/v1/runs/${queued.body.runId}/cancel`);
        expect(answerNow.body).toMatchObject({ status: "failed", error: { code: "cancelled", message: expect.stringContaining("before it started") } });
      } finally {
        server.runs.worker.start();
      }
    });

    it("fails a run that outlives options.timeout with code timeout", async () => {
      engine.queue.push({ deltas: ["..."], pauseBeforeFinishMs: 30_000 });
      const created = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "Slow." }, options: { timeout: 1 } });
      const run = await settle(server, created.body.runId);
      expect(run).toMatchObject({ status: "failed", error: { code: "timeout", message: expect.stringContaining("1 s") } });
      expect(run.usage.durationMs).toBeGreaterThanOrEqual(900);
      expect(run.usage.durationMs).toBeLessThan(10_000);
    });

    it("calls output.callbackUrl when the run ends, signed under the organization's secret, and retries a failing receiver", async () => {
      const secret = await server.platform.stores.webhookSecrets.webhookSecretOf(server.owner.organizationId);
      // Fails twice (500, then 503), then takes it: the third attempt is delivered.
      const receiver = await startWebhookReceiver(() => secret, (index) => (index < 2 ? 500 + index * 3 : 204));
      try {
        engine.queue.push(answer("Called back."));
        const created = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "Call me." }, output: { callbackUrl: receiver.url } });
        const run = await settle(server, created.body.runId);
        const until = Date.now() + 10_000;
        while (receiver.received.length < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(receiver.received).toHaveLength(3);
        for (const received of receiver.received) {
          expect(received.verifyError).toBeUndefined();
          expect(received.verified).toEqual({ runId: run.runId, status: "succeeded", result: run.result, usage: run.usage });
          expect(received.headers["webhook-id"]).toBe(receiver.received[0]!.headers["webhook-id"]);
        }
        let callback: any;
        while (Date.now() < until) {
          callback = (await server.call("GET", `/v1/runs/${run.runId}/steps`)).body.callback;
          if (callback?.status === "delivered") break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(callback).toMatchObject({ url: receiver.url, status: "delivered", attempts: [{ statusCode: 500 }, { statusCode: 503 }, { statusCode: 204 }] });
      } finally {
        await receiver.close();
      }
    });

    it("shows a run only to its organization: 404 for another's, on every route", async () => {
      engine.queue.push(answer("mine"));
      const created = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "Mine." } });
      await settle(server, created.body.runId);
      for (const [method, path] of [["GET", ""], ["GET", "/steps"], ["POST", "/cancel"]] as const) {
        const response = await server.call(method, `/v1/runs/${created.body.runId}${path}`, undefined, server.stranger.key);
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: expect.stringContaining("no run"), field: "id" });
      }
      expect((await server.call("GET", "/v1/runs/run_00000000000000000000000000000000")).status).toBe(404);
      expect((await server.call("GET", `/v1/runs/${created.body.runId}`, undefined, "sk-gw-not-a-key")).status).toBe(401);
    });

    it("refuses bad bodies field by field, naming the field", async () => {
      const cases: Array<[unknown, string, RegExp]> = [
        [{ input: { instructions: "x" } }, "engine", /engine is required/],
        [{ engine: "tim-9000", input: { instructions: "x" } }, "engine", /one of tim, tim-edge, tim-extA, tim-extA-heavy, tim-1\.5/],
        [{ engine: "timini", input: { instructions: "x" } }, "engine", /must be one of/],
        [{ engine: "tim" }, "input", /input is required/],
        [{ engine: "tim", input: {} }, "input.instructions", /input\.instructions or input\.content is required/],
        [{ engine: "tim", input: { instructions: 7 } }, "input.instructions", /must be a string/],
        [{ engine: "tim", input: { instructions: "  " } }, "input.instructions", /must not be empty/],
        [{ engine: "tim", input: { content: [{}] } }, "input.content[0].text", /is required/],
        [{ engine: "tim", input: { content: "text" } }, "input.content", /must be an array/],
        [{ engine: "tim", input: { instructions: "x", tools: [{ id: "shell" }] } }, "input.tools[0].id", /web_search, read_page/],
        [{ engine: "tim", input: { instructions: "x", tools: [{ id: "web_search" }, { id: "web_search" }] } }, "input.tools[1].id", /listed twice/],
        [{ engine: "tim", input: { instructions: "x", tools: [{ id: "web_search", options: { limit: 99 } }] } }, "input.tools[0].options.limit", /from 1 to 10/],
        [{ engine: "tim", input: { instructions: "x", tools: [{ id: "web_search", options: { depth: 2 } }] } }, "input.tools[0].options.depth", /unknown field/],
        [{ engine: "tim", input: { instructions: "x", resources: [1] } }, "input.resources[0]", /must be a string/],
        [{ engine: "tim", input: { instructions: "x", skills: "all" } }, "input.skills", /must be an array/],
        [{ engine: "tim", input: { instructions: "x", agentId: "" } }, "input.agentId", /must not be empty/],
        [{ engine: "tim", input: { instructions: "x", answerFormat: { type: "object", properties: { a: { type: "string", pattern: "[" } } } } }, "input.answerFormat", /input\.answerFormat/],
        [{ engine: "tim", input: { instructions: "x" }, output: { callbackUrl: "ftp://x/" } }, "output.callbackUrl", /http/],
        [{ engine: "tim", input: { instructions: "x" }, output: { callbackUrl: "not a url" } }, "output.callbackUrl", /absolute/],
        [{ engine: "tim", input: { instructions: "x" }, output: { callbackUrl: "https://user:secret@hooks.example/" } }, "output.callbackUrl", /credentials/],
        [{ engine: "tim", input: { instructions: "x" }, output: { callbackUrl: `https://hooks.example/${"a".repeat(2048)}` } }, "output.callbackUrl", /at most 2048/],
        [{ engine: "tim", input: { instructions: "x" }, options: { timeout: 0 } }, "options.timeout", /from 1 to 3600/],
        [{ engine: "tim", input: { instructions: "x" }, options: { timeout: 1.5 } }, "options.timeout", /integer/],
        [{ engine: "tim", input: { instructions: "x" }, options: { max_step_tokens: 100000 } }, "options.max_step_tokens", /from 1 to 16384/],
        [{ engine: "tim", input: { instructions: "x" }, awaitCompletion: true }, "awaitCompletion", /unknown field/],
        [{ engine: "tim", input: { instructions: "x", extra: 1 } }, "input.extra", /unknown field/],
        [{ engine: "tim-1.5", input: { instructions: "x" } }, "engine", /no model to run on/],
        [[1, 2], "body", /JSON object/],
      ];
      for (const [body, field, message] of cases) {
        const response = await server.call("POST", "/v1/runs", body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(response.body.field, JSON.stringify(body)).toBe(field);
        expect(response.body.error, JSON.stringify(body)).toMatch(message);
      }
      const notJson = await server.call("POST", "/v1/runs", "{not json");
      expect(notJson.status).toBe(400);
    });
  });
}

describe("agent runs: the per-organization bound", () => {
  it("refuses a run past maxActivePerOrganization queued or processing with 429, for that organization only", async () => {
    const pglite = TEST_BACKENDS.find((backend) => backend.name === "PGlite")!;
    const server = await startRunsServer(pglite, { runs: { tools, maxActivePerOrganization: 2 } });
    try {
      await server.runs.worker.stop(); // nothing leaves the queue
      const body = { engine: "tim", input: { instructions: "Wait." } };
      const first = await server.call("POST", "/v1/runs", body);
      expect(first.status).toBe(202);
      expect((await server.call("POST", "/v1/runs", body)).status).toBe(202);
      const refused = await server.call("POST", "/v1/runs", body);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatch(/already has 2 runs queued or processing/);
      expect((await server.call("POST", "/v1/runs", body, server.stranger.key)).status).toBe(202);
      expect((await server.runs.store.counts()).queued).toBe(3);
      // An ended run frees its place.
      expect((await server.call("POST", `/v1/runs/${first.body.runId}/cancel`)).body.status).toBe("failed");
      expect((await server.call("POST", "/v1/runs", body)).status).toBe(202);
    } finally {
      await server.close();
    }
  });
});
