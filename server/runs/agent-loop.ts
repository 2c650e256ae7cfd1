// The agent loop of one run, on the serving engine directly: the task as a conversation, then model turns whose tool
// calls are constrained by grammar (the structured-output machinery), tools run and their results fed back, until the
// model answers without a tool or a budget ends the run. Every turn and tool call goes to the step log before the loop
// goes on, so a run taken again after its worker died resumes from its log instead of running its tools twice.
import type { ServingEngine } from "../../engine/engine.js";
import type { ChatMessage, ChatToolCall } from "../../engine/chat/messages.js";
import type { PreparedPrompt } from "../../engine/prompt.js";
import type { InternalRequest, InternalStopReason, InternalToolCall, InternalUsage, ToolChoice } from "../protocol/internal.js";
import { type OutputFormat, runRequest } from "../protocol/run.js";
import type { RunErrorCode, RunResult, RunSpec, RunStep } from "./contract.js";
import type { AgentEngine } from "./engines.js";
import type { RunTool } from "./tools/tool.js";

/** A run that cannot go on: it fails with `code`. */
export class RunFailure extends Error {
  override readonly name = "RunFailure";
  constructor(readonly code: RunErrorCode, message: string) {
    super(message);
  }
}

/** The run is no longer this worker's (its lease ran out and another took it, or it ended): stop without a word. */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
}

/** Where the loop writes its steps (the run store, for the run's current take). Each throws LeaseLostError. */
export interface StepLog {
  /**
   * Admits a model turn as a request of the run's organization (its limits and prepaid balance) before it reaches the
   * engine; the step is written through what it returns.
   * @throws RunFailure when a limit or the balance refuses the turn.
   */
  modelTurn(request: InternalRequest): Promise<ModelStep>;
  /** Writes a tool step as `started`; returns its index for toolEnded. */
  toolStarted(detail: Record<string, unknown>): Promise<number>;
  toolEnded(index: number, status: "finished" | "failed", detail: Record<string, unknown>, durationMs: number): Promise<void>;
  note(detail: Record<string, unknown>): Promise<void>;
}

/** A model turn admitted: its step is written once, with what the engine computed, or the admission given back. */
export interface ModelStep {
  /** The turn's prompt as admission prepared it to count it, on the engine the turn runs on: it runs as it is. */
  readonly prepared?: PreparedPrompt;
  /**
   * Writes the turn's step, `finished`, or `failed` when it was cut for the run's own reason (cancel, timeout, an
   * engine error), with the tokens the engine computed; the organization is billed those with the step.
   */
  write(status: "finished" | "failed", detail: Record<string, unknown>, usage: InternalUsage, durationMs: number): Promise<void>;
  /**
   * The turn was cut by loom itself (its worker stopping, or losing the run): no step is written, and the turn is not
   * billed when a later take will ask for it again (its admission is given back); only a run that has ended (no take
   * will) is billed `usage`, what the engine computed.
   */
  abandon(usage: InternalUsage): Promise<void>;
  /** The turn never reached the engine: its admission is given back and nothing is written. */
  release(): Promise<void>;
}

/** What one run's loop needs. */
export interface AgentLoopInput {
  engine: ServingEngine;
  /** The served model's slug (for the request's record; the engine serves one model). */
  model: string;
  /** How the model's output is read (server/models.ts outputFormatOf); default tags. */
  outputFormat?: OutputFormat;
  config: AgentEngine;
  spec: RunSpec;
  /** The run's tools by name. */
  tools: ReadonlyMap<string, RunTool>;
  /** Aborted with a RunFailure as its reason on cancel or timeout. */
  signal: AbortSignal;
  /** The engine's priority class for the run's turns. */
  priority: number;
  log: StepLog;
  /** Steps earlier takes of the run wrote (empty on the first). */
  history: readonly RunStep[];
  /** A unique engine request id per turn. */
  requestId: () => string;
}

/** What the loop tells the model about its job, before the run's skills. */
export const AGENT_SYSTEM_PROMPT =
  "You are an agent that completes the user's task. Use the tools when they help: search for facts, read pages for " +
  "details. When you know the answer, reply with it directly and do not call a tool.";

/** Asked after the final answer when the run has a reasoningFormat. */
export const REASONING_PROMPT = "Describe how you reached this answer, as JSON in the required format.";

/** Longest tool result given back to the model, in characters. */
const MAX_TOOL_RESULT_CHARS = 20_000;

/** One model turn's output. */
interface Turn {
  thinking: string;
  text: string;
  calls: InternalToolCall[];
  reason: InternalStopReason;
  usage: InternalUsage;
}

/**
 * Runs the agent to its answer.
 * @throws RunFailure (the run fails with its code), LeaseLostError (stop; the run is another worker's).
 */
export async function runAgentLoop(input: AgentLoopInput): Promise<RunResult> {
  const { config, spec } = input;
  const messages = initialMessages(spec);
  const reasoning: string[] = [];
  const state = { turns: 0, toolCalls: 0 };
  const maxTokens = Math.min(config.maxStepTokens, spec.maxStepTokens ?? Number.POSITIVE_INFINITY);
  // An earlier take that got as far as the answer (its worker died before the run ended) is not asked again.
  const answered = await replayHistory(input, messages, reasoning, state);
  if (answered) return finalResult(input, messages, answered, reasoning, maxTokens);

  for (;;) {
    const last = state.turns >= config.maxSteps - 1;
    const toolsAllowed = input.tools.size > 0 && !last && state.toolCalls < config.maxToolCalls;
    const choice: ToolChoice = !toolsAllowed ? { type: "none" } : state.turns < config.forcedToolTurns ? { type: "any" } : { type: "auto" };
    const number = state.turns + 1;
    const turn = await modelTurn(input, messages, choice, maxTokens, spec.answerFormat, (done) =>
      ({ turn: number, toolChoice: choice.type, thinking: done.thinking, text: done.text, toolCalls: done.calls.map(callRecord), finish: done.reason }));
    state.turns = number;
    if (turn.thinking) reasoning.push(turn.thinking);
    if (turn.calls.length === 0 && turn.reason === "max_tokens" && turn.text.trim() === "") {
      throw new RunFailure("step_budget", `the model spent its whole turn (${maxTokens} tokens) before answering or calling a tool; raise options.max_step_tokens`);
    }
    if (turn.calls.length === 0) return finalResult(input, messages, turn, reasoning, maxTokens);
    if (!toolsAllowed) throw new RunFailure("step_budget", `the model still called a tool on its last allowed turn (${config.maxSteps} turns, ${config.maxToolCalls} tool calls)`);
    if (turn.text.trim()) reasoning.push(turn.text.trim());
    messages.push(assistantMessage(turn));
    // Cut by the token limit, the last call may stop inside its arguments: it is not run, and the model is told.
    const cut = turn.reason === "max_tokens" ? turn.calls.at(-1) : undefined;
    for (const call of turn.calls) {
      const result = call === cut
        ? await refuseTool(input, call, `Not run: this call was cut off at the turn's limit of ${maxTokens} tokens. Call again with shorter arguments.`)
        : state.toolCalls < config.maxToolCalls
          ? await runTool(input, call, false)
          : await refuseTool(input, call, "Not run: the run's tool-call budget is spent. Answer with what you have.");
      state.toolCalls += 1;
      messages.push({ role: "tool", tool_call_id: call.id, name: call.name, content: result });
    }
  }
}

/** The task as a conversation: the system prompt with the run's skills, then instructions, content and resources. */
export function initialMessages(spec: RunSpec): ChatMessage[] {
  const system = spec.skills.length > 0 ? `${AGENT_SYSTEM_PROMPT}\n\nSkills:\n${spec.skills.map((skill) => `- ${skill}`).join("\n")}` : AGENT_SYSTEM_PROMPT;
  const parts = [...(spec.instructions !== undefined ? [spec.instructions] : []), ...spec.content];
  if (spec.resources.length > 0) parts.push(`Resources:\n${spec.resources.map((resource) => `- ${resource}`).join("\n")}`);
  return [{ role: "system", content: system }, { role: "user", content: parts.join("\n\n") }];
}

/**
 * Rebuilds the conversation from an earlier take's steps: its turns and the results of the tools it ran. A tool call
 * whose result was never written (its worker died while the tool ran) is run again, and the log says so.
 */
async function replayHistory(input: AgentLoopInput, messages: ChatMessage[], reasoning: string[], state: { turns: number; toolCalls: number }): Promise<Turn | undefined> {
  const results = new Map<string, RunStep>();
  for (const step of input.history) if (step.kind === "tool" && typeof step.detail.callId === "string") results.set(step.detail.callId, step);
  for (const step of input.history) {
    // A cut turn (its step `failed`: cancelled, timed out, the engine failed) gave the conversation nothing.
    if (step.kind !== "model" || step.status !== "finished" || step.detail.purpose === "reasoning") continue;
    const turn = { thinking: String(step.detail.thinking ?? ""), text: String(step.detail.text ?? ""), calls: (step.detail.toolCalls as InternalToolCall[] | undefined) ?? [] };
    state.turns += 1;
    if (turn.thinking) reasoning.push(turn.thinking);
    // A turn without calls answered: the run was about to end with it.
    if (turn.calls.length === 0) {
      const usage = { promptTokens: step.inputTokens, cachedTokens: 0, completionTokens: step.outputTokens };
      return { ...turn, reason: (step.detail.finish as InternalStopReason | undefined) ?? "end_turn", usage };
    }
    if (turn.text.trim()) reasoning.push(turn.text.trim());
    messages.push(assistantMessage(turn));
    for (const call of turn.calls) {
      const written = results.get(call.id);
      state.toolCalls += 1;
      const content = written && written.status !== "started"
        ? String(written.detail.result ?? written.detail.error ?? "")
        : await runTool(input, call, written !== undefined);
      messages.push({ role: "tool", tool_call_id: call.id, name: call.name, content });
    }
  }
  return undefined;
}

/** One model turn on the engine, written to the step log as `describe` says; aborted with the run. */
async function modelTurn(input: AgentLoopInput, messages: ChatMessage[], choice: ToolChoice, maxTokens: number, answerFormat: Record<string, unknown> | undefined, describe: (turn: Turn) => Record<string, unknown>): Promise<Turn> {
  const request = toolTurnRequest(input, messages, choice, maxTokens, answerFormat);
  return collectTurn(input, request, describe);
}

/** A turn's request offering `choice` of the run's tools, and with an answerFormat, constrained to it. */
function toolTurnRequest(input: Pick<AgentLoopInput, "config" | "model" | "tools">, messages: readonly ChatMessage[], choice: ToolChoice, maxTokens: number, answerFormat: Record<string, unknown> | undefined): InternalRequest {
  const offered = choice.type === "none" ? [] : [...input.tools.values()];
  // Reasoning may take half of the turn, so that a call or an answer always has room after it.
  return turnRequest(input, [...messages], maxTokens, {
    ...(offered.length > 0 ? { tools: offered.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })), toolChoice: choice } : {}),
    ...(answerFormat ? { responseFormat: { type: "json_schema" as const, schema: answerFormat } } : {}),
    thinking: input.config.thinking ? { enabled: true, budgetTokens: Math.max(1, Math.floor(maxTokens / 2)) } : { enabled: false },
  });
}

/**
 * The request of a run's first model turn (the task, the tools its engine offers first): what creating a run must be
 * able to pay for. Later turns are longer (the conversation grows) and are admitted each on its own.
 */
export function firstTurnRequest(input: Pick<AgentLoopInput, "config" | "model" | "tools" | "spec">): InternalRequest {
  const { config, spec } = input;
  const maxTokens = Math.min(config.maxStepTokens, spec.maxStepTokens ?? Number.POSITIVE_INFINITY);
  const toolsAllowed = input.tools.size > 0 && config.maxSteps > 1 && config.maxToolCalls > 0;
  const choice: ToolChoice = !toolsAllowed ? { type: "none" } : config.forcedToolTurns > 0 ? { type: "any" } : { type: "auto" };
  return toolTurnRequest(input, initialMessages(spec), choice, maxTokens, spec.answerFormat);
}

/** A model turn's request: the run's model and temperature, `maxTokens`, and what the turn adds (tools, format, thinking). */
function turnRequest(input: Pick<AgentLoopInput, "config" | "model">, messages: ChatMessage[], maxTokens: number, turn: Pick<InternalRequest, "thinking"> & Partial<InternalRequest>): InternalRequest {
  return {
    format: "openai",
    model: input.model,
    messages,
    maxTokens,
    sampling: { temperature: input.config.temperature },
    stop: [],
    stream: false,
    includeUsage: false,
    autoCompaction: true,
    ...turn,
  };
}

/**
 * Runs a turn's request, admitted first (StepLog.modelTurn), and gathers its output. Its step is written however it
 * ends, with what the engine computed: `finished`, or `failed` when it was cut (then the run's own reason, a cancel or
 * a timeout, is thrown) or the engine failed (the run fails with `model_error`); but a turn cut by loom itself (its
 * worker stopping or losing the run: LeaseLostError) writes nothing, and the take that runs next asks for it again.
 */
async function collectTurn(input: AgentLoopInput, request: InternalRequest, describe: (turn: Turn) => Record<string, unknown>): Promise<Turn> {
  input.signal.throwIfAborted();
  const step = await input.log.modelTurn(request);
  const started = performance.now();
  let computed: InternalUsage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
  let running: ReturnType<typeof runRequest>;
  try {
    input.signal.throwIfAborted();
    // A turn's budget is a ceiling: a long conversation gets what the context still holds.
    running = runRequest(input.engine, input.requestId(), request, { ...input.outputFormat, priority: input.priority, maxTokensUpToContext: true, ...(step.prepared ? { prepared: step.prepared } : {}), onUsage: (usage) => { computed = usage; } });
  } catch (error) {
    await step.release();
    throw error;
  }
  const abort = () => running.abort();
  input.signal.addEventListener("abort", abort, { once: true });
  const turn: Turn = { thinking: "", text: "", calls: [], reason: "end_turn", usage: computed };
  let failure: unknown;
  try {
    for await (const event of running) {
      if (event.type === "thinking") turn.thinking += event.text;
      else if (event.type === "text") turn.text += event.text;
      else if (event.type === "tool_call") turn.calls.push({ id: event.id, name: event.name, arguments: event.arguments });
      else if (event.type === "finish") {
        turn.reason = event.reason;
        turn.usage = event.usage;
      } else if (event.type === "error") failure = new RunFailure("model_error", `the model could not run the turn: ${event.error.message}`);
    }
  } catch (error) {
    failure = error;
  } finally {
    input.signal.removeEventListener("abort", abort);
  }
  // An aborted request ends without a finish: the run's own reason (cancel, timeout, a worker stopping) says why.
  if (failure === undefined && input.signal.aborted) failure = input.signal.reason;
  const durationMs = Math.round(performance.now() - started);
  if (failure === undefined) {
    await step.write("finished", describe(turn), turn.usage, durationMs);
    return turn;
  }
  // Cut by loom's own stop or a lost lease: the customer does not pay for a turn loom runs again.
  if (failure instanceof LeaseLostError) {
    await step.abandon(computed);
    throw failure;
  }
  // Cut for the run's own reason: billed and logged for what the engine computed.
  const cut = failure instanceof RunFailure ? { code: failure.code, message: failure.message } : { code: "stopped", message: (failure as Error).message ?? String(failure) };
  await step.write("failed", { ...describe(turn), finish: "cut", cut }, computed, durationMs);
  throw failure;
}

/** The run's result from its answering turn (and, with a reasoningFormat, one more turn shaping the reasoning). */
async function finalResult(input: AgentLoopInput, messages: ChatMessage[], turn: Turn, reasoning: string[], maxTokens: number): Promise<RunResult> {
  const { spec } = input;
  let answer: unknown = turn.text.trim();
  if (spec.answerFormat) answer = parseJson(turn, "answer", maxTokens);
  if (!spec.reasoningFormat) return { answer, reasoning: reasoning.join("\n\n") };
  const shapedBefore = input.history.find((step) => step.kind === "model" && step.status === "finished" && step.detail.purpose === "reasoning");
  if (shapedBefore) {
    const reason = (shapedBefore.detail.finish as InternalStopReason | undefined) ?? "end_turn";
    return { answer, reasoning: parseJson({ thinking: "", text: String(shapedBefore.detail.text ?? ""), calls: [], reason, usage: turn.usage }, "reasoning", maxTokens) };
  }
  const request = turnRequest(
    input,
    [...messages, { role: "assistant", content: turn.text, ...(turn.thinking ? { reasoning_content: turn.thinking } : {}) }, { role: "user", content: REASONING_PROMPT }],
    maxTokens,
    { responseFormat: { type: "json_schema", schema: spec.reasoningFormat }, thinking: { enabled: false } },
  );
  const shaped = await collectTurn(input, request, (done) => ({ purpose: "reasoning", text: done.text, finish: done.reason }));
  return { answer, reasoning: parseJson(shaped, "reasoning", maxTokens) };
}

/** The JSON a constrained turn wrote; cut short by the token limit, the run fails with step_budget. */
function parseJson(turn: Turn, what: string, maxTokens: number): unknown {
  if (turn.reason === "max_tokens") throw new RunFailure("step_budget", `the ${what} did not fit in the turn's token budget (${maxTokens}); raise options.max_step_tokens`);
  try {
    return JSON.parse(turn.text);
  } catch (error) {
    throw new RunFailure("model_error", `the model's ${what} is not the requested JSON: ${(error as Error).message}`);
  }
}

/** Runs one tool call with the step log around it; its error (or an unknown tool) becomes the result text. */
async function runTool(input: AgentLoopInput, call: InternalToolCall, again: boolean): Promise<string> {
  const tool = input.tools.get(call.name);
  const detail = { callId: call.id, tool: call.name, arguments: call.arguments, ...(again ? { reexecuted: "an earlier take started this call and its worker was lost before the result was written" } : {}) };
  const index = await input.log.toolStarted(detail);
  const started = performance.now();
  let result: string;
  let failed = false;
  try {
    if (!tool) throw new Error(`there is no tool named '${call.name}'; the tools are: ${[...input.tools.keys()].join(", ")}`);
    result = await tool.run(call.arguments, { signal: input.signal });
  } catch (error) {
    input.signal.throwIfAborted();
    failed = true;
    result = `Error: ${(error as Error).message}`;
  }
  if (result.length > MAX_TOOL_RESULT_CHARS) result = `${result.slice(0, MAX_TOOL_RESULT_CHARS)}\n[truncated at ${MAX_TOOL_RESULT_CHARS} characters]`;
  await input.log.toolEnded(index, failed ? "failed" : "finished", failed ? { ...detail, error: result } : { ...detail, result }, Math.round(performance.now() - started));
  return result;
}

/** A call that is not run, logged as a failed tool step whose error tells the model why. */
async function refuseTool(input: AgentLoopInput, call: InternalToolCall, reason: string): Promise<string> {
  const detail = { callId: call.id, tool: call.name, arguments: call.arguments };
  const index = await input.log.toolStarted(detail);
  await input.log.toolEnded(index, "failed", { ...detail, error: reason, notRun: true }, 0);
  return reason;
}

function assistantMessage(turn: { thinking: string; text: string; calls: InternalToolCall[] }): ChatMessage {
  return {
    role: "assistant",
    content: turn.text,
    ...(turn.thinking ? { reasoning_content: turn.thinking } : {}),
    tool_calls: turn.calls.map((call): ChatToolCall => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })),
  };
}

function callRecord(call: InternalToolCall): Record<string, unknown> {
  return { id: call.id, name: call.name, arguments: call.arguments };
}
