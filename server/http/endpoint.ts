// What the HTTP layer needs of a wire format: parse a body into an InternalRequest, encode a collected result or a
// stream of InternalEvents, shape errors and model listings, and name fields as the format does. One implementation
// per adapter (server/adapters/endpoints.ts).
import type { TokenLogprob } from "../../engine/request.js";
import type { InternalEvent, InternalRequest, InternalToolCall, ProtocolError, WireFormat } from "../protocol/internal.js";
import type { Principal } from "./auth.js";

/** Identity of one response. */
export interface ResponseMeta {
  id: string;
  /** The slug the client asked for. */
  model: string;
  /** Unix seconds. */
  created: number;
}

/** A whole generation, for non-streaming responses. */
export interface CollectedResult extends CollectedChoice {
  /**
   * With InternalRequest.choices > 1: each choice, by index (the fields above are then empty, and `finish` is the
   * last one, with the usage of all).
   */
  choices?: CollectedChoice[];
}

/** One choice of a whole generation. */
export interface CollectedChoice {
  thinking: string;
  text: string;
  /** The model's tool calls, in order. */
  toolCalls: InternalToolCall[];
  /** With InternalRequest.logprobs: those of the `thinking` events and of the `text` events, each in order. */
  logprobs?: { thinking: TokenLogprob[]; text: TokenLogprob[] };
  finish: Extract<InternalEvent, { type: "finish" }>;
}

/** Turns events into the format's stream frames. */
export interface StreamEncoder {
  /** The frames (possibly none) for one event; a promise where the format keeps state first (a stored response). */
  event(event: InternalEvent): string | Promise<string>;
  /** A keep-alive frame for long silences, if the format has one. */
  ping?(): string;
}

/** A served model as listings show it. */
export interface ListedModel {
  id: string;
  /** Unix seconds when it was loaded. */
  created: number;
  /** Whether it takes images (listed as `capabilities: ["vision"]`). */
  vision: boolean;
}

/** A wire format, as the HTTP layer uses it. */
export interface WireEndpoint {
  format: WireFormat;
  /** The POST path, e.g. /v1/chat/completions. */
  path: string;
  /**
   * @param responseId the id the response will have, when known (a format may name the request's parts after it).
   * @throws ProtocolError naming the bad field.
   */
  parse(body: unknown, responseId?: string): InternalRequest;
  /**
   * Completes a parsed request with what the format keeps for the principal (the Responses API's stored
   * conversation), before its prompt is counted. @throws ProtocolError (a missing stored response: 404).
   */
  prepare?(request: InternalRequest, principal: Principal): Promise<void>;
  /** The whole response's body; a promise where the format keeps state first. @throws ProtocolError. */
  respond(meta: ResponseMeta, result: CollectedResult, request: InternalRequest): unknown;
  stream(meta: ResponseMeta, request: InternalRequest): StreamEncoder;
  /** The format's error response (status, body, headers such as Retry-After). */
  error(error: ProtocolError): { status: number; body: unknown; headers: Record<string, string> };
  /** Prefix of this format's response ids (chatcmpl-, msg_, resp_). */
  idPrefix: string;
  /** The wire name of an engine request field, for error messages (`sampling.topP` -> `top_p`, `input` -> `messages`). */
  wireField(field: string): string;
  /** GET /v1/models and /v1/models/{id} in this format's shape. @throws ProtocolError for a bad query. */
  models: { list(models: readonly ListedModel[], query: URLSearchParams): unknown; one(model: ListedModel): unknown };
  /** Whether a request to a route both formats share (the models) is in this format, from its headers. */
  claims(header: (name: string) => string): boolean;
  /** Counting a request's input tokens without running it, where the format has such a route. */
  tokenCount?: {
    path: string;
    /** @throws ProtocolError naming the bad field. */
    parse(body: unknown): InternalRequest;
    respond(inputTokens: number): unknown;
  };
}
