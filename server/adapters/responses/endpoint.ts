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
  /**
   * The most JSON a continued conversation may carry (default 8 MiB): each stored response keeps its whole
   * conversation, so a chain continued without end (truncation "auto" lets it outgrow the context) is stopped here.
   */
  maxConversationBytes?: number;
}

/** Default of {@link ResponsesStorage.maxConversationBytes}: the default request body limit. */
export const DEFAULT_MAX_CONVERSATION_BYTES = 8 * 1024 * 1024;

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
    prepare: (request, principal) => prepare(storage, request, principal),
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
async function prepare(storage: ResponsesStorage, request: InternalRequest, principal: Principal): Promise<void> {
  const state = responsesStateOf(request);
  state.owner = ownerOf(principal);
  if (state.previousResponseId === undefined) return;
  const previous = await readStored(() => storage.store.get(state.owner!, state.previousResponseId!));
  if (!previous) {
    throw new ProtocolError("not_found", `Previous response with id '${state.previousResponseId}' not found: it was never stored (store: false), was deleted, expired, or belongs to another organization`, "previous_response_id");
  }
  const earlier = [...(previous.inputItems as unknown as ConversationItem[]), ...((previous.response.output ?? []) as ConversationItem[])];
  const bytes = Buffer.byteLength(JSON.stringify(earlier)) + Buffer.byteLength(JSON.stringify(state.input));
  const limit = storage.maxConversationBytes ?? DEFAULT_MAX_CONVERSATION_BYTES;
  if (bytes > limit) {
    throw new ProtocolError("invalid_request", `the conversation of previous_response_id '${state.previousResponseId}' with this input is ${bytes} bytes, more than the ${limit} a stored conversation may hold: start a new one (send the turns that matter as input)`, "previous_response_id");
  }
  continueConversation(request, earlier);
}

/** A store read; the database failing is a 502 naming what could not be read. */
export async function readStored<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw new ProtocolError("bad_gateway", `stored responses cannot be read now (${(error as Error).message}); retry shortly`, undefined, 2);
  }
}
