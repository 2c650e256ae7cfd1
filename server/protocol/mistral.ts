// Reads tool calls in Mistral's format from a streamed answer. Calls follow the `[TOOL_CALLS]` token, in the layout
// the model's chat template teaches (engine/chat/mistral.ts):
//   json (v3 / Nemo):    [TOOL_CALLS][{"name": "NAME", "arguments": {...}}, {...}]
//   args (tekken v11+):  [TOOL_CALLS]NAME[ARGS]{...}[TOOL_CALLS]NAME[ARGS]{...}
//                        (Mistral Small 3.2's template writes NAME[CALL_ID]ID[ARGS]; a written id is kept)
// Text before the first call is the answer. A call streams as it is generated (its start once the name is known, its
// arguments as they arrive, then the whole call); in a JSON list, a call written in another order of keys is passed on
// whole when its object closes. Markup may arrive split across deltas, so a possible partial `[TOOL_CALLS]` is held
// back until the next delta settles it; when generation was cut short, held markup never becomes text. Output that
// opens calls but holds none the model finished (not JSON, no name) is passed on as the text it was at a natural end.
import { randomBytes } from "node:crypto";
import type { InternalToolCall } from "./internal.js";
import { parsePartialJson } from "./partial-json.js";
import { MarkerCallReader } from "./marker-call-reader.js";
import { partialSuffix } from "./think-splitter.js";
import { type ToolCallPiece, parseToolCallBody } from "./tool-calls.js";

/** Opens Mistral tool calls. */
export const MISTRAL_TOOL_CALLS = "[TOOL_CALLS]";
/** Between a call's name and its arguments (layout "args"). */
const ARGS = "[ARGS]";
/** Between a call's name and its id, in Mistral Small 3.2's template (`NAME[CALL_ID]ID[ARGS]`). */
const CALL_ID = "[CALL_ID]";
/** A name longer than this, or with whitespace or JSON in it, is not a tool's: the model is writing text. */
const LONGEST_NAME = 256;
/** The head of a call object as constrained decoding writes it, up to its arguments' object. */
const STREAMED_HEAD = /^\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*(?=\{)/;

const ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * A fresh tool-call id as Mistral's templates want them: 9 letters and digits, so that a client sending the call back
 * renders it as is. Both adapters use it as is (OpenAI `id`, Anthropic `tool_use.id`).
 */
export function newMistralToolCallId(): string {
  const bytes = randomBytes(9);
  let id = "";
  // 256 is not a multiple of 62: the first 248 byte values map evenly, the rest are drawn again.
  for (let i = 0; id.length < 9; i++) {
    const byte = i < bytes.length ? bytes[i]! : randomBytes(1)[0]!;
    if (byte < 248) id += ALPHANUMERIC[byte % 62];
  }
  return id;
}

/** The call being streamed: its index, id and name, where its arguments start in `held`, and how far they were sent. */
interface StreamedCall {
  index: number;
  id: string;
  name: string;
  start: number;
  sent: number;
  /** Where its arguments end in `held`, once they have. */
  end?: number;
}

/**
 * Incremental reader of Mistral calls: push() answer deltas, flush() once at the end; the same pieces as the Hermes
 * extractor (server/protocol/tool-calls.ts), `calls` counting the calls found.
 */
export class MistralCallReader extends MarkerCallReader {
  /** In "list", "name" and "args", `held` is what follows the `[TOOL_CALLS]` that opened them. */
  private state: "text" | "list" | "name" | "args" = "text";
  private found = 0;
  private unfinished = false;
  /** Scanning a JSON list ("list") or a call's arguments ("args"). */
  private scan = new JsonScan();
  /** How far `held` was scanned. */
  private scanned = 0;
  /** In "list": the list's `[` was read; where the current call object starts; calls the list gave so far. */
  private listOpened = false;
  private element: number | undefined;
  private listCalls = 0;
  private streaming: StreamedCall | undefined;

  constructor(private readonly layout: "json" | "args", private readonly newId: () => string = newMistralToolCallId) {
    super(MISTRAL_TOOL_CALLS);
  }

  /** How many tool calls were found so far. */
  get calls(): number {
    return this.found;
  }

  /** Whether a call ended without whole arguments: generation stopped inside them, or they were not a JSON object. */
  get endedInsideCall(): boolean {
    return this.unfinished;
  }

  push(delta: string): ToolCallPiece[] {
    this.held += delta;
    const pieces: ToolCallPiece[] = [];
    for (;;) {
      switch (this.state) {
        case "text": {
          if (!this.readText(pieces)) return pieces;
          this.open();
          continue;
        }
        case "name": {
          const at = this.held.indexOf(ARGS);
          const head = callHead(this.held.slice(0, at >= 0 ? at : this.held.length - partialSuffix(this.held, ARGS)), at >= 0);
          if (!head) {
            this.notCalls(pieces);
            continue;
          }
          if (at < 0) return pieces;
          this.held = this.held.slice(at + ARGS.length);
          const { name } = head;
          const id = head.id !== undefined && /^[A-Za-z0-9]{9}$/.test(head.id) ? head.id : this.newId();
          this.streaming = { index: this.found, id, name, start: 0, sent: 0 };
          this.found++;
          pieces.push({ kind: "tool_call_start", index: this.streaming.index, id: this.streaming.id, name });
          this.state = "args";
          this.scan = new JsonScan();
          this.scanned = 0;
          continue;
        }
        case "args": {
          const call = this.streaming!;
          const end = this.scanArguments();
          if (end === undefined) {
            this.sendArguments(pieces, this.held.length);
            return pieces;
          }
          call.end = end;
          this.sendArguments(pieces, end);
          this.endCall(pieces, true);
          this.held = this.held.slice(end);
          this.state = "text";
          this.afterCall = true;
          continue;
        }
        case "list": {
          if (this.scanList(pieces)) continue;
          return pieces;
        }
      }
    }
  }

  /**
   * Ends the answer. At a natural end, held text is what it was (a partial marker included), and calls the model
   * opened but wrote nothing whole of are the text they were. When generation was `cut` short, held markup is dropped.
   * Either way a call whose name was written counts, with its arguments as far as written (marked unfinished).
   */
  flush(cut = false): ToolCallPiece[] {
    const pieces: ToolCallPiece[] = [];
    switch (this.state) {
      case "text":
        if (!(cut && partialSuffix(this.held, MISTRAL_TOOL_CALLS) > 0)) this.text(pieces, this.found > 0 ? this.held.trimEnd() : this.held);
        break;
      case "name":
        if (!cut) this.text(pieces, this.gap + MISTRAL_TOOL_CALLS + this.held);
        break;
      case "args":
        this.sendArguments(pieces, this.held.length);
        this.endCall(pieces, false);
        break;
      case "list":
        if (this.streaming) {
          this.sendArguments(pieces, this.streaming.end ?? this.held.length);
          this.endCall(pieces, this.streaming.end !== undefined);
        } else if (this.element !== undefined && cut) {
          this.cutCall(pieces, this.held.slice(this.element));
        }
        if (this.listCalls === 0 && !cut) this.text(pieces, this.gap + MISTRAL_TOOL_CALLS + this.held);
        break;
    }
    this.held = "";
    this.state = "text";
    return pieces;
  }

  /** After `[TOOL_CALLS]`: a JSON list or a call's name follows. */
  private open(): void {
    this.state = this.layout === "json" ? "list" : "name";
    this.scan = new JsonScan();
    this.scanned = 0;
    this.listOpened = false;
    this.element = undefined;
    this.listCalls = 0;
  }

  /** What followed `[TOOL_CALLS]` is not calls: it and the marker are text, and reading goes on from there. */
  private notCalls(pieces: ToolCallPiece[]): void {
    this.markerAsText(pieces);
    this.state = "text";
  }

  /** Reads the JSON list in `held` as far as it came; true when the list ended (or was not one) and reading goes on. */
  private scanList(pieces: ToolCallPiece[]): boolean {
    const text = this.held;
    for (let i = this.scanned; i < text.length; i++) {
      const c = text[i]!;
      if (!this.listOpened) {
        if (/\s/.test(c)) continue;
        if (c !== "[") {
          this.notCalls(pieces);
          return true;
        }
        this.listOpened = true;
        this.scan.depth = 1;
        continue;
      }
      const event = this.scan.step(c);
      if (event === "open" && this.scan.depth === 2) this.element = i;
      else if (event === "close" && this.scan.depth === 2 && this.streaming && this.streaming.end === undefined && i >= this.streaming.start) this.streaming.end = i + 1;
      else if (event === "close" && this.scan.depth === 1 && this.element !== undefined) {
        this.stream(pieces, i);
        this.endElement(pieces, text.slice(this.element, i + 1));
      } else if (event === "close" && this.scan.depth === 0) {
        const rest = text.slice(i + 1);
        if (this.listCalls === 0) this.text(pieces, this.gap + MISTRAL_TOOL_CALLS + text.slice(0, i + 1));
        else this.afterCall = true;
        this.held = rest;
        this.state = "text";
        this.gap = "";
        return true;
      }
    }
    this.scanned = text.length;
    this.stream(pieces, text.length);
    return false;
  }

  /** Streams the current call object of a list up to `end` in `held`, once its head is in the constrained layout. */
  private stream(pieces: ToolCallPiece[], end: number): void {
    if (this.element === undefined) return;
    if (!this.streaming) {
      const head = STREAMED_HEAD.exec(this.held.slice(this.element, end));
      const name = head ? parseJson(head[1]!) : undefined;
      if (typeof name !== "string" || name === "") return;
      const start = this.element + head![0].length;
      this.streaming = { index: this.found, id: this.newId(), name, start, sent: start };
      // The arguments may have closed before the head was seen (all in one delta): find where.
      const scan = new JsonScan();
      for (let i = start; i < end && this.streaming.end === undefined; i++) if (scan.step(this.held[i]!) === "close" && scan.depth === 0) this.streaming.end = i + 1;
      this.found++;
      this.listCalls++;
      pieces.push({ kind: "tool_call_start", index: this.streaming.index, id: this.streaming.id, name });
    }
    this.sendArguments(pieces, Math.min(end, this.streaming.end ?? end));
  }

  /** A call object of the list closed: the streamed call ends, or one in another layout is passed on whole if it is one. */
  private endElement(pieces: ToolCallPiece[], body: string): void {
    this.element = undefined;
    if (this.streaming) {
      this.endCall(pieces, this.streaming.end !== undefined);
      return;
    }
    const parsed = parseToolCallBody(body);
    if (!parsed) return;
    pieces.push({ kind: "tool_call", index: this.found, id: this.newId(), ...parsed });
    this.found++;
    this.listCalls++;
  }

  /** A call object cut before its head was whole: a call once its name is written, else nothing. */
  private cutCall(pieces: ToolCallPiece[], body: string): void {
    const head = /^\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")(\s*,\s*"arguments"\s*:\s*)?/.exec(body);
    const name = head ? parseJson(head[1]!) : undefined;
    if (typeof name !== "string" || name === "") return;
    const argumentsText = head![2] === undefined ? "" : body.slice(head![0].length).trimEnd();
    const partial = parsePartialJson(argumentsText);
    this.unfinished = true;
    pieces.push({ kind: "tool_call", index: this.found, id: this.newId(), name, arguments: isObject(partial) ? partial : {}, argumentsText });
    this.found++;
    this.listCalls++;
  }

  /** Sends the streamed call's arguments up to `end` in `held` (whitespace before them is layout). */
  private sendArguments(pieces: ToolCallPiece[], end: number): void {
    const call = this.streaming!;
    if (call.sent === call.start) {
      while (call.sent < end && /\s/.test(this.held[call.sent]!)) call.sent++;
      call.start = call.sent;
    }
    if (end > call.sent) pieces.push({ kind: "tool_call_delta", index: call.index, arguments: this.held.slice(call.sent, end) });
    call.sent = Math.max(call.sent, end);
  }

  /** Ends the streamed call: its arguments are `whole` (they parse as an object) or read as far as written. */
  private endCall(pieces: ToolCallPiece[], whole: boolean): void {
    const call = this.streaming!;
    this.streaming = undefined;
    const argumentsText = this.held.slice(call.start, call.sent).trimEnd();
    const parsed = whole ? parseJson(argumentsText) : undefined;
    let args: Record<string, unknown>;
    if (isObject(parsed)) args = parsed;
    else {
      this.unfinished = true;
      const partial = parsePartialJson(argumentsText);
      args = isObject(partial) ? partial : {};
    }
    const toolCall: InternalToolCall = { id: call.id, name: call.name, arguments: args, argumentsText };
    pieces.push({ kind: "tool_call", index: call.index, ...toolCall });
  }

  /** Scans a call's arguments ("args") from where it stopped; where the JSON value ends in `held`, once it has. */
  private scanArguments(): number | undefined {
    const text = this.held;
    for (let i = this.scanned; i < text.length; i++) {
      const c = text[i]!;
      if (!this.scan.started) {
        if (/\s/.test(c)) continue;
        this.scan.started = true;
        if (c !== "{" && c !== "[" && c !== '"') {
          // Not an object: the value runs to the next call or the end (a call whose arguments are not an object).
          const next = text.indexOf(MISTRAL_TOOL_CALLS, i);
          this.scanned = text.length;
          this.scan.bare = true;
          return next >= 0 ? next : undefined;
        }
      }
      if (this.scan.bare) {
        const next = text.indexOf(MISTRAL_TOOL_CALLS, i);
        this.scanned = text.length;
        return next >= 0 ? next : undefined;
      }
      const event = this.scan.step(c);
      if (event === "close" && this.scan.depth === 0) return i + 1;
      if (event === "string-end" && this.scan.depth === 0) return i + 1;
    }
    // Possible partial marker after a bare value is held by the caller's flush; objects need nothing more.
    this.scanned = text.length;
    return undefined;
  }
}

/**
 * The name of a call (and the id, when the model wrote `NAME[CALL_ID]ID` as Mistral Small 3.2's template does) from
 * what precedes `[ARGS]`, or undefined when it cannot be a call's head; `complete`: `[ARGS]` followed it.
 */
function callHead(text: string, complete: boolean): { name: string; id?: string } | undefined {
  const trimmed = text.trim();
  const marker = trimmed.indexOf(CALL_ID);
  let name = trimmed;
  let id: string | undefined;
  if (marker >= 0) {
    name = trimmed.slice(0, marker);
    id = trimmed.slice(marker + CALL_ID.length);
    if (!/^[A-Za-z0-9]*$/.test(id)) return undefined;
  } else if (!complete) {
    name = trimmed.slice(0, trimmed.length - partialSuffix(trimmed, CALL_ID));
  }
  if (!/^[^\s[\]{}"]*$/.test(name) || name.length > LONGEST_NAME || (complete && name === "")) return undefined;
  return id === undefined ? { name } : { name, id };
}

/** Tracks JSON strings, escapes and bracket depth one character at a time. */
class JsonScan {
  depth = 0;
  started = false;
  /** The value is not a container or string: it runs to the next marker. */
  bare = false;
  private inString = false;
  private escaped = false;

  /** Reads one character: whether it opened or closed a container or ended a string. */
  step(c: string): "open" | "close" | "string-end" | undefined {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === "\\") this.escaped = true;
      else if (c === '"') {
        this.inString = false;
        return "string-end";
      }
      return undefined;
    }
    if (c === '"') this.inString = true;
    else if (c === "{" || c === "[") {
      this.depth++;
      return "open";
    } else if (c === "}" || c === "]") {
      this.depth--;
      return "close";
    }
    return undefined;
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
