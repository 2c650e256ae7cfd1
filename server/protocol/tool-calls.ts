// Extracts the model's tool calls from its streamed answer. Recognises the Hermes format that the chat templates of
// Qwen2.5, Qwen3 and SmolLM2-style tool templates teach the model: one or more
// `<tool_call>\n{"name": "...", "arguments": {...}}\n</tool_call>` after (optional) text. Tags may arrive split across
// deltas, so text that may be the start of `<tool_call>` is held back until the next delta settles it.
//
// With `streamCalls` (constrained decoding wrote the calls), a call in the constrained layout (`{"name": ...,
// "arguments": {...}}` in that order) streams as it is generated: a start piece once its name is known, argument
// fragments as they arrive, then the whole call at its closing tag. Other calls (and all, without `streamCalls`) are
// held until the end (flush) and passed on after all text; one whose JSON does not parse as a call is passed on as the
// raw text it was. Whitespace around calls is the template's layout and is dropped. When generation was cut short
// (token limit, stop sequence), what is held back is unfinished markup and never becomes text (see flush).
import { randomBytes } from "node:crypto";
import type { InternalToolCall } from "./internal.js";
import { parsePartialJson } from "./partial-json.js";
import { partialSuffix } from "./think-splitter.js";

/** The tag pair around one tool call. */
export interface ToolCallTags {
  open: string;
  close: string;
}

/** Hermes / Qwen tool-call tags. */
export const HERMES_TOOL_CALL_TAGS: ToolCallTags = Object.freeze({ open: "<tool_call>", close: "</tool_call>" });

/**
 * A piece of the answer: text; a streamed call's start (its name) and argument fragments, `index` counting calls from
 * 0; or a complete tool call (after its start and fragments when it streamed).
 */
export type ToolCallPiece =
  | { kind: "text"; text: string }
  | { kind: "tool_call_start"; index: number; id: string; name: string }
  | { kind: "tool_call_delta"; index: number; arguments: string }
  | ({ kind: "tool_call"; index: number } & InternalToolCall);

/** The head of a call as constrained decoding writes it, up to the start of the arguments' JSON. */
const STREAMED_HEAD = /^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*(?=\{)/;

/** The head of a call that generation cut short: its whole name, then the arguments' key if it was written. */
const CUT_HEAD = /^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")(\s*,\s*"arguments"\s*:\s*)?/;

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
  private pending: Array<InternalToolCall & { index: number }> = [];
  private found = 0;
  /** A call was ended with its arguments incomplete. */
  private unfinished = false;
  /** The call being streamed: its index, id and name, where its arguments start in `held`, and how far they were sent. */
  private streaming: { index: number; id: string; name: string; start: number; sent: number; scan: JsonValueScan } | undefined;

  constructor(
    private readonly tags: ToolCallTags = HERMES_TOOL_CALL_TAGS,
    private readonly newId: () => string = newToolCallId,
    /**
     * Stream calls in the constrained layout as they are generated (set when constrained decoding writes the calls,
     * so the layout is guaranteed); without it every call is held until flush.
     */
    private readonly streamCalls = false,
  ) {}

  /** How many tool calls were recognised so far (including those flush() has yet to return). */
  get calls(): number {
    return this.found;
  }

  /** Whether flush() ended a call whose arguments were not complete: generation stopped inside them. */
  get endedInsideCall(): boolean {
    return this.unfinished;
  }

  /** Feeds one delta; returns the text that is settled and the pieces of streamed calls (held calls come from flush()). */
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
      let close: number;
      if (this.streaming || (this.streamCalls && this.pending.length === 0)) {
        this.stream(pieces, this.held.length);
        // A streamed call ends at the first close tag after its arguments: one inside an argument string is content.
        if (this.streaming && !this.streaming.scan.done) return pieces;
        close = this.held.indexOf(this.tags.close, this.streaming?.sent ?? 0);
      } else {
        close = this.held.indexOf(this.tags.close);
      }
      if (close < 0) return pieces; // the call's JSON is incomplete
      this.call(pieces, this.held.slice(0, close), this.tags.close);
      this.held = this.held.slice(close + this.tags.close.length);
      this.state = "text";
    }
  }

  /**
   * Ends the answer: held text, then every held tool call in order. An unterminated call (the model stopped before
   * the closing tag) still counts when its JSON is a whole call, and a streamed one always does, with the arguments it
   * got (`argumentsText` as written, `arguments` as far as written: see parsePartialJson). At a natural end, anything
   * else held is the text it was; trailing whitespace is kept when no call was found, so an answer without calls
   * comes out exactly as it went in.
   *
   * When generation was `cut` short (the token limit or a stop sequence ended it), what is held is markup the model did
   * not finish, never text: a partial open tag is dropped with the whitespace before it, and an unfinished call counts
   * once its name is written (its arguments as far as written), and is dropped before that.
   */
  flush(cut = false): ToolCallPiece[] {
    const pieces: ToolCallPiece[] = [];
    const rest = this.held;
    if (this.state === "call") {
      this.call(pieces, rest, "", cut);
    } else if (cut && partialSuffix(rest, this.tags.open) > 0) {
      // A call cut inside its open tag: held back since push() could not tell, dropped now.
    } else {
      this.text(pieces, this.found > 0 ? rest.trimEnd() : rest);
    }
    this.held = "";
    this.state = "text";
    for (const call of this.pending) pieces.push({ kind: "tool_call", ...call });
    this.pending = [];
    return pieces;
  }

  private text(pieces: ToolCallPiece[], text: string): void {
    if (text !== "") pieces.push({ kind: "text", text });
  }

  /**
   * Streams the call in `held` up to `end`: its start once the head is complete, then argument text as far as the
   * arguments' JSON value goes. Only while no call is held back (so calls stay in order).
   */
  private stream(pieces: ToolCallPiece[], end: number): void {
    if (!this.streaming) {
      if (!this.streamCalls || this.pending.length > 0) return;
      const head = STREAMED_HEAD.exec(this.held.slice(0, end));
      if (!head) return;
      const name = parseJson(head[1]!);
      if (typeof name !== "string" || name === "") return;
      this.streaming = { index: this.found, id: this.newId(), name, start: head[0].length, sent: head[0].length, scan: new JsonValueScan() };
      pieces.push({ kind: "tool_call_start", index: this.found, id: this.streaming.id, name });
    }
    const call = this.streaming;
    const stop = call.scan.feed(this.held, call.sent, end);
    if (stop > call.sent) pieces.push({ kind: "tool_call_delta", index: call.index, arguments: this.held.slice(call.sent, stop) });
    call.sent = stop;
  }

  /**
   * A call's body (and its closing tag, if it came): streamed, held, or its raw text when it does not parse. When
   * generation was `cut` inside the body, a call with its name written is held with its arguments as far as written,
   * and one without is dropped.
   */
  private call(pieces: ToolCallPiece[], body: string, close: string, cut = false): void {
    const streamed = this.streaming;
    this.streaming = undefined;
    if (streamed) {
      const argumentsText = body.slice(streamed.start, streamed.sent);
      const parsed = streamed.scan.done ? parseJson(argumentsText) : parsePartialJson(argumentsText);
      if (!streamed.scan.done) this.unfinished = true;
      pieces.push({ kind: "tool_call", index: streamed.index, id: streamed.id, name: streamed.name, arguments: isObject(parsed) ? parsed : {}, argumentsText });
      this.found++;
      this.afterCall = true;
    } else {
      let parsed = parseToolCallBody(body);
      if (!parsed && cut) {
        parsed = cutCall(body);
        if (parsed && !isObject(parseJson(parsed.argumentsText!))) this.unfinished = true;
      }
      if (parsed) {
        this.pending.push({ index: this.found, id: this.newId(), ...parsed });
        this.found++;
        this.afterCall = true;
      } else if (!cut) {
        this.text(pieces, this.gap + this.tags.open + body + close);
      }
    }
    this.gap = "";
  }
}

/**
 * Finds where one JSON value ends in text that arrives in pieces: tracks strings, escapes and bracket depth, so the
 * arguments can be streamed without the template's layout after them.
 */
class JsonValueScan {
  private started = false;
  private ended = false;

  /** The value is complete. */
  get done(): boolean {
    return this.ended;
  }

  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Scans text[from, to) and returns where the value's text so far ends (at most `to`). */
  feed(text: string, from: number, to: number): number {
    for (let i = from; i < to; i++) {
      if (this.ended) return i;
      const c = text[i]!;
      if (!this.started) {
        if (/\s/.test(c)) continue;
        this.started = true;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === "\\") this.escaped = true;
        else if (c === '"') {
          this.inString = false;
          if (this.depth === 0) this.ended = true;
        }
        continue;
      }
      if (c === '"') this.inString = true;
      else if (c === "{" || c === "[") this.depth++;
      else if (c === "}" || c === "]") {
        if (this.depth === 0) return i; // the call object's own closing brace: the value ended before it
        if (--this.depth === 0) this.ended = true;
      } else if (this.depth === 0 && (/\s/.test(c) || c === ",")) return i; // after a bare number or literal
    }
    return to;
  }
}

/**
 * The call in a body that generation cut before its arguments streamed (or, without `streamCalls`, before its JSON
 * was whole): its name once written, and its arguments as far as written; undefined before the name is complete.
 */
function cutCall(body: string): Omit<InternalToolCall, "id"> | undefined {
  const head = CUT_HEAD.exec(body);
  const name = head ? parseJson(head[1]!) : undefined;
  if (typeof name !== "string" || name === "") return undefined;
  const argumentsText = head![2] === undefined ? "" : body.slice(head![0].length).trimEnd();
  const parsed = parsePartialJson(argumentsText);
  return { name, arguments: isObject(parsed) ? parsed : {}, argumentsText };
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
