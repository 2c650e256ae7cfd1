// GET /v1/models in Anthropic's shape (a request carrying `anthropic-version`): `{data: [{type: "model", id,
// display_name, created_at, capabilities}], has_more, first_id, last_id}`, paged by `limit`, `after_id` and `before_id`.
// `capabilities` holds only `image_input` (whether the model takes image blocks): Anthropic's object has more keys, on
// features loom does not report.
import type { ListedModel } from "../../http/endpoint.js";
import { ProtocolError } from "../../protocol/internal.js";

/** Anthropic's default and largest page sizes. */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

/** One model in Anthropic's shape. */
export function anthropicModel(model: ListedModel) {
  return { type: "model" as const, id: model.id, display_name: model.id, created_at: new Date(model.created * 1000).toISOString(), capabilities: { image_input: { supported: model.vision } } };
}

/** A page of the model list. @throws ProtocolError for a bad `limit`, or an `after_id` / `before_id` not listed. */
export function anthropicModelList(models: readonly ListedModel[], query: URLSearchParams) {
  const limitText = query.get("limit");
  const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new ProtocolError("invalid_request", `limit: must be an integer from 1 to ${MAX_LIMIT} (got ${JSON.stringify(limitText?.slice(0, 20))})`, "limit");
  }
  const afterId = query.get("after_id");
  const beforeId = query.get("before_id");
  if (afterId !== null && beforeId !== null) throw new ProtocolError("invalid_request", "after_id and before_id cannot both be given", "before_id");
  const indexOf = (id: string, param: string) => {
    const index = models.findIndex((model) => model.id === id);
    if (index < 0) throw new ProtocolError("invalid_request", `${param}: no model with id ${JSON.stringify(id.slice(0, 200))}`, param);
    return index;
  };
  let page: readonly ListedModel[];
  let hasMore: boolean;
  if (beforeId !== null) {
    const end = indexOf(beforeId, "before_id");
    page = models.slice(Math.max(0, end - limit), end);
    hasMore = end - limit > 0;
  } else {
    const start = afterId === null ? 0 : indexOf(afterId, "after_id") + 1;
    page = models.slice(start, start + limit);
    hasMore = start + limit < models.length;
  }
  return { data: page.map(anthropicModel), has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
}
