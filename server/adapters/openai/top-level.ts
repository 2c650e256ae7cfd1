// Which top-level fields a chat-completions request may carry. OpenAI's API refuses arguments it does not recognise,
// and so does this server: a field that would change the answer is never silently ignored. Fields that only
// annotate a request (caching hints, ids, metadata) are checked for type and accepted.
import { ProtocolError } from "../../protocol/internal.js";
import { invalid, isUnset, optionalObject, optionalString, own, quote, unsupported, type JsonObject } from "./fields.js";

/** The fields the parser reads (parse.ts), including the vLLM-style extensions top_k and chat_template_kwargs. */
const READ = [
  "messages", "model", "frequency_penalty", "max_completion_tokens", "max_tokens", "n", "parallel_tool_calls",
  "presence_penalty", "response_format", "seed", "stop", "stream", "stream_options", "temperature", "tool_choice",
  "tools", "top_p", "user", "safety_identifier", "logprobs", "top_logprobs", "logit_bias", "functions", "function_call",
  "audio", "modalities", "top_k", "chat_template_kwargs", "reasoning_effort",
  // vLLM's and llama.cpp's extensions (server/adapters/extensions.ts).
  "ignore_eos", "min_tokens",
];

/** Annotations: accepted after a type check, since they change nothing about the answer. */
const ANNOTATIONS = ["metadata", "prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "prediction", "store", "service_tier", "verbosity", "moderation", "web_search_options"];

/**
 * Throws a 400 for the first top-level field this server does not read, and for annotation values it cannot honour
 * (`store: true`, a `service_tier` other than auto/default, `verbosity`, web search, moderation).
 */
export function checkTopLevelFields(body: JsonObject): void {
  for (const key of Object.keys(body)) {
    if (READ.includes(key) || ANNOTATIONS.includes(key)) continue;
    // As OpenAI answers it: the message names the argument, `param` is null.
    throw new ProtocolError("invalid_request", `Unrecognized request argument supplied: ${quote(key)}`);
  }
  const metadata = optionalObject(own(body, "metadata"), "metadata");
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if (typeof value !== "string") invalid(`metadata.${key.slice(0, 64)}`, "a string", value);
  }
  checkPromptCacheHints(body);
  // A prediction only speeds decoding up where it matches; ignoring it leaves the answer as it is.
  optionalObject(own(body, "prediction"), "prediction");
  const store = own(body, "store");
  if (store === true) unsupported("store", "store is not supported: this server does not keep completions");
  if (!isUnset(store) && typeof store !== "boolean") invalid("store", "a boolean", store);
  checkServiceTier(body);
  // No honest way to honour it: a model's length follows its training, and a prompt asking for brevity would change
  // the conversation the client sent.
  if (!isUnset(own(body, "verbosity"))) unsupported("verbosity", "verbosity is not supported: set max_tokens, or ask for brevity in the prompt");
  if (!isUnset(own(body, "moderation"))) unsupported("moderation", "moderation is not supported by this server");
  if (!isUnset(own(body, "web_search_options"))) unsupported("web_search_options", "web search is not supported: this server runs no tools");
}

/**
 * The prompt-cache hints both OpenAI formats accept: `prompt_cache_key`, `prompt_cache_retention` (in_memory or
 * 24h) and `prompt_cache_options`, type-checked; caching is automatic here, so they change nothing.
 */
export function checkPromptCacheHints(body: JsonObject): void {
  optionalString(own(body, "prompt_cache_key"), "prompt_cache_key");
  const retention = own(body, "prompt_cache_retention");
  if (!isUnset(retention) && retention !== "in_memory" && retention !== "24h") invalid("prompt_cache_retention", "'in_memory' or '24h'", retention);
  optionalObject(own(body, "prompt_cache_options"), "prompt_cache_options");
}

/** `service_tier`: auto or default, the one tier this server has. */
export function checkServiceTier(body: JsonObject): void {
  const tier = own(body, "service_tier");
  if (!isUnset(tier) && tier !== "auto" && tier !== "default") invalid("service_tier", "'auto' or 'default' (this server has one tier)", tier);
}
