// Reads tool calls in Gemma 4's format from a streamed answer (engine/chat/gemma4.ts):
//   <|tool_call>call:NAME{key:VALUE,...}<tool_call|><|tool_call>call:...
// where a VALUE is a string between `<|"|>` marks (its text as is, no escapes), a number, true, false, null, a list
// `[VALUE,...]` or an object `{key:VALUE,...}` with bare keys, as llama.cpp's Gemma 4 parser reads them. Text before
// the first call is the answer; whitespace between text and calls is the template's layout. A call streams as it is
// generated: its start once its name is whole (at its `{`), then its arguments as JSON, whole, at the `<tool_call|>`
// after their value (a string value may hold that marker).
// Markup may arrive split across deltas, so a possible partial `<|tool_call>` is held back until the next delta
// settles it; when generation was cut short, held markup never becomes text, and a call cut after its name is still a
// call, with its arguments as far as written. Output that opens a call but names none is passed on as text at a
// natural end.
import { GEMMA4_QUOTE, GEMMA4_TOOL_CALL_CLOSE, GEMMA4_TOOL_CALL_OPEN } from "../../engine/chat/gemma4.js";
import { MarkerCallReader } from "./marker-call-reader.js";
import { type ToolCallPiece, newToolCallId } from "./tool-calls.js";

/** What follows `<|tool_call>` before the name. */
const CALL_PREFIX = "call:";
/** A name longer than this, or with whitespace or markup in it, is not a tool's: the model is writing text. */
const LONGEST_NAME = 256;
const NAME = /^[^\s{}<>:,]+$/;

/**
 * Incremental reader of Gemma 4 calls: push() answer deltas, flush() once at the end; the same pieces as the Hermes
 * extractor (server/protocol/tool-calls.ts), `calls` counting the calls found.
 */
export class Gemma4CallReader extends MarkerCallReader {
  /** In "call", `held` is what follows the `<|tool_call>` that opened it. */
  private state: "text" | "call" = "text";
  private found = 0;
  private unfinished = false;
  /** The call whose start was sent: its id and name, and where its arguments start in `held`. */
  private streaming: { id: string; name: string; start: number } | undefined;
  /** readCall(): stop once a call is left; whether one was; the text after it. */
  private stopAfterCall = false;
  private leftCall = false;
  private leftOver: string | undefined;

  constructor(private readonly newId: () => string = newToolCallId) {
    super(GEMMA4_TOOL_CALL_OPEN);
  }

  get calls(): number {
    return this.found;
  }

  get endedInsideCall(): boolean {
    return this.unfinished;
  }

  /**
   * Reads `text` (which, outside a call, starts with whitespace and `<|tool_call>`) only as far as the call it holds:
   * `rest` is what follows the call's end (or the open marker, when no call follows it), unread; undefined while the
   * call goes on. Lets the caller read what lies outside calls in its own way (thought channels: output-readers.ts).
   */
  readCall(text: string): { pieces: ToolCallPiece[]; rest: string | undefined } {
    this.stopAfterCall = true;
    this.leftCall = false;
    try {
      const pieces = this.push(text);
      const rest = this.leftOver;
      this.leftOver = undefined;
      return { pieces, rest };
    } finally {
      this.stopAfterCall = false;
    }
  }

  push(delta: string): ToolCallPiece[] {
    this.held += delta;
    const pieces: ToolCallPiece[] = [];
    for (;;) {
      if (this.state === "text" && this.stopAfterCall && this.leftCall) {
        this.leftCall = false;
        this.leftOver = this.held;
        this.held = "";
        return pieces;
      }
      if (this.state === "text") {
        if (!this.readText(pieces)) return pieces;
        this.state = "call";
        continue;
      }
      if (!this.streaming) {
        const brace = this.held.indexOf("{");
        const head = brace >= 0 ? this.held.slice(0, brace) : this.held;
        const name = head.startsWith(CALL_PREFIX) ? head.slice(CALL_PREFIX.length) : undefined;
        const possible = name === undefined ? CALL_PREFIX.startsWith(head) : name === "" || (NAME.test(name) && name.length <= LONGEST_NAME);
        if (!possible) {
          // Not a call: the open tag and what follows are text.
          this.notCall(pieces);
          continue;
        }
        if (brace < 0) return pieces;
        if (name === undefined || name === "") {
          this.notCall(pieces);
          continue;
        }
        this.streaming = { id: this.newId(), name, start: brace };
        this.gap = "";
        pieces.push({ kind: "tool_call_start", index: this.found, id: this.streaming.id, name });
      }
      const close = this.callClose();
      if (close < 0) return pieces;
      this.endCall(pieces, this.held.slice(this.streaming.start, close));
      this.held = this.held.slice(close + GEMMA4_TOOL_CALL_CLOSE.length);
      this.state = "text";
      this.afterCall = true;
      this.leftCall = true;
    }
  }

  flush(cut = false): ToolCallPiece[] {
    const pieces: ToolCallPiece[] = [];
    if (this.state === "call") {
      if (this.streaming) {
        this.endCall(pieces, this.held.slice(this.streaming.start), true);
      } else if (!cut) {
        this.text(pieces, this.gap + GEMMA4_TOOL_CALL_OPEN + this.held);
      }
    } else if (!cut && !this.afterCall) {
      this.text(pieces, this.held);
    }
    this.held = "";
    this.state = "text";
    return pieces;
  }

  /**
   * Where the streamed call's `<tool_call|>` is in `held`, or -1 while none is written: the first after its arguments'
   * value as far as it reads (a string may hold the marker; llama.cpp reads a string to its closing mark first). A
   * string still open reads to the end, so no marker counts until it closes.
   */
  private callClose(): number {
    const start = this.streaming!.start;
    // Most deltas hold no marker at all: read the arguments only once one may close them.
    if (this.held.indexOf(GEMMA4_TOOL_CALL_CLOSE, start) < 0) return -1;
    const read = readGemma4Value(this.held.slice(start));
    return this.held.indexOf(GEMMA4_TOOL_CALL_CLOSE, start + read.end);
  }

  /** The `<|tool_call>` just read did not open a call: it goes out as text, and what follows is read as text. */
  private notCall(pieces: ToolCallPiece[]): void {
    this.markerAsText(pieces);
    this.state = "text";
    this.leftCall = true;
  }

  /** Ends the streamed call with its arguments' notation `body` (from its `{`); `cut`: generation stopped inside it. */
  private endCall(pieces: ToolCallPiece[], body: string, cut = false): void {
    const { id, name } = this.streaming!;
    const read = readGemma4Value(body);
    const whole = !cut && read.complete && read.end === body.trimEnd().length && isObject(read.value);
    const args = isObject(read.value) ? read.value : {};
    if (!whole) this.unfinished = true;
    const argumentsText = JSON.stringify(args);
    pieces.push({ kind: "tool_call_delta", index: this.found, arguments: argumentsText });
    pieces.push({ kind: "tool_call", index: this.found, id, name, arguments: args, argumentsText });
    this.found++;
    this.streaming = undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value read from Gemma 4's notation: as far as written, whether it was whole, and where its reading stopped. */
export interface Gemma4Read {
  value: unknown;
  complete: boolean;
  end: number;
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;

/**
 * Reads one value of Gemma 4's call notation at the start of `text` (leading whitespace skipped). A value cut short
 * is returned as far as it was written, with `complete` false: an object or list without its closing bracket holds
 * its whole members, a string without its closing mark is dropped. Text that is not the notation stops the reading
 * there, `complete` false too.
 */
export function readGemma4Value(text: string): Gemma4Read {
  let at = 0;
  let complete = true;
  const space = () => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  const value = (): unknown => {
    space();
    if (text.startsWith(GEMMA4_QUOTE, at)) {
      at += GEMMA4_QUOTE.length;
      const end = text.indexOf(GEMMA4_QUOTE, at);
      if (end < 0) {
        // A string cut short is dropped, as a partial trailing JSON member is (server/protocol/partial-json.ts).
        complete = false;
        at = text.length;
        return undefined;
      }
      const content = text.slice(at, end);
      at = end + GEMMA4_QUOTE.length;
      return content;
    }
    const c = text[at];
    if (c === "{") return object();
    if (c === "[") return list();
    for (const [word, result] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return result;
      }
    }
    const number = NUMBER.exec(text.slice(at));
    if (number) {
      at += number[0].length;
      return Number(number[0]);
    }
    complete = false;
    return undefined;
  };
  const object = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    at++; // {
    space();
    if (text[at] === "}") {
      at++;
      return out;
    }
    while (complete) {
      space();
      const colon = text.indexOf(":", at);
      const key = colon < 0 ? "" : text.slice(at, colon);
      if (colon < 0 || key === "" || key.includes("}")) {
        complete = false;
        break;
      }
      at = colon + 1;
      const item = value();
      // The key as written up to its colon, trailing whitespace included, as llama.cpp keeps it.
      if (item !== undefined) out[key] = item;
      if (!complete) break;
      space();
      if (text[at] === ",") {
        at++;
        continue;
      }
      if (text[at] === "}") {
        at++;
        return out;
      }
      complete = false;
    }
    return out;
  };
  const list = (): unknown[] => {
    const out: unknown[] = [];
    at++; // [
    space();
    if (text[at] === "]") {
      at++;
      return out;
    }
    while (complete) {
      const item = value();
      if (item !== undefined) out.push(item);
      if (!complete) break;
      space();
      if (text[at] === ",") {
        at++;
        continue;
      }
      if (text[at] === "]") {
        at++;
        return out;
      }
      complete = false;
    }
    return out;
  };
  const result = value();
  return { value: result, complete, end: at };
}
