// POST /v1/chat/completions with stored completions: `store: true` keeps the completion (the response object as it
// was answered, a stream's assembled from its chunks), the request's messages and its `metadata` for the key's
// organization, before the client has its end: the whole response is sent, and a stream's finish is written, only
// once the completion is in the database. The answer also says `service_tier: "default"` when the request named a tier.
import type { StreamEncoder, WireEndpoint } from "../../http/endpoint.js";
import { type InternalEvent, type InternalRequest, ProtocolError } from "../../protocol/internal.js";
import { ownerOf } from "../responses/endpoint.js";
import { chunksOf, CompletionAssembler } from "./assemble.js";
import { openAiErrorObject } from "./errors.js";
import { isObject, optionalBoolean, own, unsupported } from "./fields.js";
import { parseMetadata } from "./metadata.js";
import type { ChatCompletionStorage, JsonRecord } from "./stored.js";
import { wireUsage } from "./wire.js";

/** What a request keeps from parsing to its answer. */
interface StoreState {
  store: boolean;
  metadata: Record<string, string>;
  /** Whether the request named a service tier (auto or default; the parser refuses others): the answer names it. */
  serviceTier: boolean;
  /** The request's messages as sent. */
  messages: unknown[];
  /** Set once the request is prepared: whose it is. */
  owner?: string;
}

const states = new WeakMap<InternalRequest, StoreState>();

/**
 * The chat-completions endpoint `base` with stored completions kept in `storage`; without storage, `store: true` is
 * refused by name.
 */
export function storingChatEndpoint(base: WireEndpoint, storage: ChatCompletionStorage | undefined): WireEndpoint {
  return {
    ...base,
    parse(body, responseId) {
      const request = base.parse(withoutStore(body, storage), responseId);
      const fields = body as Record<string, unknown>;
      const tier = own(fields, "service_tier");
      states.set(request, {
        store: own(fields, "store") === true,
        metadata: parseMetadata(own(fields, "metadata")),
        serviceTier: tier === "auto" || tier === "default",
        messages: own(fields, "messages") as unknown[],
      });
      return request;
    },
    async prepare(request, principal) {
      await base.prepare?.(request, principal);
      const state = states.get(request);
      if (state) state.owner = ownerOf(principal);
    },
    async respond(meta, result, request) {
      const body = (await base.respond(meta, result, request)) as JsonRecord;
      const state = states.get(request);
      if (!state) return body;
      if (state.serviceTier) body.service_tier = "default";
      if (state.store) await keep(storage!, state, body);
      return body;
    },
    stream(meta, request) {
      const inner = base.stream(meta, request);
      const state = states.get(request);
      if (!state || (!state.store && !state.serviceTier)) return inner;
      return new StoringStreamEncoder(inner, state, storage);
    },
  };
}

/**
 * The body the chat parser reads: `store: true` taken out, since the parser refuses it (it keeps nothing itself);
 * refused here by name when there is no storage. Anything else is left for the parser to check.
 */
function withoutStore(body: unknown, storage: ChatCompletionStorage | undefined): unknown {
  if (!isObject(body) || optionalBoolean(own(body, "store"), "store") !== true) return body;
  if (!storage) unsupported("store", "store is not supported: this server keeps no completions (start it with stored responses)");
  const { store: _store, ...rest } = body;
  return rest;
}

/** Keeps a finished completion; a failure is the client's to know (the answer is not kept, so it is not sent). */
async function keep(storage: ChatCompletionStorage, state: StoreState, completion: JsonRecord): Promise<void> {
  const id = completion.id as string;
  const createdAt = new Date();
  try {
    await storage.store.save({
      id,
      owner: state.owner!,
      model: completion.model as string,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + storage.retentionMs),
      metadata: state.metadata,
      completion,
      messages: state.messages.map((message, index) => storedMessage(id, index, message as JsonRecord)),
    });
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError("bad_gateway", `the completion was generated but could not be stored (${(error as Error).message}): retry, or send store: false`);
  }
}

/**
 * A request message as GET /v1/chat/completions/{id}/messages lists it: its own id, the message as sent, its text as
 * `content` and, when it was sent as parts, the parts as `content_parts` (OpenAI's ChatCompletionStoreMessage).
 */
function storedMessage(completionId: string, index: number, message: JsonRecord): JsonRecord {
  const content = message.content;
  if (!Array.isArray(content)) return { id: `${completionId}-${index}`, ...message, content: content ?? null, content_parts: null };
  const texts = (content as JsonRecord[]).filter((part) => part?.type === "text" && typeof part.text === "string").map((part) => part.text as string);
  return { id: `${completionId}-${index}`, ...message, content: texts.length > 0 ? texts.join("") : null, content_parts: content };
}

/** A stream that names the service tier on its chunks and keeps the completion they make before its finish goes out. */
class StoringStreamEncoder implements StreamEncoder {
  readonly #assembler: CompletionAssembler | undefined;
  readonly ping?: () => string;

  constructor(private readonly inner: StreamEncoder, private readonly state: StoreState, private readonly storage: ChatCompletionStorage | undefined) {
    if (state.store) this.#assembler = new CompletionAssembler();
    if (inner.ping) this.ping = () => inner.ping!();
  }

  async event(event: InternalEvent): Promise<string> {
    let out = await this.inner.event(event);
    if (this.state.serviceTier) out = withServiceTier(out);
    if (!this.#assembler) return out;
    for (const chunk of chunksOf(out)) this.#assembler.add(chunk);
    // The request's last finish (with several choices, each choice has its own before it).
    if (event.type !== "finish" || (event as { choice?: number }).choice !== undefined) return out;
    try {
      await keep(this.storage!, this.state, this.#assembler.completion(wireUsage(event.usage)));
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      // OpenAI streams end an error with the error object and no [DONE]: the finish is not written.
      return `data: ${JSON.stringify({ error: openAiErrorObject(error) })}\n\n`;
    }
    return out;
  }
}

/** The SSE text with `service_tier: "default"` on each chunk, after its `model` (where OpenAI puts it). */
function withServiceTier(sse: string): string {
  if (sse === "") return sse;
  return sse.split("\n\n").map((block) => {
    if (!block.startsWith("data: {")) return block;
    const chunk = JSON.parse(block.slice("data: ".length)) as JsonRecord;
    if (chunk.object !== "chat.completion.chunk") return block;
    const { choices, ...head } = chunk;
    return `data: ${JSON.stringify({ ...head, service_tier: "default", choices })}`;
  }).join("\n\n");
}
