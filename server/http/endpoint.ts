// What the HTTP layer needs of a wire format: parse a body into an InternalRequest, encode a collected result or a
// stream of InternalEvents, and shape errors. One implementation per adapter (server/adapters/*/endpoint.ts).
import type { InternalEvent, InternalRequest, InternalToolCall, ProtocolError, WireFormat } from "../protocol/internal.js";

/** Identity of one response. */
export interface ResponseMeta {
  id: string;
  /** The slug the client asked for. */
  model: string;
  /** Unix seconds. */
  created: number;
}

/** A whole generation, for non-streaming responses. */
export interface CollectedResult {
  thinking: string;
  text: string;
  /** The model's tool calls, in order. */
  toolCalls: InternalToolCall[];
  finish: Extract<InternalEvent, { type: "finish" }>;
}

/** Turns events into the format's stream frames. */
export interface StreamEncoder {
  /** The frames (possibly none) for one event. */
  event(event: InternalEvent): string;
  /** A keep-alive frame for long silences, if the format has one. */
  ping?(): string;
}

/** A wire format, as the HTTP layer uses it. */
export interface WireEndpoint {
  format: WireFormat;
  /** The POST path, e.g. /v1/chat/completions. */
  path: string;
  /** @throws ProtocolError naming the bad field. */
  parse(body: unknown): InternalRequest;
  respond(meta: ResponseMeta, result: CollectedResult): unknown;
  stream(meta: ResponseMeta, request: InternalRequest): StreamEncoder;
  error(error: ProtocolError): { status: number; body: unknown; headers: Record<string, string> };
  /** Status of a full queue in this format (429 for OpenAI clients, 529 overloaded for Anthropic's). */
  overloadKind: "rate_limit" | "overloaded";
  /** Prefix of this format's response ids (chatcmpl-, msg_). */
  idPrefix: string;
}
