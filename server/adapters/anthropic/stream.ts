// InternalEvents -> Anthropic server-sent events (spec 6.2): message_start, then per content block
// content_block_start / content_block_delta... / content_block_stop, then message_delta and message_stop. A thinking
// block's signature arrives as a signature_delta just before that block's content_block_stop, since it signs the
// whole block and is known only once the block ends. A tool call is a whole tool_use block: its start (empty input),
// one input_json_delta with the arguments' JSON, and its stop.
import type { InternalEvent, InternalToolCall, InternalUsage, ProtocolError } from "../../protocol/internal.js";
import { anthropicErrorPayload } from "./errors.js";
import { type AnthropicMessage, type AnthropicUsage, anthropicUsage, type MessageMeta } from "./response.js";
import type { ThinkingSigner } from "./thinking-signature.js";

/** One SSE frame: `event: <name>` and one `data:` line (JSON.stringify never emits a raw newline). */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The keep-alive frame, byte for byte as Anthropic sends it. */
const PING_FRAME = 'event: ping\ndata: {"type": "ping"}\n\n';

/** The stream events this writer produces (payloads of the `data:` lines). */
export type AnthropicStreamEvent =
  | { type: "message_start"; message: AnthropicMessage }
  | {
      type: "content_block_start";
      index: number;
      content_block:
        | { type: "thinking"; thinking: ""; signature: "" }
        | { type: "text"; text: "" }
        | { type: "tool_use"; id: string; name: string; input: Record<string, never> };
    }
  | {
      type: "content_block_delta";
      index: number;
      delta:
        | { type: "thinking_delta"; thinking: string }
        | { type: "signature_delta"; signature: string }
        | { type: "text_delta"; text: string }
        | { type: "input_json_delta"; partial_json: string };
    }
  | { type: "content_block_stop"; index: number }
  | {
      type: "message_delta";
      delta: { stop_reason: AnthropicMessage["stop_reason"]; stop_sequence: string | null };
      usage: Pick<AnthropicUsage, "output_tokens">;
    }
  | { type: "message_stop" };

const NO_USAGE: InternalUsage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0 };

/**
 * Turns one request's InternalEvents into SSE text, in order. Events after `finish` or `error` produce nothing, so a
 * caller may forward everything it gets. A delta before `start` (which the server should not send) opens the message
 * with zero usage rather than producing an invalid stream.
 */
export class MessagesStreamWriter {
  private started = false;
  private ended = false;
  /** The open content block, if any, with its index and (for thinking) its text so far, to sign at the end. */
  private open: { kind: "thinking" | "text" | "tool_use"; index: number; thinking: string; id?: string } | undefined;
  private blocks = 0;

  constructor(
    private readonly meta: MessageMeta,
    private readonly signer: ThinkingSigner,
  ) {}

  /** Whether message_stop or an error was written: the stream is complete. */
  get done(): boolean {
    return this.ended;
  }

  /** The SSE text for `e` (possibly several frames, possibly empty). */
  event(e: InternalEvent): string {
    if (this.ended) return "";
    switch (e.type) {
      case "start":
        return this.start(e.usage);
      case "thinking":
        return this.delta("thinking", e.text);
      case "text":
        return this.delta("text", e.text);
      case "tool_call_start":
        return this.startToolUse(e.id, e.name);
      case "tool_call_delta":
        return this.open?.kind === "tool_use" ? frame({ type: "content_block_delta", index: this.open.index, delta: { type: "input_json_delta", partial_json: e.arguments } }) : "";
      case "tool_call":
        // A streamed call's block is open: closing it is all that is left. Others come whole.
        if (this.open?.kind === "tool_use" && this.open.id === e.id) return this.close();
        return this.toolUse(e);
      case "finish": {
        let out = this.start(NO_USAGE) + this.close();
        // A response with no content still has one (empty) text block, as Anthropic's does.
        if (this.blocks === 0) out += this.openBlock("text") + this.close();
        out += frame({
          type: "message_delta",
          delta: { stop_reason: e.reason, stop_sequence: e.stopSequence ?? null },
          usage: { output_tokens: e.usage.completionTokens },
        });
        out += frame({ type: "message_stop" });
        this.ended = true;
        return out;
      }
      case "error":
        return this.error(e.error);
    }
  }

  /** A keep-alive `ping` event (send it while the prompt is queued or prefilled). */
  ping(): string {
    return this.ended ? "" : PING_FRAME;
  }

  /** An `error` event: `{type: "error", error: {type, message}}`. The stream is over after it. */
  error(error: ProtocolError): string {
    if (this.ended) return "";
    this.ended = true;
    return sseFrame("error", anthropicErrorPayload(error));
  }

  /** message_start, once. */
  private start(usage: InternalUsage): string {
    if (this.started) return "";
    this.started = true;
    return frame({
      type: "message_start",
      message: {
        id: this.meta.id,
        type: "message",
        role: "assistant",
        model: this.meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Output is counted on message_delta; at the start there is none.
        usage: { ...anthropicUsage(usage), output_tokens: 0 },
      },
    });
  }

  /** A delta of `kind`, in the open block of that kind or in a new one after closing the other kind's. */
  private delta(kind: "thinking" | "text", text: string): string {
    if (text.length === 0) return "";
    let out = this.start(NO_USAGE);
    if (this.open?.kind !== kind) out += this.close() + this.openBlock(kind);
    const block = this.open!;
    if (kind === "thinking") {
      block.thinking += text;
      return out + frame({ type: "content_block_delta", index: block.index, delta: { type: "thinking_delta", thinking: text } });
    }
    return out + frame({ type: "content_block_delta", index: block.index, delta: { type: "text_delta", text } });
  }

  /** A tool_use block's start (empty input), after closing the open block; its input follows as input_json_delta. */
  private startToolUse(id: string, name: string): string {
    const out = this.start(NO_USAGE) + this.close();
    const index = this.blocks++;
    this.open = { kind: "tool_use", index, thinking: "", id };
    return out + frame({ type: "content_block_start", index, content_block: { type: "tool_use", id, name, input: {} } });
  }

  /** A whole tool_use block (a call that did not stream), at the next index, after closing the open block. */
  private toolUse(call: InternalToolCall): string {
    let out = this.startToolUse(call.id, call.name);
    out += frame({ type: "content_block_delta", index: this.open!.index, delta: { type: "input_json_delta", partial_json: JSON.stringify(call.arguments) } });
    return out + this.close();
  }

  private openBlock(kind: "thinking" | "text"): string {
    const index = this.blocks++;
    this.open = { kind, index, thinking: "" };
    const content_block = kind === "thinking" ? { type: "thinking" as const, thinking: "" as const, signature: "" as const } : { type: "text" as const, text: "" as const };
    return frame({ type: "content_block_start", index, content_block });
  }

  /** Closes the open block; a thinking block gets its signature first. */
  private close(): string {
    const block = this.open;
    if (block === undefined) return "";
    this.open = undefined;
    let out = "";
    if (block.kind === "thinking") {
      out += frame({ type: "content_block_delta", index: block.index, delta: { type: "signature_delta", signature: this.signer.sign(block.thinking) } });
    }
    return out + frame({ type: "content_block_stop", index: block.index });
  }
}

/** A typed frame: the event name is the payload's type. */
function frame(event: AnthropicStreamEvent): string {
  return sseFrame(event.type, event);
}
