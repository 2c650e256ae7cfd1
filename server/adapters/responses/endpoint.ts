// POST /v1/responses as the HTTP layer sees it: the OpenAI Responses API over the same engine and accounting as chat
// completions, with stored responses (and `previous_response_id` continuations) in a ResponseStore.
import type { Principal } from "../../http/auth.js";
import type { WireEndpoint } from "../../http/endpoint.js";
import { ProtocolError, type InternalRequest, type ServedModels } from "../../protocol/internal.js";
import { openAiErrorBody } from "../openai/errors.js";
import { openAiModel, openAiModelList } from "../openai/models.js";
import { responseOfItem, storedItems, type ConversationItem } from "./items.js";
import { continueConversation, needsStore, parseResponsesRequest, responsesStateOf } from "./parse.js";
import { finishedResponse, ResponsesStreamWriter, type ResponseSaver } from "./response.js";
import type { ResponseRecord, ResponseStore } from "./store.js";
import { responsesWireField } from "../wire-fields.js";

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
      inputItems: storedItems([...(state.earlier ?? []), ...state.input]),
    });
  };
  return {
    format: "openai",
    path: "/v1/responses",
    idPrefix: "resp_",
    parse: (body, responseId) => parseResponsesRequest(body, models, responseId),
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

/**
 * Sets the request's owner and reads what it takes from the store: the conversation of the response it continues,
 * which comes before its input, and the items its input refers to.
 */
async function prepare(storage: ResponsesStorage, request: InternalRequest, principal: Principal): Promise<void> {
  const state = responsesStateOf(request);
  const owner = (state.owner = ownerOf(principal));
  if (state.previousResponseId === undefined && !needsStore(state.input)) return;
  // One read per response, however many references name its items.
  const reads = new Map<string, Promise<StoredResponse | undefined>>();
  const read = (id: string) => {
    let stored = reads.get(id);
    if (!stored) reads.set(id, (stored = readStored(() => storage.store.get(owner, id))));
    return stored;
  };
  let earlier: ConversationItem[] = [];
  if (state.previousResponseId !== undefined) {
    const previous = await read(state.previousResponseId);
    if (!previous) {
      throw new ProtocolError("not_found", `Previous response with id '${state.previousResponseId}' not found: it was never stored (store: false), was deleted, expired, or belongs to another organization`, "previous_response_id");
    }
    earlier = conversationOf(previous);
  }
  const input = await Promise.all(state.input.map((item, index) => (item.type === "item_reference" ? resolveReference(item.id, index, read) : item)));
  const bytes = Buffer.byteLength(JSON.stringify(earlier)) + Buffer.byteLength(JSON.stringify(input));
  const limit = storage.maxConversationBytes ?? DEFAULT_MAX_CONVERSATION_BYTES;
  if (bytes > limit) {
    const what = state.previousResponseId === undefined ? "the input with the items it refers to" : `the conversation of previous_response_id '${state.previousResponseId}' with this input`;
    throw new ProtocolError("invalid_request", `${what} is ${bytes} bytes, more than the ${limit} a stored conversation may hold: start a new one (send the turns that matter as input)`, state.previousResponseId === undefined ? "input" : "previous_response_id");
  }
  continueConversation(request, earlier, input);
}

type StoredResponse = Pick<ResponseRecord, "response" | "inputItems">;

/** A stored response's conversation: the items it was generated from, then its output. */
function conversationOf(stored: StoredResponse): ConversationItem[] {
  return [...(stored.inputItems as unknown as ConversationItem[]), ...((stored.response.output ?? []) as ConversationItem[])];
}

/** The item an `item_reference` names, from the stored response that made it (its id says which: ItemIds). */
async function resolveReference(id: string, index: number, read: (responseId: string) => Promise<StoredResponse | undefined>): Promise<ConversationItem> {
  const responseId = responseOfItem(id);
  const stored = responseId === undefined ? undefined : await read(responseId);
  const found = stored ? conversationOf(stored).find((item) => item.id === id) : undefined;
  if (!found) {
    throw new ProtocolError("not_found", `input[${index}] refers to the item '${id.slice(0, 140)}', which no stored response of this organization holds (it was never stored, or its response was deleted or expired): send the item itself`, `input[${index}].id`);
  }
  return structuredClone(found);
}

/** A store read; the database failing is a 502 naming what could not be read. */
export async function readStored<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw new ProtocolError("bad_gateway", `stored responses cannot be read now (${(error as Error).message}); retry shortly`, undefined, 2);
  }
}
