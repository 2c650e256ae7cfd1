// The agent loop on a real engine thread with a random-weight model that has Qwen3's tokenizer and tool-calling
// template (tiny-qwen3): whatever the weights write, the grammar keeps every tool call well-formed (a known tool,
// arguments that validate against its schema), and the run ends within its budgets; a run whose first prompt the
// context cannot hold is refused at creation, where the engine counts it for admission.
import Ajv from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerEngine } from "../../engine/host/worker-engine.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { TEST_BACKENDS } from "../platform/testing/test-databases.js";
import { fixedTools } from "./testing/fixed-tools.js";
import { type RunsServer, startRunsServer } from "./testing/runs-server.js";

const pglite = TEST_BACKENDS.find((backend) => backend.name === "PGlite")!;

describe("agent runs on a real engine (tiny-qwen3, random weights)", () => {
  let server: RunsServer;
  let worker: WorkerEngine;

  beforeAll(async () => {
    const path = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
    worker = await WorkerEngine.start(path, { load: { contextSize: 2048, threads: 2, kvCache: { bytes: 32 * 1024 * 1024 } } });
    server = await startRunsServer(pglite, {
      engine: worker,
      model: worker.model,
      runs: {
        tools: fixedTools,
        // Two forced tool turns, then free ones: tool calls are sure to be made, and the budget is sure to end the run.
        engines: { tim: { forcedToolTurns: 2, maxSteps: 4, maxToolCalls: 4, maxStepTokens: 128, temperature: 1 }, "tim-extA": { forcedToolTurns: 1, maxSteps: 3, maxStepTokens: 256, temperature: 1 } },
      },
    });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await worker?.close();
  });

  for (const engine of ["tim", "tim-extA"] as const) {
    it(`${engine}: tool calls are well-formed and the loop ends within its budgets`, async () => {
      const tools = fixedTools;
      const schemas = Object.fromEntries(Object.entries(tools).map(([name, make]) => [name, make({}).parameters]));
      const created = await server.call("POST", "/v1/runs", { engine, input: { instructions: "Find out how loom stores its KV cache.", tools: [{ id: "web_search" }, { id: "read_page" }] } });
      expect(created.status).toBe(202);
      let run: any;
      const until = Date.now() + 90_000;
      do {
        await new Promise((resolve) => setTimeout(resolve, 100));
        run = (await server.call("GET", `/v1/runs/${created.body.runId}`)).body;
        if (Date.now() > until) throw new Error(`the run is still ${run.status}`);
      } while (run.status === "queued" || run.status === "processing");

      const { steps } = (await server.call("GET", `/v1/runs/${created.body.runId}/steps`)).body;
      const turns = steps.filter((step: any) => step.kind === "model");
      const calls = turns.flatMap((step: any) => step.toolCalls);
      const limits = engine === "tim" ? { steps: 4, forced: 2, calls: 4 } : { steps: 3, forced: 1, calls: 16 };
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(turns.length).toBeLessThanOrEqual(limits.steps);
      // The forced turns called tools, and every call names a tool of the run with arguments valid for it.
      for (const turn of turns.slice(0, limits.forced)) expect(turn.toolCalls.length).toBeGreaterThan(0);
      expect(calls.length).toBeGreaterThanOrEqual(limits.forced);
      // A call cut by the turn's token limit is not run (its tool step says so); every other one validates.
      const toolSteps = steps.filter((step: any) => step.kind === "tool");
      const cut = new Set(toolSteps.filter((step: any) => step.notRun && /cut off/.test(step.error)).map((step: any) => step.callId));
      const ajv = new Ajv();
      for (const call of calls) {
        expect(Object.keys(schemas)).toContain(call.name);
        if (!cut.has(call.id)) expect(ajv.validate(schemas[call.name]!, call.arguments), JSON.stringify(call)).toBe(true);
      }
      expect(cut.size).toBeLessThan(calls.length);
      // Each call has its tool step, finished or failed (the reader fails on URLs it does not know).
      expect(toolSteps.map((step: any) => step.callId)).toEqual(calls.slice(0, toolSteps.length).map((call: any) => call.id));
      expect(toolSteps.every((step: any) => step.status === "finished" || step.status === "failed")).toBe(true);
      expect(run.usage.outputTokens).toBeGreaterThan(0);
      expect(run.usage.outputTokens).toBeLessThanOrEqual(turns.length * (engine === "tim" ? 128 : 256));
    }, 120_000);
  }

  it("refuses at creation, naming input, a run whose first prompt the model's context cannot hold, and stores none", async () => {
    const runs = async () => (await server.runs.store.pageOfOrganization(server.owner.organizationId, { limit: 50 })).items.length;
    const before = await runs();
    // Some 5,000 words against a context of 2,048 tokens: the engine that counts the first turn's prompt refuses it.
    const created = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "The loom docs say: ".concat("blocks of keys and values ".repeat(1000)) } });
    expect(created.status).toBe(400);
    expect(created.body).toEqual({ error: expect.stringMatching(/context/), field: "input" });
    expect(await runs()).toBe(before);
  });
});
