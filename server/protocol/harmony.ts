// Reads a reply in OpenAI's harmony format (gpt-oss) as it streams. The prompt ends with `<|start|>assistant`, so the
// output is a header, `<|message|>`, a body and its end (`<|end|>`), then more messages each opened by
// `<|start|>assistant`:
//   <|channel|>analysis<|message|>…<|end|>                                   reasoning
//   <|start|>assistant<|channel|>commentary<|message|>…<|end|>               a preamble for the user: answer text
//   <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}   a tool call
//   <|start|>assistant<|channel|>final<|message|>…                           the answer
// The recipient (`to=functions.NAME`) may also stand before `<|channel|>`. `<|return|>` and `<|call|>` end generation
// (the engine stops at them and does not show them); they are still read as the end of a body if they appear.
// Markup may arrive split across deltas, so a possible partial marker is held back until the next delta settles it;
// when generation was cut short, what is held back is markup and never becomes text.
import type { InternalRequest, InternalToolCall } from "./internal.js";
import { parsePartialJson } from "./partial-json.js";
import { partialSuffix } from "./think-splitter.js";
import { newToolCallId, type ToolCallPiece } from "./tool-calls.js";

/** A piece of a harmony reply: reasoning (the analysis channel), answer text, or a piece of a tool call. */
export type HarmonyPiece = { kind: "thinking"; text: string } | ToolCallPiece;

/** Opens a header (the role follows). */
const START = "<|start|>";
/** The role of the messages the model writes. */
const ROLE = "assistant";
/** Ends a header. */
const MESSAGE = "<|message|>";
/** The markers that end a body (`<|start|>`: the model skipped `<|end|>`). */
const BODY_ENDS = ["<|end|>", "<|return|>", "<|call|>", START];
/** A header longer than this, or with a line break, is not one: the model is writing plain text. */
const LONGEST_HEADER = 256;
/** How a header may begin (after `<|start|>` and the role): a channel, a recipient, a content type or the body. */
const HEADER_OPENINGS = ["<|channel|>", " to=", "to=", "<|constrain|>", MESSAGE];
/** Between messages of one kind: so that a preamble and the answer, or two analysis messages, do not run together. */
const MESSAGE_SEPARATOR = "\n\n";

/** Where a message's body goes. */
type Route = { kind: "thinking" } | { kind: "text"; preamble?: true } | { kind: "call"; name: string };

/**
 * The route of a message by its header (the text between `<|start|>` and `<|message|>`, role included): a recipient
 * `functions.NAME` makes it a tool call (when calls are taken out), the analysis channel reasoning, anything else
 * (final, commentary without a recipient: a preamble, no channel) answer text. NOTE: gpt-oss sometimes writes a
 * stray `<|channel|>commentary` before the real channel, so the last channel named counts.
 */
export function routeOfHeader(header: string, extractCalls: boolean): Route {
  const recipient = /(?:^|\s)to=([^\s<]+)/.exec(header)?.[1];
  if (extractCalls && recipient?.startsWith("functions.") && recipient.length > "functions.".length) return { kind: "call", name: recipient.slice("functions.".length) };
  const channels = [...header.matchAll(/<\|channel\|>([A-Za-z0-9_-]+)/g)];
  const channel = channels.at(-1)?.[1];
  return channel === "analysis" ? { kind: "thinking" } : channel === "commentary" && recipient === undefined ? { kind: "text", preamble: true } : { kind: "text" };
}

/**
 * Incremental harmony reader: push() deltas, flush() once at the end. With `extractCalls` (the request offers tools),
 * messages to `functions.NAME` are tool calls, streamed as they are generated; without, their bodies are answer text.
 *
 * NOTE: reasoning comes before the answer (InternalEvent's order), but gpt-oss may reason again after a preamble; so
 * preambles are held until a final message or a call opens (or the reply ends), and any reasoning between goes first.
 */
export class HarmonyParser {
  private state: "header" | "body" | "between" | "plain" = "header";
  private held = "";
  /** The current header's role needs no reading: the prompt wrote the first message's. */
  private roleWritten = true;
  private route: Route = { kind: "text" };
  /** Which kinds of text earlier messages sent: a later message of that kind is separated from them. */
  private readonly sent = { thinking: false, text: false };
  /** The current message (or run of text outside messages) has sent text. */
  private messageSent = false;
  /** Preamble text held until the reasoning that may follow it has gone (see the class comment). */
  private deferred: HarmonyPiece[] = [];
  /** Whether the current body has sent anything yet (its leading whitespace is layout). */
  private bodyStarted = false;
  /** The call being streamed: its index, id, name and arguments so far. */
  private call: { index: number; id: string; name: string; text: string; pendingSpace: string } | undefined;
  private found = 0;
  private unfinished = false;

  constructor(private readonly extractCalls: boolean, private readonly newId: () => string = newToolCallId) {}

  /** Whether the output is inside reasoning (an analysis message's body). */
  get reasoning(): boolean {
    return this.state === "body" && this.route.kind === "thinking";
  }

  /** How many tool calls were found so far. */
  get calls(): number {
    return this.found;
  }

  /** Whether a call ended without whole arguments (generation stopped inside them, or they were not a JSON object). */
  get endedInsideCall(): boolean {
    return this.unfinished;
  }

  push(delta: string): HarmonyPiece[] {
    this.held += delta;
    const pieces: HarmonyPiece[] = [];
    for (;;) {
      switch (this.state) {
        case "plain":
          this.release(pieces);
          this.emit(pieces, "text", this.held);
          this.held = "";
          return pieces;
        case "between": {
          // Only whitespace may separate messages; anything else is text the model wrote outside the format.
          const start = this.held.indexOf(START);
          if (start >= 0) {
            this.emitOutside(pieces, this.held.slice(0, start));
            this.held = this.held.slice(start + START.length);
            this.state = "header";
            this.roleWritten = false;
            continue;
          }
          const keep = partialSuffix(this.held, START);
          this.emitOutside(pieces, this.held.slice(0, this.held.length - keep));
          this.held = this.held.slice(this.held.length - keep);
          return pieces;
        }
        case "header": {
          if (this.roleWritten && this.held.startsWith(START)) {
            // The model opened its first message again, role and all: read it as any later one.
            this.state = "between";
            continue;
          }
          const end = this.held.indexOf(MESSAGE);
          const header = end >= 0 ? this.held.slice(0, end) : this.held;
          if (!this.mayBeHeader(header)) {
            // Not harmony after all (a model that writes plain text): everything from here on is the answer.
            this.state = "plain";
            continue;
          }
          if (end < 0) return pieces;
          this.held = this.held.slice(end + MESSAGE.length);
          this.openBody(pieces, header);
          continue;
        }
        case "body": {
          const found = firstMarker(this.held, BODY_ENDS);
          if (found) {
            this.body(pieces, this.held.slice(0, found.at));
            this.closeBody(pieces);
            this.held = this.held.slice(found.at + (found.marker === START ? 0 : found.marker.length));
            this.state = "between";
            continue;
          }
          const keep = Math.max(...BODY_ENDS.map((marker) => partialSuffix(this.held, marker)));
          this.body(pieces, this.held.slice(0, this.held.length - keep));
          this.held = this.held.slice(this.held.length - keep);
          return pieces;
        }
      }
    }
  }

  /**
   * Ends the reply. At a natural end, held text is what it most likely is: the rest of a body (the model chose to stop
   * there), or plain text where no header was opened. When generation was `cut` short (token limit, stop sequence),
   * what is held is unfinished markup and is dropped; a call cut inside its arguments is still a call, with its
   * arguments as far as written (see InternalToolCall), and marked unfinished.
   */
  flush(cut = false): HarmonyPiece[] {
    const pieces: HarmonyPiece[] = [];
    const rest = this.held;
    this.held = "";
    if (this.state === "body") {
      if (!cut) this.body(pieces, rest);
      this.closeBody(pieces);
    } else if (this.state === "plain") {
      this.emit(pieces, "text", rest);
    } else if (this.state === "between" && !cut && partialSuffix(rest, START) === 0) {
      this.emitOutside(pieces, rest);
    }
    this.release(pieces);
    this.state = "between";
    return pieces;
  }

  /**
   * Whether `header` can still be a message header: after `<|start|>` it begins with the role, at the start of the
   * output it does not (the prompt wrote it).
   */
  private mayBeHeader(header: string): boolean {
    if (header.length > LONGEST_HEADER || header.includes("\n")) return false;
    let rest = header;
    if (this.roleWritten && START.startsWith(rest)) return true;
    if (!this.roleWritten) {
      if (!rest.startsWith(ROLE)) return ROLE.startsWith(rest);
      rest = rest.slice(ROLE.length);
    }
    return rest === "" || HEADER_OPENINGS.some((opening) => rest.startsWith(opening) || opening.startsWith(rest));
  }

  /** Opens the body of the message `header` (role included, `<|message|>` excluded) introduces. */
  private openBody(pieces: HarmonyPiece[], header: string): void {
    this.route = routeOfHeader(header, this.extractCalls);
    this.state = "body";
    this.bodyStarted = false;
    this.messageSent = false;
    if (this.route.kind !== "thinking" && !(this.route.kind === "text" && this.route.preamble)) this.release(pieces);
    if (this.route.kind === "call") {
      this.call = { index: this.found, id: this.newId(), name: this.route.name, text: "", pendingSpace: "" };
      this.found++;
      pieces.push({ kind: "tool_call_start", index: this.call.index, id: this.call.id, name: this.call.name });
    }
  }

  /** Body text of the current message, as its route says. */
  private body(pieces: HarmonyPiece[], text: string): void {
    if (!this.bodyStarted) {
      text = text.trimStart();
      if (text === "") return;
      this.bodyStarted = true;
    }
    if (text === "") return;
    const call = this.call;
    if (!call) {
      const preamble = this.route.kind === "text" && this.route.preamble === true;
      this.emit(preamble ? this.deferred : pieces, this.route.kind === "thinking" ? "thinking" : "text", text);
      return;
    }
    // Whitespace after the arguments is layout: held until more of them comes.
    const all = call.pendingSpace + text;
    const content = all.trimEnd();
    call.pendingSpace = all.slice(content.length);
    if (content === "") return;
    call.text += content;
    pieces.push({ kind: "tool_call_delta", index: call.index, arguments: content });
  }

  /** Ends the current body: a call's arguments are whole, or read as far as written. */
  private closeBody(pieces: HarmonyPiece[]): void {
    const call = this.call;
    this.call = undefined;
    if (!call) return;
    const whole = parseObject(call.text);
    let args: Record<string, unknown> | undefined = whole;
    if (!whole) {
      // Cut inside the arguments (or not a JSON object): read as far as written, and never reported as a whole call.
      this.unfinished = true;
      const partial = parsePartialJson(call.text);
      args = isObject(partial) ? partial : {};
    }
    const toolCall: InternalToolCall = { id: call.id, name: call.name, arguments: args!, argumentsText: call.text };
    pieces.push({ kind: "tool_call", index: call.index, ...toolCall });
  }

  /** Reasoning or answer text, its message's first separated from earlier messages of the same kind. */
  private emit(pieces: HarmonyPiece[], kind: "thinking" | "text", text: string): void {
    if (text === "") return;
    if (!this.messageSent && this.sent[kind]) text = MESSAGE_SEPARATOR + text;
    this.messageSent = true;
    this.sent[kind] = true;
    pieces.push({ kind, text });
  }

  /** Text between messages: whitespace is layout; anything else is shown as answer text, after held preambles. */
  private emitOutside(pieces: HarmonyPiece[], text: string): void {
    if (text.trim() === "") return;
    this.release(pieces);
    this.emit(pieces, "text", text);
  }

  /** Sends the held preambles. */
  private release(pieces: HarmonyPiece[]): void {
    pieces.push(...this.deferred);
    this.deferred = [];
  }
}

/** The earliest of `markers` in `text`, and where. */
function firstMarker(text: string, markers: readonly string[]): { at: number; marker: string } | undefined {
  let best: { at: number; marker: string } | undefined;
  for (const marker of markers) {
    const at = text.indexOf(marker);
    if (at >= 0 && (!best || at < best.at)) best = { at, marker };
  }
  return best;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A harmony template's reasoning effort (`Reasoning: low|medium|high` in its system message). */
export type HarmonyReasoningEffort = "low" | "medium" | "high";

/**
 * The reasoning effort that stands for a request's thinking settings: gpt-oss always reasons, so thinking off asks for
 * the least ("low"); on, the effort the client named (Responses), else with a token budget the effort that budget
 * suits (under 4096 tokens low, under 16384 medium, else high), else the template's default ("medium").
 */
export function harmonyReasoningEffort(thinking: InternalRequest["thinking"]): HarmonyReasoningEffort {
  if (!thinking.enabled) return "low";
  if (thinking.effort !== undefined) return thinking.effort;
  if (thinking.budgetTokens === undefined) return "medium";
  return thinking.budgetTokens < 4096 ? "low" : thinking.budgetTokens < 16384 ? "medium" : "high";
}
