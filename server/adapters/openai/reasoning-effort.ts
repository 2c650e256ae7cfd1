// Reasoning efforts, as both OpenAI formats name them (chat completions `reasoning_effort`, Responses
// `reasoning.effort`), and what each turns into: thinking off, or on with a budget of reasoning tokens. A harmony
// model (gpt-oss) takes the effort itself in its template instead of a budget (server/protocol/harmony.ts).
import { type InternalRequest, ProtocolError, type ServedModels } from "../../protocol/internal.js";
import { invalid } from "./fields.js";

/**
 * Each effort's thinking: `none` and `minimal` off; `low` 1024 and `medium` 4096 reasoning tokens, after which the
 * engine closes the reasoning and the answer follows; `high` (and `xhigh`) without a budget, up to the token limit.
 */
export const REASONING_EFFORTS: Record<string, InternalRequest["thinking"]> = {
  none: { enabled: false },
  minimal: { enabled: false },
  low: { enabled: true, budgetTokens: 1024, effort: "low" },
  medium: { enabled: true, budgetTokens: 4096, effort: "medium" },
  high: { enabled: true, effort: "high" },
  xhigh: { enabled: true, effort: "high" },
};

/**
 * The thinking of a valid effort, its budget never above the request's token limit (the limit is what the client pays
 * for). A model known not to reason refuses an effort that turns thinking on, as OpenAI refuses `reasoning_effort`
 * for a model without reasoning.
 * @param path the field as the client sent it (`reasoning_effort`, `reasoning.effort`).
 * @throws ProtocolError naming `path`.
 */
export function thinkingOfEffort(effort: unknown, path: string, context: { models: ServedModels; model: string; maxTokens?: number }): InternalRequest["thinking"] {
  if (typeof effort !== "string" || !Object.hasOwn(REASONING_EFFORTS, effort)) invalid(path, Object.keys(REASONING_EFFORTS).map((name) => `'${name}'`).join(", "), effort);
  const thinking = REASONING_EFFORTS[effort]!;
  if (thinking.enabled && context.models.canReason?.(context.model, "openai") === false) {
    throw new ProtocolError("invalid_request", `Unsupported value: ${path} '${effort}' is not supported with the model '${context.model}', which does not reason; use 'none' or leave it out`, path);
  }
  const { maxTokens } = context;
  if (thinking.budgetTokens === undefined || maxTokens === undefined) return { ...thinking };
  return { ...thinking, budgetTokens: Math.min(thinking.budgetTokens, maxTokens) };
}
