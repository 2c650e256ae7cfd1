// POST /v1/responses as the HTTP layer sees it: the OpenAI Responses API over the same engine and accounting as chat
// completions, with stored responses (and `previous_response_id` continuations) in a ResponseStore.
import type { Principal } from "../../http/auth.js";
import type { WireEndpoint } from "../../http/endpoint.js";
import { ProtocolError, type InternalRequest, type ServedModels } from "../../protocol/internal.js";
import { openAiErrorBody } from "../openai/errors.js";
import { openAiModel, openAiModelList } from "../openai/models.js";
import type { ConversationItem } from "./items.js";
import { continueConversation, parseResponsesRequest, responsesStateOf } from "./parse.js";
import { finishedResponse, ResponsesStreamWriter, type ResponseSaver } from "./response.js";
import type { ResponseStore } from "./store.js";
import { responsesWireField } from "./wire-field.js";

/** Where responses are kept, and for how long. */
export interface ResponsesStorage {
  store: ResponseStore;
  /** How long a stored response stays readable (default 30 days). */
  retentionMs: number;
}

/** The default retention of stored responses: 30 days, as OpenAI's API keeps them. */
export const DEFAULT_RESPONSE_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Whose stored responses a principal reads and writes: its organization's, or (without the platform) its key's. */
export function ownerOf(principal: Principal): string {
  return principal.organizationId ?? `key:${principal.keyId}`;
}

/** The POST /v1/responses endpoint. */
export function responsesEndpoint(models: ServedModels, storage: ResponsesStorage): WireEndpoint {
  const save: ResponseSaver = async (state, response) => {
    const createdAt = new Date();
    await storage.store.save({
      id: response.id as string,
      owner: state.owner!,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + storage.retentionMs),
      response,
      inputItems: [...(state.earlier ?? []), ...state.input] as unknown as Record<string, unknown>[],
    });
  };
  return {
    format: "openai",
    path: "/v1/responses",
    idPrefix: "resp_",
    parse: (body) => parseResponsesRequest(body, models),
    prepare: (request, principal) => prepare(storage.store, request, principal),
    respond: (meta, result, request) => finishedResponse(meta, responsesStateOf(request), result, save),
    stream: (meta, request) => new ResponsesStreamWriter(meta, responsesStateOf(request), save),
    error: (error) => openAiErrorBody(error),
    wireField: responsesWireField,
    models: { list: openAiModelList, one: openAiModel },
    // Routes both formats share answer in chat completions' shape, which is this one's.
    claims: () => false,
  };
}

/** Sets the request's owner and, for a continuation, prepends the stored response's conversation. */
async function prepare(store: ResponseStore, request: InternalRequest, principal: Principal): Promise<void> {
  const state = responsesStateOf(request);
  state.owner = ownerOf(principal);
  if (state.previousResponseId === undefined) return;
  const previous = await readStored(() => store.get(state.owner!, state.previousResponseId!));
  if (!previous) {
    throw new ProtocolError("not_found", `Previous response with id '${state.previousResponseId}' not found: it was never stored (store: false), was deleted, expired, or belongs to another organization`, "previous_response_id");
  }
  const output = (previous.response.output ?? []) as ConversationItem[];
  continueConversation(request, [...(previous.inputItems as unknown as ConversationItem[]), ...output]);
}

/** A store read; the database failing is a 502 naming what could not be read. */
export async function readStored<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw new ProtocolError("bad_gateway", `stored responses cannot be read now (${(error as Error).message}); retry shortly`, undefined, 2);
  }
}
