// GET /v1/models in OpenAI's shape: `{object: "list", data: [{id, object: "model", created, owned_by}]}`.
import type { ListedModel } from "../../http/endpoint.js";

/** One model in OpenAI's shape. */
export function openAiModel(model: ListedModel) {
  return { id: model.id, object: "model" as const, created: model.created, owned_by: "loom" };
}

/** The model list (OpenAI's is not paged). */
export function openAiModelList(models: readonly ListedModel[]) {
  return { object: "list" as const, data: models.map(openAiModel) };
}
