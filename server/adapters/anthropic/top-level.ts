// Which top-level fields a messages request may carry. Anthropic's API refuses fields it does not know ("Extra inputs
// are not permitted"), and so does this server; fields the API has but this server cannot honour are refused by name
// with what to do instead, never ignored. Fields that only annotate a request are accepted.
import { ProtocolError } from "../../protocol/internal.js";
import { quote } from "../openai/fields.js";

/** Fields of POST /v1/messages that this server reads. */
const MESSAGES_FIELDS = [
  "model", "messages", "max_tokens", "system", "stream", "temperature", "top_p", "top_k", "stop_sequences", "tools",
  "tool_choice", "thinking", "metadata", "service_tier", "output_config", "output_format", "chat_template_kwargs", "thread",
  // Annotations: caching is automatic here (prefix cache), and the ids are for accounting.
  "cache_control", "user_profile_id", "workspace_id", "speed", "inference_geo",
  // vLLM's and llama.cpp's extensions (server/adapters/extensions.ts).
  "ignore_eos", "min_tokens",
] as const;

/** Fields of POST /v1/messages/count_tokens (the create fields that shape the prompt). */
const COUNT_FIELDS = [
  "model", "messages", "system", "tools", "tool_choice", "thinking", "output_config", "output_format", "chat_template_kwargs",
  "cache_control", "user_profile_id", "workspace_id", "speed",
] as const;

/** API fields this server does not implement, and why. */
const UNSUPPORTED: Record<string, string> = {
  container: "containers (code execution, skills) are not supported: this server runs no tools",
  mcp_servers: "MCP servers are not supported: this server runs no tools; define the tools with an input_schema and run them yourself",
  context_management: "context_management is not supported; this server compacts long conversations itself (chat_template_kwargs.enable_auto_compaction)",
  diagnostics: "diagnostics is not supported",
};

/**
 * Throws a 400 naming the first top-level field that the endpoint does not read.
 * @param endpoint "create" (POST /v1/messages) or "count" (POST /v1/messages/count_tokens).
 */
export function checkTopLevelFields(body: Record<string, unknown>, endpoint: "create" | "count"): void {
  const allowed: readonly string[] = endpoint === "create" ? MESSAGES_FIELDS : COUNT_FIELDS;
  for (const key of Object.keys(body)) {
    if (allowed.includes(key)) continue;
    const reason = Object.hasOwn(UNSUPPORTED, key) ? UNSUPPORTED[key] : undefined;
    if (reason) throw new ProtocolError("invalid_request", `${key}: ${reason}`, key);
    const where = endpoint === "create" ? "a messages request" : "a token count request";
    // A plain name is the error's param (messages start with it); anything else is quoted, bounded and not a path.
    if (/^[A-Za-z_$][\w$]{0,63}$/.test(key)) throw new ProtocolError("invalid_request", `${key}: Extra inputs are not permitted (not a field of ${where})`, key);
    throw new ProtocolError("invalid_request", `${quote(key)} is not a field of ${where}: Extra inputs are not permitted`);
  }
}
