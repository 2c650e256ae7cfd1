// Parses a Responses API request body (POST /v1/responses) into the InternalRequest and the state the adapter keeps
// with it (ResponsesState: the input items, instructions, storage, and what the response object echoes). Every
// rejection is a ProtocolError naming the field; features this server does not implement are refused, never ignored.
import { checkConstraint } from "../../protocol/constraint.js";
import { checkToolsLimits, REQUEST_LIMITS } from "../../protocol/request-limits.js";
import { ProtocolError, type InternalRequest, type ServedModels, type ToolChoice, type ToolDefinition } from "../../protocol/internal.js";
import {
  describe,
  invalid,
  isObject,
  isUnset,
  optionalBoolean,
  optionalInteger,
  optionalNumberInRange,
  optionalObject,
  optionalString,
  own,
  quote,
  quoteList,
  requireObject,
  requireString,
  unsupported,
  type JsonObject,
} from "../openai/fields.js";
import { parseModel } from "../openai/parse.js";
import { REASONING_EFFORTS, thinkingOfEffort } from "../openai/reasoning-effort.js";
import { checkPromptCacheHints, checkServiceTier } from "../openai/top-level.js";
import { parseGenerationExtensions } from "../extensions.js";
import { parseMetadata } from "../openai/metadata.js";
import { ItemIds, chatMessagesOf, parseInput, type ConversationImages, type ConversationItem, type ImageInput, type InputItem } from "./items.js";
import type { JsonRecord } from "./store.js";

export { REASONING_EFFORTS } from "../openai/reasoning-effort.js";

/** What the Responses adapter keeps with a request, from parsing to the stored response. */
export interface ResponsesState {
  /** This request's own input items (references resolved once it is prepared). */
  input: InputItem[];
  instructions?: string;
  previousResponseId?: string;
  /** Keep the response (default true, as OpenAI's API). */
  store: boolean;
  /** Fields the response object repeats, as the client sent them (normalised). */
  echo: ResponseEcho;
  /** Whether the model takes images (and its slug, for the refusal), for the stored conversation's images too. */
  images: ImageInput;
  /** Set once the request is prepared: whose it is, and the stored conversation it continues. */
  owner?: string;
  earlier?: ConversationItem[];
}

/** The request's settings as the response object shows them. */
export interface ResponseEcho {
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  temperature: number;
  top_p: number;
  text: { format: JsonRecord };
  tool_choice: unknown;
  tools: JsonRecord[];
  truncation: "auto" | "disabled";
  user: string | null;
}

/** The top-level fields this server reads; anything else is refused as OpenAI refuses it. */
const READ = [
  "model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "tools", "tool_choice", "parallel_tool_calls", "text",
  "reasoning", "metadata", "store", "previous_response_id", "stream", "stream_options", "truncation", "user", "safety_identifier",
  "include", "background", "conversation", "prompt", "max_tool_calls", "top_logprobs", "prompt_cache_key", "prompt_cache_retention",
  "prompt_cache_options", "service_tier", "context_management", "moderation",
  // vLLM's and llama.cpp's extensions (server/adapters/openai/extensions.ts).
  "ignore_eos", "min_tokens",
];

/** OpenAI's rule for function and format names. */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Built-in tool types of OpenAI's API, which this server does not have. */
const BUILT_IN_TOOLS = [
  "web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11", "file_search", "computer", "computer_use_preview",
  "code_interpreter", "image_generation", "local_shell", "shell", "apply_patch", "mcp", "custom", "tool_search",
];

/**
 * Validates a Responses request and maps it to an InternalRequest whose `wireState` is the ResponsesState. Without
 * `previous_response_id` or item references its messages are complete; with them, `continueConversation` completes
 * them once the stored items are read.
 * @param responseId the id the response will have: its input items are named after it (ItemIds).
 * @throws ProtocolError "invalid_request" (400) naming the field, or "not_found" (404) for an unknown model.
 */
export function parseResponsesRequest(body: unknown, models: ServedModels, responseId?: string): InternalRequest {
  if (!isObject(body)) throw new ProtocolError("invalid_request", `The request body must be a JSON object, got ${describe(body)}`);
  for (const key of Object.keys(body)) {
    if (!READ.includes(key)) throw new ProtocolError("invalid_request", `Unrecognized request argument supplied: ${quote(key)}`);
  }
  const model = parseModel(own(body, "model"), models);
  rejectUnsupported(body);
  const images: ImageInput = { model, vision: models.hasVision(model, "openai") };
  const input = parseInput(own(body, "input"), new ItemIds(responseId), images);
  const instructions = optionalString(own(body, "instructions"), "instructions");
  const previousResponseId = optionalString(own(body, "previous_response_id"), "previous_response_id");
  if (previousResponseId !== undefined && !/^resp_[A-Za-z0-9]{1,128}$/.test(previousResponseId)) invalid("previous_response_id", "a response id (resp_...)", previousResponseId);
  const store = optionalBoolean(own(body, "store"), "store") ?? true;
  const stream = optionalBoolean(own(body, "stream"), "stream") ?? false;
  parseStreamOptions(own(body, "stream_options"), stream);
  const maxTokens = optionalInteger(own(body, "max_output_tokens"), "max_output_tokens", "a positive integer", 1);
  const temperature = optionalNumberInRange(own(body, "temperature"), "temperature", 0, 2);
  const topP = optionalNumberInRange(own(body, "top_p"), "top_p", 0, 1);
  const { tools, wireTools } = parseTools(own(body, "tools"));
  const toolChoice = parseToolChoice(own(body, "tool_choice"), tools);
  const parallelToolCalls = optionalBoolean(own(body, "parallel_tool_calls"), "parallel_tool_calls");
  const { format, wireFormat } = parseTextFormat(own(body, "text"));
  const reasoning = parseReasoning(own(body, "reasoning"));
  const truncation = own(body, "truncation");
  if (!isUnset(truncation) && truncation !== "auto" && truncation !== "disabled") invalid("truncation", "'auto' or 'disabled'", truncation);
  const metadata = parseMetadata(own(body, "metadata"));
  // Both checked: `??` alone would let a malformed safety_identifier through beside a user.
  const safetyIdentifier = optionalString(own(body, "safety_identifier"), "safety_identifier");
  const user = optionalString(own(body, "user"), "user") ?? safetyIdentifier;

  const effort = reasoning?.effort ?? null;
  const thinking = effort === null ? { enabled: false } : thinkingOfEffort(effort, "reasoning.effort", { models, model, maxTokens });
  const logprobs = parseLogprobs(body);
  const extensions = parseGenerationExtensions(body, maxTokens, "max_output_tokens");
  const state: ResponsesState = {
    input,
    images,
    store,
    echo: {
      instructions: instructions ?? null,
      max_output_tokens: maxTokens ?? null,
      metadata,
      parallel_tool_calls: parallelToolCalls ?? true,
      previous_response_id: previousResponseId ?? null,
      reasoning: { effort, summary: reasoning?.summary ?? null },
      temperature: temperature ?? 1,
      top_p: topP ?? 1,
      text: { format: wireFormat },
      tool_choice: wireToolChoice(toolChoice),
      tools: wireTools,
      truncation: truncation === "auto" ? "auto" : "disabled",
      user: user ?? null,
    },
  };
  if (instructions !== undefined) state.instructions = instructions;
  if (previousResponseId !== undefined) state.previousResponseId = previousResponseId;

  const pending: ConversationImages = { ...images, pending: [] };
  const request: InternalRequest = {
    format: "openai",
    model,
    messages: previousResponseId === undefined && !needsStore(input) ? chatMessagesOf(instructions, { earlier: [], input: input as ConversationItem[] }, pending) : [],
    sampling: {},
    stop: [],
    stream,
    includeUsage: false,
    thinking,
    // truncation "auto" lets the engine drop middle turns to fit the context; "disabled" (the default) is a 400.
    autoCompaction: truncation === "auto",
    wireState: state,
  };
  if (pending.pending.length > 0) request.images = pending.pending;
  if (temperature !== undefined) request.sampling.temperature = temperature;
  if (topP !== undefined) request.sampling.topP = topP;
  if (tools) request.tools = tools;
  if (toolChoice) request.toolChoice = toolChoice;
  if (parallelToolCalls === false) request.parallelToolCalls = false;
  if (format) request.responseFormat = format;
  checkConstraint(request, { tool: (index) => `tools[${index}].parameters`, responseFormat: "text.format.schema" });
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  if (user !== undefined) request.userId = user;
  // A gateway's routing affinity key (checkPromptCacheHints has checked it is a string).
  const cacheKey = own(body, "prompt_cache_key");
  if (typeof cacheKey === "string" && cacheKey !== "") request.cacheKey = cacheKey;
  if (logprobs) request.logprobs = logprobs;
  Object.assign(request, extensions);
  return request;
}

/**
 * `include: ["message.output_text.logprobs"]` with `top_logprobs` (0-20): each output_text part carries its tokens'
 * log-probabilities. `top_logprobs` without the include asks for nothing and is refused, naming it.
 */
function parseLogprobs(body: JsonObject): InternalRequest["logprobs"] {
  const top = optionalInteger(own(body, "top_logprobs"), "top_logprobs", "an integer between 0 and 20", 0, 20);
  const include = own(body, "include");
  const wanted = Array.isArray(include) && include.includes(OUTPUT_TEXT_LOGPROBS);
  if (!wanted) {
    if (top !== undefined && top > 0) unsupported("top_logprobs", `top_logprobs needs include: ['${OUTPUT_TEXT_LOGPROBS}'] (the log-probabilities are returned only then)`);
    return undefined;
  }
  return { top: top ?? 0 };
}

/** The `include` value that asks for the answer's log-probabilities. */
const OUTPUT_TEXT_LOGPROBS = "message.output_text.logprobs";

/** The ResponsesState of a request this adapter parsed. */
export function responsesStateOf(request: InternalRequest): ResponsesState {
  const state = request.wireState as ResponsesState | undefined;
  if (!state) throw new Error("not a Responses API request");
  return state;
}

/** Whether the input refers to stored items (an item reference), which must be read before the request can run. */
export function needsStore(input: readonly InputItem[]): boolean {
  return input.some((item) => item.type === "item_reference");
}

/**
 * Completes a request that reads stored items: `earlier`, the conversation of the stored response it continues
 * (whose instructions do not carry over, as in OpenAI's API), comes before `input`, its own items with every
 * reference resolved.
 * @throws ProtocolError naming the `input` item at fault.
 */
export function continueConversation(request: InternalRequest, earlier: ConversationItem[], input: ConversationItem[]): void {
  const state = responsesStateOf(request);
  const items = earlier.length + input.length;
  if (items > REQUEST_LIMITS.messages) {
    const param = state.previousResponseId === undefined ? "input" : "previous_response_id";
    throw new ProtocolError("invalid_request", `the conversation has ${items} items (${earlier.length} stored, ${input.length} in input); a request may have at most ${REQUEST_LIMITS.messages} (limit on messages per request): start a new one with the turns that matter as input`, param);
  }
  state.earlier = earlier;
  state.input = input;
  const images: ConversationImages = { ...state.images, pending: [] };
  request.messages = chatMessagesOf(state.instructions, { earlier, input }, images);
  if (images.pending.length > 0) request.images = images.pending;
  else delete request.images;
}

/** Features of OpenAI's API this server does not have: a 400 naming each, never a silent drop. */
function rejectUnsupported(body: JsonObject): void {
  if (optionalBoolean(own(body, "background"), "background")) unsupported("background", "background mode is not supported: send the request with stream: true, or use agent runs (POST /v1/runs) for long work");
  if (!isUnset(own(body, "conversation"))) unsupported("conversation", "conversations are not supported: continue a stored response with previous_response_id");
  if (!isUnset(own(body, "prompt"))) unsupported("prompt", "prompt templates are not supported: send instructions and input");
  const include = own(body, "include");
  if (!isUnset(include)) {
    if (!Array.isArray(include)) invalid("include", "an array of strings", include);
    include.forEach((value: unknown, index) => {
      const name = requireString(value, `include[${index}]`);
      // Reasoning here is visible text in every response, never encrypted: asking for its encrypted copy changes nothing.
      if (name === "reasoning.encrypted_content" || name === OUTPUT_TEXT_LOGPROBS) return;
      unsupported(`include[${index}]`, `include[${index}] ${quote(name)} is not supported: responses carry no encrypted reasoning, images or built-in tool results here`);
    });
  }
  // Limits built-in tool calls, of which this server makes none.
  optionalInteger(own(body, "max_tool_calls"), "max_tool_calls", "a positive integer", 1);
  checkPromptCacheHints(body);
  checkServiceTier(body);
  const contextManagement = own(body, "context_management");
  if (!isUnset(contextManagement) && !(Array.isArray(contextManagement) && contextManagement.length === 0)) {
    unsupported("context_management", "context_management is not supported: use truncation: 'auto' to fit long conversations");
  }
  if (!isUnset(own(body, "moderation"))) unsupported("moderation", "moderation is not supported by this server");
}

/** `stream_options`: {include_obfuscation?}, only with `stream: true`. */
function parseStreamOptions(value: unknown, stream: boolean): void {
  const options = optionalObject(value, "stream_options");
  if (!options) return;
  if (!stream) unsupported("stream_options", "stream_options is only allowed when stream is true");
  for (const key of Object.keys(options)) {
    // Obfuscation pads events against side channels; these events are never padded, and saying so changes nothing.
    if (key !== "include_obfuscation") unsupported(`stream_options`, `stream_options has an unsupported key ${quote(key)}: only include_obfuscation`);
  }
  optionalBoolean(own(options, "include_obfuscation"), "stream_options.include_obfuscation");
}

/** `tools`: function tools `{type: "function", name, description?, parameters?, strict?}`; built-in tools are a 400. */
function parseTools(value: unknown): { tools?: ToolDefinition[]; wireTools: JsonRecord[] } {
  if (isUnset(value)) return { wireTools: [] };
  if (!Array.isArray(value)) return invalid("tools", "an array of function tools", value);
  if (value.length === 0) return { wireTools: [] };
  checkToolsLimits("tools", value);
  const seen = new Set<string>();
  const wireTools: JsonRecord[] = [];
  const tools = value.map((item: unknown, index): ToolDefinition => {
    const path = `tools[${index}]`;
    const tool = requireObject(item, path);
    const type = own(tool, "type");
    if (typeof type === "string" && BUILT_IN_TOOLS.includes(type)) unsupported(`${path}.type`, `${path}.type ${quote(type)} is not supported: this server has no built-in tools, only 'function' tools`);
    if (type !== "function") invalid(`${path}.type`, "'function'", type);
    const name = requireString(own(tool, "name"), `${path}.name`);
    if (!NAME.test(name)) invalid(`${path}.name`, "1 to 64 letters, digits, underscores or dashes", name);
    if (seen.has(name)) unsupported(`${path}.name`, `${path}.name ${quote(name)} is defined twice: tool names must be unique`);
    seen.add(name);
    const description = optionalString(own(tool, "description"), `${path}.description`);
    // Calls are always constrained to the parameters' schema, so `strict` changes nothing and is only checked.
    const strict = optionalBoolean(own(tool, "strict"), `${path}.strict`) ?? true;
    const parameters = optionalObject(own(tool, "parameters"), `${path}.parameters`) ?? { type: "object", properties: {} };
    wireTools.push({ type: "function", name, description: description ?? null, parameters, strict });
    return description === undefined ? { name, parameters } : { name, description, parameters };
  });
  return { tools, wireTools };
}

/** `tool_choice`: "none" | "auto" | "required" | {type: "function", name}. */
function parseToolChoice(value: unknown, tools: readonly ToolDefinition[] | undefined): ToolChoice | undefined {
  if (isUnset(value)) return undefined;
  if (value === "auto" || value === "none") return { type: value };
  if (value === "required") {
    if (!tools) unsupported("tool_choice", "tool_choice 'required' needs tools: no tools were given");
    return { type: "any" };
  }
  if (!isObject(value)) return invalid("tool_choice", "'auto', 'none', 'required' or {type: 'function', name}", value);
  const type = own(value, "type");
  if (type !== "function") {
    if (typeof type === "string") unsupported("tool_choice.type", `tool_choice.type ${quote(type)} is not supported: use 'function'`);
    invalid("tool_choice.type", "'function'", type);
  }
  const name = requireString(own(value, "name"), "tool_choice.name");
  if (!tools?.some((tool) => tool.name === name)) {
    const known = tools ? quoteList(tools.map((tool) => tool.name)) : "none were given";
    unsupported("tool_choice.name", `tool_choice.name ${quote(name)} is not one of the tools (${known})`);
  }
  return { type: "tool", name };
}

/** The tool choice as the response object shows it. */
function wireToolChoice(choice: ToolChoice | undefined): unknown {
  if (!choice) return "auto";
  if (choice.type === "any") return "required";
  if (choice.type === "tool") return { type: "function", name: choice.name };
  return choice.type;
}

/**
 * `text`: {format?: {type: "text"} | {type: "json_object"} | {type: "json_schema", name, schema, strict?,
 * description?}}. JSON formats are enforced by grammar (strict or not).
 */
function parseTextFormat(value: unknown): { format?: InternalRequest["responseFormat"]; wireFormat: JsonRecord } {
  const text = optionalObject(value, "text");
  const plain = { wireFormat: { type: "text" } };
  if (!text) return plain;
  for (const key of Object.keys(text)) {
    if (key === "verbosity") {
      if (!isUnset(own(text, key))) unsupported("text.verbosity", "text.verbosity is not supported: set max_output_tokens or ask for brevity in the instructions");
    } else if (key !== "format") {
      unsupported("text", `text has an unsupported key ${quote(key)}: only format`);
    }
  }
  const format = optionalObject(own(text, "format"), "text.format");
  if (!format) return plain;
  const type = own(format, "type");
  if (type === "text") return plain;
  if (type === "json_object") return { format: { type: "json_object" }, wireFormat: { type: "json_object" } };
  if (type !== "json_schema") return invalid("text.format.type", "'text', 'json_object' or 'json_schema'", type);
  const name = requireString(own(format, "name"), "text.format.name");
  if (!NAME.test(name)) invalid("text.format.name", "1 to 64 letters, digits, underscores or dashes", name);
  const description = optionalString(own(format, "description"), "text.format.description");
  const strict = optionalBoolean(own(format, "strict"), "text.format.strict");
  const schema = own(format, "schema");
  if (isUnset(schema)) throw new ProtocolError("invalid_request", "text.format.schema is required for a json_schema format: a JSON Schema object", "text.format.schema");
  if (!isObject(schema) && typeof schema !== "boolean") invalid("text.format.schema", "a JSON Schema (an object or a boolean)", schema);
  const wireFormat: JsonRecord = { type: "json_schema", name, schema, strict: strict ?? false };
  if (description !== undefined) wireFormat.description = description;
  return { format: { type: "json_schema", schema }, wireFormat };
}

/** `reasoning`: {effort?, summary?, generate_summary?}; see REASONING_EFFORTS for what each effort does here. */
function parseReasoning(value: unknown): { effort: string | null; summary: string | null } | undefined {
  const reasoning = optionalObject(value, "reasoning");
  if (!reasoning) return undefined;
  for (const key of Object.keys(reasoning)) {
    if (key !== "effort" && key !== "summary" && key !== "generate_summary") unsupported("reasoning", `reasoning has an unsupported key ${quote(key)}: effort and summary`);
  }
  const effort = own(reasoning, "effort");
  if (!isUnset(effort) && (typeof effort !== "string" || !Object.hasOwn(REASONING_EFFORTS, effort))) {
    invalid("reasoning.effort", Object.keys(REASONING_EFFORTS).map((name) => `'${name}'`).join(", "), effort);
  }
  // The reasoning is returned whole and visible (spec 2.2), which is more than any summary: accepted, never shortened.
  const summary = own(reasoning, "summary") ?? own(reasoning, "generate_summary");
  if (!isUnset(summary) && summary !== "auto" && summary !== "concise" && summary !== "detailed") invalid("reasoning.summary", "'auto', 'concise' or 'detailed'", summary);
  return { effort: isUnset(effort) ? "medium" : (effort as string), summary: isUnset(summary) ? null : (summary as string) };
}
