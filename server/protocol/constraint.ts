// What a request constrains its output to, for the engine's grammar (engine/grammar): a JSON format
// (response_format), tool calls in the template's tags or Mistral's `[TOOL_CALLS]` (tools with tool_choice auto,
// any/required or a named tool), after free reasoning when thinking is on. Checked when the request is parsed, so that a schema outside the supported
// subset is a 400 naming its keyword and path before anything is generated.
import { type AnswerFormat, type ConstraintSpec, constraintGrammar } from "../../engine/grammar/answer.js";
import type { JsonWhitespace } from "../../engine/grammar/index.js";
import { EmptyGrammarError, GrammarAutomaton } from "../../engine/grammar/automaton.js";
import { SchemaError } from "../../engine/grammar/schema/errors.js";
import { type InternalRequest, ProtocolError } from "./internal.js";
import { DEFAULT_THINK_TAGS, type ThinkTags } from "./think-splitter.js";
import { HERMES_TOOL_CALL_TAGS, type ToolCallTags } from "./tool-calls.js";

/** The tags of the model's chat template that a constraint writes, and the layout of its JSON. */
export interface ConstraintTags {
  /**
   * How the model writes reasoning and calls: "tags" (default; think and tool-call tags) or "harmony" (OpenAI's
   * harmony channels, gpt-oss), whose output is constrained as a whole (engine/grammar/harmony.ts), or "mistral" /
   * "mistral-args" (calls after `[TOOL_CALLS]` as one JSON list, or `NAME[ARGS]{...}` each: engine/grammar/mistral.ts),
   * or "gemma4" (`<|tool_call>call:NAME{...}<tool_call|>`, after Gemma 4's thought channel: engine/grammar/gemma4.ts).
   */
  syntax?: "tags" | "harmony" | "mistral" | "mistral-args" | "gemma4";
  thinkTags?: ThinkTags;
  toolCallTags?: ToolCallTags;
  /** Whitespace allowed between JSON tokens (default "compact"; the server's `jsonWhitespace` setting). */
  whitespace?: JsonWhitespace;
}

/** Where each schema came from in the wire request, for error messages: a param per tool index, and the format's. */
export interface SchemaParams {
  tool(index: number): string;
  responseFormat?: string;
}

/** The constraint of `request`, or undefined when its output is free text. */
export function constraintSpecOf(request: InternalRequest, tags: ConstraintTags = {}): ConstraintSpec | undefined {
  if (tags.syntax === "harmony") return harmonySpecOf(request, tags);
  const mistral = tags.syntax === "mistral" || tags.syntax === "mistral-args";
  const gemma4 = tags.syntax === "gemma4";
  const json = request.responseFormat;
  let format: AnswerFormat | undefined = json;
  const tools = request.tools ?? [];
  const choice = request.toolChoice ?? { type: "auto" };
  // Tools offered and tool_choice none: text that never opens a call (the template still shows the tools).
  if (tools.length > 0 && (choice.type !== "none" || !json)) {
    const calls = {
      tools: tools.map((tool) => ({ name: tool.name, parameters: tool.parameters })),
      choice: choice.type === "any" ? "required" as const : choice.type === "tool" ? { name: choice.name } : choice.type,
      ...(request.parallelToolCalls === false ? { parallel: false } : {}),
      ...(json ? { otherwise: json } : {}),
    };
    format = mistral
      ? { type: "mistral_calls", layout: tags.syntax === "mistral-args" ? "args" : "json", ...calls }
      : gemma4
        ? { type: "gemma4_calls", ...calls }
        : { type: "tool_calls", tags: tags.toolCallTags ?? HERMES_TOOL_CALL_TAGS, ...calls };
  }
  if (!format) return undefined;
  // A Mistral model without reasoning tags does not reason: nothing to let through before the answer.
  if (mistral && !tags.thinkTags) return tags.whitespace && tags.whitespace !== "compact" ? { format, whitespace: tags.whitespace } : { format };
  const think = tags.thinkTags ?? DEFAULT_THINK_TAGS;
  const layout = tags.whitespace && tags.whitespace !== "compact" ? { whitespace: tags.whitespace } : {};
  // Gemma 4 may answer or call without opening its thought channel (llama.cpp's grammar makes the channel optional).
  const thinking = { open: think.open, close: think.close, ...(gemma4 ? { optional: true } : {}) };
  return request.thinking.enabled ? { format, thinking, ...layout } : { format, ...layout };
}

/**
 * A harmony reply's constraint (gpt-oss): with tools offered, its ending is a call as tool_choice says or, under
 * auto or none, the final message; with a response format, the final message is that JSON. Reasoning is part
 * of the reply's syntax, never a separate prefix. Undefined when nothing is constrained.
 */
function harmonySpecOf(request: InternalRequest, tags: ConstraintTags): ConstraintSpec | undefined {
  const json = request.responseFormat;
  const tools = request.tools ?? [];
  const choice = request.toolChoice ?? { type: "auto" };
  const calls = tools.length > 0 && choice.type !== "none";
  // Tools offered with tool_choice none still constrain: the reply ends with a final message, never a call.
  if (tools.length === 0 && !json) return undefined;
  const format: AnswerFormat = {
    type: "harmony",
    tools: calls ? tools.map((tool) => ({ name: tool.name, parameters: tool.parameters })) : [],
    choice: !calls ? "none" : choice.type === "any" ? "required" : choice.type === "tool" ? { name: choice.name } : "auto",
    ...(json ? { answer: json } : {}),
  };
  return tags.whitespace && tags.whitespace !== "compact" ? { format, whitespace: tags.whitespace } : { format };
}

/** Specs already compiled without error, oldest first: at most 256, of at most 64 KiB of JSON each (16 MiB in all). */
const checked = new Set<string>();
const CHECKED_SPECS = 256;
const CHECKED_SPEC_CHARS = 64 * 1024;

/**
 * Compiles the request's constraint once to check it (the engine compiles and caches it again where it runs).
 * @throws ProtocolError (400) naming the schema's param, keyword and path when a schema is unsupported or
 * unsatisfiable.
 */
export function checkConstraint(request: InternalRequest, params: SchemaParams): void {
  const spec = constraintSpecOf(request);
  if (!spec) return;
  // Requests repeat their schemas: compile each one once here (this runs on the server's event loop).
  const key = JSON.stringify(spec);
  if (checked.has(key)) return;
  try {
    new GrammarAutomaton(constraintGrammar(spec));
    if (key.length <= CHECKED_SPEC_CHARS) checked.add(key);
    if (checked.size > CHECKED_SPECS) checked.delete(checked.values().next().value!);
  } catch (error) {
    if (error instanceof SchemaError) {
      const tool = /^\/tools\/(\d+)\/parameters(.*)$/.exec(error.path);
      const param = tool ? params.tool(Number(tool[1])) : params.responseFormat ?? "response_format";
      const pointer = (tool ? tool[2] : error.path) || "the schema root";
      const where = pointer.length > 200 ? `${pointer.slice(0, 197)}...` : pointer;
      throw new ProtocolError("invalid_request", `${param}: ${error.reason} (keyword ${error.keyword}, at ${where})`, param);
    }
    if (error instanceof EmptyGrammarError) throw new ProtocolError("invalid_request", `the requested output format admits no output: ${error.message}`, params.responseFormat ?? "tools");
    // Anything else a client's schema provokes (a limit of the engine's) is still the request's fault, not a 500.
    throw new ProtocolError("invalid_request", `the requested output format cannot be compiled: ${(error as Error).message.slice(0, 300)}`, params.responseFormat ?? "tools");
  }
}
