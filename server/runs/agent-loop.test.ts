// The agent loop resuming a run from an earlier take's step log (its worker died): logged turns are not asked again,
// logged tool results are reused, a tool that was started and never finished runs again with the log saying so, and
// a take that had already answered ends with that answer without a model turn.
import { describe, expect, it } from "vitest";
import { ScriptedEngine } from "../testing/scripted-engine.js";
import { type AgentLoopInput, LeaseLostError, runAgentLoop, type StepLog } from "./agent-loop.js";
import type { RunSpec, RunStep } from "./contract.js";
import { resolveEngines } from "./engines.js";
import type { RunTool } from "./tools/tool.js";
import type { PreparedPrompt } from "../../engine/prompt.js";

const spec: RunSpec = { engine: "tim", instructions: "Find it.", content: [], resources: [], skills: [], tools: [{ id: "web_search", options: {} }], timeoutSeconds: 60 };

function step(index: number, kind: RunStep["kind"], status: RunStep["status"], detail: Record<string, unknown>): RunStep {
  return { index, attempt: 1, kind, status, detail, inputTokens: 10, outputTokens: 5, startedAt: new Date(0) };
}

function setup(history: RunStep[]) {
  const engine = new ScriptedEngine();
  const written: Array<{ kind: string; detail: Record<string, unknown> }> = [];
  let searches = 0;
  const search: RunTool = {
    name: "web_search",
    description: "Search.",
    parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
    run: async () => `result ${++searches}`,
  };
  const log: StepLog = {
    modelTurn: async () => ({
      write: async (status, detail) => void written.push({ kind: status === "finished" ? "model" : "model cut", detail }),
      abandon: async (usage) => void written.push({ kind: "model abandoned", detail: { ...usage } }),
      release: async () => undefined,
    }),
    toolStarted: async (detail) => written.push({ kind: "tool", detail }) - 1,
    toolEnded: async (index, status, detail) => void (written[index] = { kind: `tool ${status}`, detail }),
    note: async (detail) => void written.push({ kind: "note", detail }),
  };
  const input: AgentLoopInput = {
    engine, model: "m", config: resolveEngines().tim, spec, tools: new Map([["web_search", search]]), signal: new AbortController().signal,
    priority: 1, log, history, requestId: () => `r${Math.random()}`,
  };
  return { engine, written, input, searches: () => searches };
}

const call = { id: "call_1", name: "web_search", arguments: { query: "loom" } };

describe("runAgentLoop resuming from a step log", () => {
  it("reuses a logged tool result and asks only for the next turn", async () => {
    const { engine, written, input, searches } = setup([
      step(0, "model", "finished", { turn: 1, text: "", thinking: "", toolCalls: [call], finish: "tool_use" }),
      step(1, "tool", "finished", { callId: "call_1", tool: "web_search", arguments: call.arguments, result: "logged result" }),
      step(2, "note", "finished", { event: "worker_lost" }),
    ]);
    engine.queue.push({ deltas: ["The answer."] });
    expect(await runAgentLoop(input)).toEqual({ answer: "The answer.", reasoning: "" });
    expect(searches()).toBe(0);
    expect(engine.requests).toHaveLength(1);
    const messages = (engine.requests[0]!.input as { messages: Array<{ role: string; content: string }> }).messages;
    expect(messages.at(-1)).toMatchObject({ role: "tool", content: "logged result" });
    expect(written.map((entry) => entry.kind)).toEqual(["model"]);
  });

  it("runs a tool again that was started and never finished, and its new step says so", async () => {
    const { engine, written, input, searches } = setup([
      step(0, "model", "finished", { turn: 1, text: "", thinking: "", toolCalls: [call], finish: "tool_use" }),
      step(1, "tool", "started", { callId: "call_1", tool: "web_search", arguments: call.arguments }),
    ]);
    engine.queue.push({ deltas: ["Done."] });
    expect((await runAgentLoop(input)).answer).toBe("Done.");
    expect(searches()).toBe(1);
    expect(written[0]).toMatchObject({ kind: "tool finished", detail: { callId: "call_1", result: "result 1", reexecuted: expect.stringMatching(/worker was lost/) } });
  });

  it("ends with an answer an earlier take already had, without a model turn", async () => {
    const { engine, input } = setup([
      step(0, "model", "finished", { turn: 1, text: "", thinking: "", toolCalls: [call], finish: "tool_use" }),
      step(1, "tool", "finished", { callId: "call_1", tool: "web_search", arguments: call.arguments, result: "r" }),
      step(2, "model", "finished", { turn: 2, text: "Already answered.", thinking: "", toolCalls: [], finish: "end_turn" }),
    ]);
    expect(await runAgentLoop(input)).toEqual({ answer: "Already answered.", reasoning: "" });
    expect(engine.requests).toHaveLength(0);
  });

  it("asks again for a turn an earlier take cut (its step failed: cancelled, timed out, the engine failed)", async () => {
    const { engine, input } = setup([
      step(0, "model", "failed", { turn: 1, text: "Half an ans", thinking: "", toolCalls: [], finish: "cut", cut: { code: "model_error", message: "the engine failed" } }),
    ]);
    engine.queue.push({ deltas: ["The whole answer."] });
    expect(await runAgentLoop(input)).toEqual({ answer: "The whole answer.", reasoning: "" });
    expect(engine.requests).toHaveLength(1);
  });

  it("writes no step for a turn cut by loom itself (a worker stopping, a lost lease): the turn is abandoned with what the engine computed", async () => {
    const { engine, input, written } = setup([]);
    const controller = new AbortController();
    engine.queue.push({ deltas: ["Thinking", " slowly"], pauseBeforeFinishMs: 30_000 });
    const running = runAgentLoop({ ...input, signal: controller.signal });
    while (engine.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new LeaseLostError("the worker is shutting down"));
    await expect(running).rejects.toBeInstanceOf(LeaseLostError);
    expect(written).toEqual([{ kind: "model abandoned", detail: expect.objectContaining({ completionTokens: 2 }) }]);
  });
});

describe("runAgentLoop's model turns", () => {
  it("hands each turn's engine the prompt its admission prepared (counted once, not prepared again)", async () => {
    const { engine, input } = setup([]);
    const prepared: PreparedPrompt = { tokens: [1, 2, 3] };
    let turns = 0;
    input.log = { ...input.log, modelTurn: async (request) => ({ ...(await setup([]).input.log.modelTurn(request)), ...(++turns === 1 ? { prepared } : {}) }) };
    const toolCall = `<tool_call>\n${JSON.stringify({ name: call.name, arguments: call.arguments })}\n</tool_call>`;
    engine.queue.push({ deltas: ["Let me look.", toolCall] }, { deltas: ["Done."] });
    expect((await runAgentLoop(input)).answer).toBe("Done.");
    // The first turn was admitted with a prepared prompt, the second without one (its engine then prepares it).
    expect(engine.handed).toEqual([prepared, undefined]);
  });
});
