// Extracts the model's tool calls from its streamed answer. Recognises the Hermes format that the chat templates of
// Qwen2.5, Qwen3 and SmolLM2-style tool templates teach the model: one or more
// `<tool_call>\n{"name": "...", "arguments": {...}}\n</tool_call>` after (optional) text. Tags may arrive split across
// deltas, so text that may be the start of `<tool_call>` is held back until the next delta settles it, and a call's
// JSON is held until its closing tag. A call whose JSON does not parse as a call is passed on as the raw text it was.
//
// Order guarantee: every text piece comes before every tool call. Calls are kept until flush() (at the end of the
// generation, which follows the last call at once in practice), so text the model writes after a call (rare) still
// streams before the calls. Whitespace around calls is the template's layout and is dropped.
import { randomBytes } from "node:crypto";
import type { InternalToolCall } from "./internal.js";
import { partialSuffix } from "./think-splitter.js";

/** The tag pair around one tool call. */
export interface ToolCallTags {
  open: string;
  close: string;
}

/** Hermes / Qwen tool-call tags. */
export const HERMES_TOOL_CALL_TAGS: ToolCallTags = Object.freeze({ open: "<tool_call>", close: "</tool_call>" });

/** A piece of the answer: text, or a complete tool call. */
export type ToolCallPiece = { kind: "text"; text: string } | ({ kind: "tool_call" } & InternalToolCall);

/** A fresh tool-call id, `call_` and 24 hex digits; both adapters use it as is (OpenAI `id`, Anthropic `tool_use.id`). */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString("hex")}`;
}

/**
 * Parses the JSON between the tags: `{"name": string, "arguments": object | JSON string of an object}` (`parameters`
 * is accepted for `arguments`, and missing arguments mean none). Returns undefined when it is not such a call.
 */
export function parseToolCallBody(body: string): Omit<InternalToolCall, "id"> | undefined {
  const call = parseJson(body.trim());
  if (!isObject(call) || typeof call.name !== "string" || call.name === "") return undefined;
  let args: unknown = call.arguments ?? call.parameters ?? {};
  if (typeof args === "string") args = args.trim() === "" ? {} : parseJson(args);
  if (!isObject(args)) return undefined;
  return { name: call.name, arguments: args };
}

/** Incremental extractor: push() answer deltas, flush() once at the end; `calls` counts the calls found. */
export class ToolCallExtractor {
  private state: "text" | "call" = "text";
  private held = "";
  /** The whitespace before the open tag: layout if the call parses, content if it turns out to be text. */
  private gap = "";
  /** Whitespace at the start of `held` is layout (it follows a call), not content. */
  private afterCall = false;
  private pending: InternalToolCall[] = [];
  private found = 0;

  constructor(
    private readonly tags: ToolCallTags = HERMES_TOOL_CALL_TAGS,
    private readonly newId: () => string = newToolCallId,
  ) {}

  /** How many tool calls were recognised so far (including those flush() has yet to return). */
  get calls(): number {
    return this.found;
  }

  /** Feeds one delta; returns the text that is settled (tool calls come from flush()). */
  push(delta: string): ToolCallPiece[] {
    this.held += delta;
    const pieces: ToolCallPiece[] = [];
    for (;;) {
      if (this.afterCall) {
        this.held = this.held.trimStart();
        if (this.held === "") return pieces;
        this.afterCall = false;
      }
      if (this.state === "text") {
        const open = this.held.indexOf(this.tags.open);
        if (open >= 0) {
          const before = this.held.slice(0, open);
          const text = before.trimEnd();
          this.text(pieces, text);
          this.gap = before.slice(text.length);
          this.held = this.held.slice(open + this.tags.open.length);
          this.state = "call";
          continue;
        }
        // Hold a possible partial tag, and the whitespace before it (dropped if a call follows).
        const partial = partialSuffix(this.held, this.tags.open);
        const safe = this.held.slice(0, this.held.length - partial).trimEnd().length;
        this.text(pieces, this.held.slice(0, safe));
        this.held = this.held.slice(safe);
        return pieces;
      }
      const close = this.held.indexOf(this.tags.close);
      if (close < 0) return pieces; // the call's JSON is incomplete
      this.call(pieces, this.held.slice(0, close), this.tags.close);
      this.held = this.held.slice(close + this.tags.close.length);
      this.state = "text";
    }
  }

  /**
   * Ends the answer: held text, then every tool call in order. An unterminated call (the model stopped before the
   * closing tag) still counts when its JSON is a whole call; otherwise it is text. Trailing whitespace is kept when
   * no call was found, so an answer without calls comes out exactly as it went in.
   */
  flush(): ToolCallPiece[] {
    const pieces: ToolCallPiece[] = [];
    const rest = this.held;
    this.held = "";
    if (this.state === "call") {
      this.state = "text";
      this.call(pieces, rest, "");
    } else {
      this.text(pieces, this.pending.length > 0 ? rest.trimEnd() : rest);
    }
    for (const call of this.pending) pieces.push({ kind: "tool_call", ...call });
    this.pending = [];
    return pieces;
  }

  private text(pieces: ToolCallPiece[], text: string): void {
    if (text !== "") pieces.push({ kind: "text", text });
  }

  /** A call's body (and its closing tag, if it came): a pending call, or its raw text when it does not parse. */
  private call(pieces: ToolCallPiece[], body: string, close: string): void {
    const parsed = parseToolCallBody(body);
    if (parsed) {
      this.pending.push({ id: this.newId(), ...parsed });
      this.found++;
      this.afterCall = true;
    } else {
      this.text(pieces, this.gap + this.tags.open + body + close);
    }
    this.gap = "";
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
