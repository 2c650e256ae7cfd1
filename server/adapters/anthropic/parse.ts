// Parses an Anthropic messages request body (POST /v1/messages) into the InternalRequest: every field the server
// knows is type-checked, and the first bad one fails the request with ProtocolError("invalid_request") naming it
// (param = the dotted path, e.g. `messages[1].content[0].text`). Top-level fields the server does not read are
// refused by name, as Anthropic's API refuses unknown fields (top-level.ts).
import { parseGenerationExtensions } from "../extensions.js";
import type { ChatMessage } from "../../../engine/chat/messages.js";
import type { PendingImage } from "../../images/source.js";
import { type InternalRequest, ProtocolError, type ServedModels, servedNames, servedSlug } from "../../protocol/internal.js";
import { BLOCK_SEPARATOR, type ConversationContext, parseMessage } from "./blocks.js";
import {
  child,
  invalid,
  isObject,
  isUnset,
  optional,
  own,
  readArray,
  readBoolean,
  readNumberIn,
  readObject,
  readPositiveInteger,
  readString,
} from "./fields.js";
import type { ThinkingSigner } from "./thinking-signature.js";
import { parseToolChoice, parseTools } from "./tools.js";
import { checkTopLevelFields } from "./top-level.js";
import { checkConstraint } from "../../protocol/constraint.js";
import { checkCount, REQUEST_LIMITS } from "../../protocol/request-limits.js";

/** Most stop sequences a request may carry. */
export const MAX_STOP_SEQUENCES = 16;

/** Smallest thinking budget Anthropic's API accepts. */
export const MIN_THINKING_BUDGET = 1024;

/** Keys allowed in `chat_template_kwargs` on this endpoint (thinking has its own `thinking` field here). */
const TEMPLATE_KWARGS = ["enable_auto_compaction"];

/**
 * Validates a messages request body and maps it onto the internal request.
 * @param endpoint "create" (POST /v1/messages, `max_tokens` required) or "count" (POST /v1/messages/count_tokens:
 *   only the fields that shape the prompt).
 * @throws ProtocolError "invalid_request" for a malformed field, "not_found" for a model that is not served.
 */
export function parseMessagesRequest(body: unknown, models: ServedModels, signer: ThinkingSigner, endpoint: "create" | "count" = "create"): InternalRequest {
  if (!isObject(body)) throw new ProtocolError("invalid_request", "the request body must be a JSON object");
  checkTopLevelFields(body, endpoint);
  rejectThread(own(body, "thread"));

  const model = parseModel(own(body, "model"), models);
  const maxTokensValue = own(body, "max_tokens");
  if (endpoint === "create" && isUnset(maxTokensValue)) throw invalid("max_tokens", "is required and must be a positive integer");
  const maxTokens = isUnset(maxTokensValue) ? undefined : readPositiveInteger(maxTokensValue, "max_tokens");

  const sampling: InternalRequest["sampling"] = {};
  const temperature = optional(own(body, "temperature"), "temperature", (v, p) => readNumberIn(v, p, 0, 1));
  if (temperature !== undefined) sampling.temperature = temperature;
  const topP = optional(own(body, "top_p"), "top_p", (v, p) => readNumberIn(v, p, 0, 1));
  if (topP !== undefined) sampling.topP = topP;
  const topK = optional(own(body, "top_k"), "top_k", readPositiveInteger);
  if (topK !== undefined) sampling.topK = topK;

  const stop = optional(own(body, "stop_sequences"), "stop_sequences", parseStopSequences) ?? [];
  const stream = optional(own(body, "stream"), "stream", readBoolean) ?? false;
  const tools = optional(own(body, "tools"), "tools", parseTools);
  const toolChoice = optional(own(body, "tool_choice"), "tool_choice", (v, p) => parseToolChoice(v, p, tools));
  const thinking = optional(own(body, "thinking"), "thinking", (v, p) => parseThinking(v, p, maxTokens)) ?? { enabled: false };
  if (thinking.enabled && (toolChoice?.type === "any" || toolChoice?.type === "tool")) {
    // Anthropic's rule: a forced tool call starts the turn with the call, leaving no room to think first.
    throw invalid("tool_choice", `type "${toolChoice.type}" forces tool use, which is not possible with thinking enabled; use "auto" or "none"`);
  }
  const userId = optional(own(body, "metadata"), "metadata", parseMetadata);
  const autoCompaction = optional(own(body, "chat_template_kwargs"), "chat_template_kwargs", parseTemplateKwargs) ?? true;
  const responseFormat = parseAnswerFormat(body);
  checkAnnotations(body);

  const system = optional(own(body, "system"), "system", parseSystem);
  const context: ConversationContext = { model, vision: models.hasVision(model, "anthropic"), signer, toolUses: new Map(), images: new Map() };
  const messages = parseMessages(own(body, "messages"), context);
  if (system !== undefined && system.length > 0) messages.unshift({ role: "system", content: system });
  const images = messages.flatMap((message) => context.images.get(message) ?? []);

  const request: InternalRequest = {
    format: "anthropic",
    model,
    messages,
    sampling,
    stop,
    stream,
    // Anthropic responses always carry usage; the flag is the OpenAI stream option.
    includeUsage: false,
    thinking,
    autoCompaction,
  };
  if (images.length > 0) request.images = images;
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  if (tools !== undefined) request.tools = tools;
  if (toolChoice !== undefined) {
    const { single, ...choice } = toolChoice;
    request.toolChoice = choice;
    if (single) request.parallelToolCalls = false;
  }
  if (responseFormat) request.responseFormat = responseFormat;
  const formatParam = isUnset(own(body, "output_format")) ? "output_config.format.schema" : "output_format.schema";
  checkConstraint(request, { tool: (index) => `tools[${index}].input_schema`, responseFormat: formatParam });
  if (userId !== undefined) request.userId = userId;
  if (endpoint === "create") Object.assign(request, parseGenerationExtensions(body, maxTokens, "max_tokens"));
  return request;
}

/**
 * `thread` (the message-threads beta, which the SDK's tool runner sends by default): the server would have to hold
 * the conversation between turns, which it does not. The error carries the `error_code` the SDK recovers from: it
 * stops threading and sends the whole history again, so no turn loses the earlier ones.
 */
function rejectThread(value: unknown): void {
  if (isUnset(value)) return;
  throw new ProtocolError(
    "invalid_request",
    "thread: message threads are not supported by this server; send the whole conversation in messages",
    "thread",
    undefined,
    { error_code: "thread_unsupported_request", unsupported: ["thread"] },
  );
}

/**
 * The answer's JSON format: `output_config.format`, or `output_format`, its name in the structured-outputs beta that
 * older SDKs (and AI SDK 5) still send. Both at once is ambiguous and refused.
 */
function parseAnswerFormat(body: Record<string, unknown>): InternalRequest["responseFormat"] {
  const configured = optional(own(body, "output_config"), "output_config", parseOutputConfig);
  const beta = optional(own(body, "output_format"), "output_format", parseFormat);
  if (configured && beta) throw invalid("output_format", "cannot be sent with output_config.format: send only output_config.format");
  return configured ?? beta;
}

/** `output_config`: {format?: {type: "json_schema", schema}} enforced by grammar; `effort` is not supported. */
function parseOutputConfig(value: unknown, param: string): InternalRequest["responseFormat"] {
  const config = readObject(value, param);
  for (const key of Object.keys(config)) {
    if (key === "format") continue;
    if (key === "effort") {
      if (isUnset(config.effort)) continue;
      throw invalid(child(param, key), "is not supported: reasoning is turned on and sized with thinking ({type: \"enabled\", budget_tokens})");
    }
    throw invalid(child(param, key), "is not a field of output_config (format)");
  }
  return optional(own(config, "format"), child(param, "format"), parseFormat);
}

/** `{type: "json_schema", schema}`. */
function parseFormat(format: unknown, formatPath: string): InternalRequest["responseFormat"] {
  const object = readObject(format, formatPath);
  if (own(object, "type") !== "json_schema") throw invalid(child(formatPath, "type"), 'must be "json_schema"', own(object, "type"));
  const schema = own(object, "schema");
  if (typeof schema !== "boolean" && !isObject(schema)) throw invalid(child(formatPath, "schema"), "must be a JSON Schema (an object)", schema);
  return { type: "json_schema", schema };
}

/**
 * Fields that annotate a request and change nothing here: checked for type, then not used. `speed` "fast" and an
 * `inference_geo` are refused: this server cannot honour them.
 */
function checkAnnotations(body: Record<string, unknown>): void {
  const serviceTier = own(body, "service_tier");
  // Accepted for compatibility: this server has one tier.
  if (!isUnset(serviceTier) && serviceTier !== "auto" && serviceTier !== "standard_only") {
    throw invalid("service_tier", 'must be "auto" or "standard_only"', serviceTier);
  }
  const cacheControl = optional(own(body, "cache_control"), "cache_control", readObject);
  if (cacheControl && own(cacheControl, "type") !== "ephemeral") throw invalid("cache_control.type", 'must be "ephemeral"', own(cacheControl, "type"));
  optional(own(body, "user_profile_id"), "user_profile_id", readString);
  optional(own(body, "workspace_id"), "workspace_id", readString);
  const speed = own(body, "speed");
  if (!isUnset(speed) && speed !== "standard") throw invalid("speed", 'can only be "standard" here: this server has one speed', speed);
  if (!isUnset(own(body, "inference_geo"))) throw invalid("inference_geo", "is not supported: inference runs where this server is deployed");
}

/** `model`: a messages slug or an alias of one. @returns the slug (an alias's slug), which the request is accounted and answered under. */
function parseModel(value: unknown, models: ServedModels): string {
  if (isUnset(value)) throw invalid("model", "is required and must be a model name string");
  const model = readString(value, "model");
  const slug = servedSlug(models, model, "anthropic");
  if (slug === undefined) {
    const shown = model.length <= 100 ? model : `${model.slice(0, 100)}...`;
    throw new ProtocolError("not_found", `model: ${JSON.stringify(shown)} is not served here; available: ${servedNames(models, "anthropic").join(", ")}`, "model");
  }
  return slug;
}

/** `messages`: a non-empty array; consecutive same-role turns are merged, as Anthropic does. */
function parseMessages(value: unknown, context: ConversationContext): ChatMessage[] {
  if (isUnset(value)) throw invalid("messages", "is required and must be a non-empty array of messages");
  const items = readArray(value, "messages");
  if (items.length === 0) throw invalid("messages", "must contain at least one message");
  checkCount("messages", "messages", items.length, REQUEST_LIMITS.messages);
  const out: ChatMessage[] = [];
  items.forEach((item, index) => {
    for (const message of parseMessage(item, index, index === items.length - 1, context)) appendMerged(out, message, context.images);
  });
  // Only an empty final assistant turn can vanish; alone, it leaves nothing to answer.
  if (out.length === 0) throw invalid("messages", "must contain at least one message with content");
  return out;
}

/**
 * Appends a message, merging it into the previous one when both are user or both assistant turns: Anthropic treats
 * consecutive same-role messages as one turn, and chat templates often require roles to alternate.
 */
function appendMerged(out: ChatMessage[], message: ChatMessage, images: Map<ChatMessage, PendingImage[]>): void {
  const last = out.at(-1);
  if (last === undefined || last.role !== message.role || (message.role !== "user" && message.role !== "assistant")) {
    out.push(message);
    return;
  }
  const moved = images.get(message);
  if (moved !== undefined) {
    // The merged message's images move with its text: after the earlier text and the separator joinNonEmpty puts.
    const shift = last.content.length + (last.content.length > 0 && message.content.length > 0 ? BLOCK_SEPARATOR.length : 0);
    for (const image of moved) {
      image.message = last;
      image.offset += shift;
    }
    const kept = images.get(last);
    if (kept === undefined) images.set(last, moved);
    else kept.push(...moved);
    images.delete(message);
  }
  last.content = joinNonEmpty(last.content, message.content);
  if (message.reasoning_content !== undefined) {
    last.reasoning_content = joinNonEmpty(last.reasoning_content ?? "", message.reasoning_content);
  }
  // Appended in place: a run of n merged messages stays linear (a copy per merge would be quadratic).
  if (message.tool_calls !== undefined) for (const call of message.tool_calls) (last.tool_calls ??= []).push(call);
}

function joinNonEmpty(a: string, b: string): string {
  return a.length === 0 ? b : b.length === 0 ? a : a + BLOCK_SEPARATOR + b;
}

/** `system`: a string or an array of text blocks, joined. */
function parseSystem(value: unknown, param: string): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) throw invalid(param, "must be a string or an array of text blocks", value);
  const texts = value.map((item, index) => {
    const path = child(param, index);
    const block = readObject(item, path);
    if (own(block, "type") !== "text") throw invalid(child(path, "type"), 'must be "text"', own(block, "type"));
    return readString(own(block, "text"), child(path, "text"));
  });
  return texts.filter((text) => text.length > 0).join(BLOCK_SEPARATOR);
}

function parseStopSequences(value: unknown, param: string): string[] {
  const items = readArray(value, param);
  if (items.length > MAX_STOP_SEQUENCES) {
    throw invalid(param, `must hold at most ${MAX_STOP_SEQUENCES} stop sequences`, items);
  }
  return items.map((item, index) => {
    if (typeof item !== "string" || item.length === 0) throw invalid(child(param, index), "must be a non-empty string", item);
    return item;
  });
}

/**
 * `thinking`: {type: "enabled", budget_tokens: 1024 <= n < max_tokens}, {type: "disabled"}, or {type: "adaptive"}:
 * the model reasons as its chat template does by default (thinking on, no budget). `display` may be "summarized"
 * (the reasoning is shown in full here, never summarised); "omitted" is not supported.
 */
function parseThinking(value: unknown, param: string, maxTokens: number | undefined): InternalRequest["thinking"] {
  const thinking = readObject(value, param);
  const type = own(thinking, "type");
  const display = own(thinking, "display");
  if (!isUnset(display) && display !== "summarized") {
    throw invalid(child(param, "display"), 'can only be "summarized": reasoning is always shown in full here', display);
  }
  if (type === "disabled") return { enabled: false };
  if (type === "adaptive") return { enabled: true };
  if (type !== "enabled") throw invalid(child(param, "type"), 'must be "enabled", "adaptive" or "disabled"', type);
  const budgetPath = child(param, "budget_tokens");
  const budget = own(thinking, "budget_tokens");
  const below = maxTokens === undefined ? "" : ` and less than max_tokens (${maxTokens})`;
  const rule = `must be an integer of at least ${MIN_THINKING_BUDGET}${below}`;
  if (isUnset(budget)) throw invalid(budgetPath, `is required when thinking is enabled and ${rule}`);
  if (typeof budget !== "number" || !Number.isSafeInteger(budget) || budget < MIN_THINKING_BUDGET || (maxTokens !== undefined && budget >= maxTokens)) {
    throw invalid(budgetPath, rule, budget);
  }
  return { enabled: true, budgetTokens: budget };
}

/** `metadata`: {user_id?: string of at most 256 characters} -> the user id. */
function parseMetadata(value: unknown, param: string): string | undefined {
  const metadata = readObject(value, param);
  const userId = optional(own(metadata, "user_id"), child(param, "user_id"), readString);
  if (userId !== undefined && userId.length > 256) {
    throw invalid(child(param, "user_id"), "must be at most 256 characters", userId);
  }
  return userId;
}

/** `chat_template_kwargs`: only {enable_auto_compaction?: boolean} here -> whether auto compaction is on. */
function parseTemplateKwargs(value: unknown, param: string): boolean | undefined {
  const kwargs = readObject(value, param);
  for (const key of Object.keys(kwargs)) {
    if (TEMPLATE_KWARGS.includes(key)) continue;
    const hint = key === "enable_thinking" ? ': turn reasoning on with the top-level "thinking" field on this endpoint' : "";
    throw invalid(child(param, key), `is not a supported key; the only one is enable_auto_compaction${hint}`);
  }
  return optional(own(kwargs, "enable_auto_compaction"), child(param, "enable_auto_compaction"), readBoolean);
}
