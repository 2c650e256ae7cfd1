// GET /v1/models in OpenAI's shape: `{object: "list", data: [{id, object: "model", created, owned_by, capabilities}]}`.
import type { ListedModel } from "../../http/endpoint.js";

/**
 * What a listed model takes besides text: `["vision"]` for a model with a vision encoder (image input), `[]`
 * otherwise. An extension field (OpenAI's list has none), with Ollama's name for image input; clients that do not
 * know it ignore it.
 */
function capabilitiesOf(model: ListedModel): string[] {
  return model.vision ? ["vision"] : [];
}

/** One model in OpenAI's shape. */
export function openAiModel(model: ListedModel) {
  return { id: model.id, object: "model" as const, created: model.created, owned_by: "loom", capabilities: capabilitiesOf(model) };
}

/** The model list (OpenAI's is not paged). */
export function openAiModelList(models: readonly ListedModel[]) {
  return { object: "list" as const, data: models.map(openAiModel) };
}
