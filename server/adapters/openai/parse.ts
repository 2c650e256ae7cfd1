// Parses an OpenAI chat-completions request body (spec 2.1 and 8, plus the OpenAI API's own rules) into the
// format-independent InternalRequest. Every rejection is a ProtocolError naming the field and what it must be.
import { ProtocolError, type InternalRequest, type ServedModels, servedNames, servedSlug } from "../../protocol/internal.js";
import {
  describe,
  own,
  invalid,
  isUnset,
  isObject,
  optionalBoolean,
  optionalInteger,
  optionalNumberInRange,
  optionalObject,
  optionalString,
  quote,
  requireObject,
  requireString,
  unsupported,
  type JsonObject,
} from "./fields.js";
import { parseMessages } from "./messages.js";
import type { PendingImage } from "../../images/source.js";
import { parseToolChoice, parseTools } from "./tools.js";
import { checkConstraint } from "../../protocol/constraint.js";
import { checkTopLevelFields } from "./top-level.js";
import { thinkingOfEffort } from "./reasoning-effort.js";
import { parseGenerationExtensions } from "../extensions.js";
import { MAX_CHOICES } from "../../protocol/choices.js";
import { parseIncludeUsage, parseSampling, parseStop } from "./generation-fields.js";

/** The `chat_template_kwargs` keys this server understands; any other key is rejected rather than passed on. */
const TEMPLATE_KWARGS = ["enable_thinking", "enable_auto_compaction"] as const;

/**
 * Validates a chat-completions request body and maps it to an InternalRequest.
 *
 * Unrecognised top-level fields are refused, as OpenAI refuses them (top-level.ts); every known field is type- and
 * range-checked, and features this server does not implement (logit_bias, audio, deprecated functions) are
 * rejected, never ignored.
 *
 * @param body the parsed JSON body.
 * @param models the served models: `model` must be one of `models.slugs("openai")`.
 * @throws ProtocolError "invalid_request" (400) naming the field in `param`, or "not_found" (404) for an unknown model.
 */
export function parseChatCompletionRequest(body: unknown, models: ServedModels): InternalRequest {
  if (!isObject(body)) throw new ProtocolError("invalid_request", `The request body must be a JSON object, got ${describe(body)}`);

  checkTopLevelFields(body);
  const model = parseModel(own(body, "model"), models);
  const images: PendingImage[] = [];
  const messages = parseMessages(own(body, "messages"), { model, hasVision: models.hasVision(model, "openai"), images });
  rejectUnsupportedFeatures(body);

  const stream = optionalBoolean(own(body, "stream"), "stream") ?? false;
  const templateKwargs = parseTemplateKwargs(own(body, "chat_template_kwargs"));
  const choices = optionalInteger(own(body, "n"), "n", `an integer between 1 and ${MAX_CHOICES}`, 1, MAX_CHOICES);
  const logprobs = parseLogprobs(body);
  const tools = parseTools(own(body, "tools"));
  const toolChoice = parseToolChoice(own(body, "tool_choice"), tools);
  const parallelToolCalls = optionalBoolean(own(body, "parallel_tool_calls"), "parallel_tool_calls");
  const maxTokens = parseMaxTokens(body);
  // Both checked: `??` alone would let a malformed safety_identifier through beside a user.
  const safetyIdentifier = optionalString(own(body, "safety_identifier"), "safety_identifier");
  const userId = optionalString(own(body, "user"), "user") ?? safetyIdentifier;

  const request: InternalRequest = {
    format: "openai",
    model,
    messages,
    sampling: parseSampling(body),
    stop: parseStop(own(body, "stop")),
    stream,
    includeUsage: parseIncludeUsage(own(body, "stream_options"), stream),
    thinking: parseThinking(own(body, "reasoning_effort"), templateKwargs.enable_thinking, { models, model, maxTokens }),
    autoCompaction: templateKwargs.enable_auto_compaction ?? true,
  };
  if (images.length > 0) request.images = images;
  if (tools) request.tools = tools;
  if (toolChoice) request.toolChoice = toolChoice;
  if (parallelToolCalls === false) request.parallelToolCalls = false;
  const responseFormat = parseResponseFormat(own(body, "response_format"));
  if (responseFormat) request.responseFormat = responseFormat;
  checkConstraint(request, { tool: (index) => `tools[${index}].function.parameters`, responseFormat: "response_format.json_schema.schema" });
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  if (!isUnset(own(body, "max_completion_tokens"))) request.fieldNames = { maxTokens: "max_completion_tokens" };
  if (userId !== undefined) request.userId = userId;
  // A gateway's routing affinity key (top-level.ts has checked it is a string).
  const cacheKey = own(body, "prompt_cache_key");
  if (typeof cacheKey === "string" && cacheKey !== "") request.cacheKey = cacheKey;
  if (choices !== undefined && choices > 1) request.choices = choices;
  if (logprobs) request.logprobs = logprobs;
  Object.assign(request, parseGenerationExtensions(body, maxTokens, request.fieldNames?.maxTokens ?? "max_tokens"));
  return request;
}

/**
 * `logprobs` (a boolean) and `top_logprobs` (0-20, only with `logprobs: true`, as OpenAI requires).
 * NOTE: the log-probabilities are the model's before any sampling transform (docs/api/chat-completions.md).
 */
function parseLogprobs(body: JsonObject): InternalRequest["logprobs"] {
  const logprobs = optionalBoolean(own(body, "logprobs"), "logprobs") ?? false;
  const top = optionalInteger(own(body, "top_logprobs"), "top_logprobs", "an integer between 0 and 20", 0, 20);
  if (top !== undefined && top > 0 && !logprobs) unsupported("top_logprobs", "top_logprobs requires logprobs: true");
  return logprobs ? { top: top ?? 0 } : undefined;
}

/**
 * Thinking from `reasoning_effort` (reasoning-effort.ts) or `chat_template_kwargs.enable_thinking`; both sent must
 * agree (an effort that turns it off with enable_thinking true, or the reverse, is refused naming the effort).
 */
function parseThinking(effort: unknown, enableThinking: boolean | undefined, context: { models: ServedModels; model: string; maxTokens?: number }): InternalRequest["thinking"] {
  if (isUnset(effort)) return { enabled: enableThinking ?? false };
  const thinking = thinkingOfEffort(effort, "reasoning_effort", context);
  if (enableThinking !== undefined && enableThinking !== thinking.enabled) {
    unsupported("reasoning_effort", `reasoning_effort '${String(effort)}' turns reasoning ${thinking.enabled ? "on" : "off"} but chat_template_kwargs.enable_thinking is ${enableThinking}: send one of them`);
  }
  return thinking;
}

/** OpenAI's rule for response format names. */
const FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * `response_format`: {type: "text"} (the default), {type: "json_object"}, or {type: "json_schema", json_schema:
 * {name, schema?, strict?, description?}}; a missing schema admits any JSON value. `strict` is accepted either way:
 * output is always constrained to the schema.
 */
function parseResponseFormat(value: unknown): InternalRequest["responseFormat"] {
  const format = optionalObject(value, "response_format");
  if (!format) return undefined;
  const type = own(format, "type");
  if (type === "text") return undefined;
  if (type === "json_object") return { type: "json_object" };
  if (type !== "json_schema") return invalid("response_format.type", "'text', 'json_object' or 'json_schema'", type);
  const jsonSchema = requireObject(own(format, "json_schema"), "response_format.json_schema");
  const name = requireString(own(jsonSchema, "name"), "response_format.json_schema.name");
  if (!FORMAT_NAME.test(name)) invalid("response_format.json_schema.name", "1 to 64 letters, digits, underscores or dashes", name);
  optionalString(own(jsonSchema, "description"), "response_format.json_schema.description");
  optionalBoolean(own(jsonSchema, "strict"), "response_format.json_schema.strict");
  const schema = own(jsonSchema, "schema");
  if (!isUnset(schema) && typeof schema !== "boolean" && !isObject(schema)) invalid("response_format.json_schema.schema", "a JSON Schema (an object or a boolean)", schema);
  return { type: "json_schema", schema: isUnset(schema) ? true : schema };
}

/**
 * `model`: a required string naming a served model (one of the chat-completions slugs, which the Responses API
 * shares, or an alias of one); an unknown one is a 404 listing the available names.
 * @returns the slug it names (an alias's slug), which the request is accounted and answered under.
 */
export function parseModel(value: unknown, models: ServedModels): string {
  const names = servedNames(models, "openai");
  const available = names.length > 0 ? names.join(", ") : "none";
  if (isUnset(value)) throw new ProtocolError("invalid_request", `model is required: one of ${available}`, "model");
  if (typeof value !== "string") invalid("model", `a string, one of ${available}`, value);
  const slug = servedSlug(models, value, "openai");
  if (slug === undefined) throw new ProtocolError("not_found", `The model ${quote(value)} does not exist; available: ${available}`, "model");
  return slug;
}

/** `max_tokens` and its newer name `max_completion_tokens`: positive integers that must agree when both are sent. */
function parseMaxTokens(body: JsonObject): number | undefined {
  const rule = "a positive integer";
  const maxTokens = optionalInteger(own(body, "max_tokens"), "max_tokens", rule, 1);
  const maxCompletionTokens = optionalInteger(own(body, "max_completion_tokens"), "max_completion_tokens", rule, 1);
  if (maxTokens !== undefined && maxCompletionTokens !== undefined && maxTokens !== maxCompletionTokens) {
    throw new ProtocolError(
      "invalid_request",
      `max_tokens (${maxTokens}) and max_completion_tokens (${maxCompletionTokens}) disagree: send only one`,
      "max_completion_tokens",
    );
  }
  return maxCompletionTokens ?? maxTokens;
}

/**
 * `chat_template_kwargs`: {enable_thinking?, enable_auto_compaction?}.
 * NOTE: other keys are rejected, not passed to the template: an arbitrary template variable could change the prompt
 * in ways no one checked.
 */
function parseTemplateKwargs(value: unknown): { enable_thinking?: boolean; enable_auto_compaction?: boolean } {
  const kwargs = optionalObject(value, "chat_template_kwargs");
  if (!kwargs) return {};
  for (const key of Object.keys(kwargs)) {
    if (!(TEMPLATE_KWARGS as readonly string[]).includes(key)) {
      const supported = `the supported keys are ${TEMPLATE_KWARGS.join(" and ")}`;
      // A key that is not a plain name (empty, spaces, a megabyte long) is quoted, bounded, and not made a path.
      if (!/^[A-Za-z_$][\w$]{0,63}$/.test(key)) {
        unsupported("chat_template_kwargs", `chat_template_kwargs has an unsupported key ${quote(key)}: ${supported}`);
      }
      unsupported(`chat_template_kwargs.${key}`, `chat_template_kwargs.${key} is not supported: ${supported}`);
    }
  }
  const result: { enable_thinking?: boolean; enable_auto_compaction?: boolean } = {};
  for (const key of TEMPLATE_KWARGS) {
    const flag = optionalBoolean(own(kwargs, key), `chat_template_kwargs.${key}`);
    if (flag !== undefined) result[key] = flag;
  }
  return result;
}

/** Fields whose request this server cannot honour: rejected with a message saying so, never silently ignored. */
function rejectUnsupportedFeatures(body: JsonObject): void {
  if (!isUnset(own(body, "functions"))) unsupported("functions", "functions is deprecated and not supported: use tools");
  if (!isUnset(own(body, "function_call"))) unsupported("function_call", "function_call is deprecated and not supported: use tool_choice");

  const logitBias = optionalObject(own(body, "logit_bias"), "logit_bias");
  if (logitBias && Object.keys(logitBias).length > 0) unsupported("logit_bias", "logit_bias is not supported yet");

  if (!isUnset(own(body, "audio"))) unsupported("audio", "audio output is not supported: this server generates text only");
  const modalities = own(body, "modalities");
  if (!isUnset(modalities)) {
    if (!Array.isArray(modalities) || modalities.some((item) => item !== "text" && item !== "audio")) {
      invalid("modalities", `an array of 'text' and 'audio'`, modalities);
    }
    if (modalities.includes("audio")) unsupported("modalities", "audio output is not supported: this server generates text only");
  }
}
