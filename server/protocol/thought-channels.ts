// Splits Gemma 4's streamed output into reasoning and answer at its thought channels: `<|channel>thought` opens
// reasoning (whitespace after it is layout) up to `<channel|>`, wherever it comes, as llama.cpp's Gemma 4 parser reads
// every complete thought block (the model may write an empty one again at the end of its answer). A channel other than
// "thought", and a `<channel|>` that closes nothing, are markup and are dropped. Markers may arrive split across
// deltas, so a possible partial marker is held back until the next delta settles it.
import { GEMMA4_THINK_TAGS } from "../../engine/chat/gemma4.js";
import { type SplitPiece, partialSuffix } from "./think-splitter.js";

const OPEN = "<|channel>";
const THOUGHT = GEMMA4_THINK_TAGS.open.slice(OPEN.length);
const CLOSE = GEMMA4_THINK_TAGS.close;

/**
 * Incremental splitter of thought channels: push() deltas, flush() once at the end (ThinkSplitter's interface). With
 * `stopAt` (a call's open marker), answer text stops at that marker: push() returns what came before it, and
 * {@link takeStopped} hands over the rest, the marker first, for the caller to read the call (whose strings may hold
 * channel markers) and to push back what follows it.
 */
export class ThoughtChannelSplitter {
  private state: "answer" | "channel" | "thinking" = "answer";
  private held = "";
  private stopped = false;

  constructor(private readonly stopAt?: string) {}
  /** Whitespace after `<|channel>thought` is layout, as are newlines after `<channel|>`; they may arrive later. */
  private skip: RegExp | undefined;

  /** Whether the output is inside a thought channel. */
  get reasoning(): boolean {
    return this.state === "thinking";
  }

  push(delta: string): SplitPiece[] {
    this.held += delta;
    const pieces: SplitPiece[] = [];
    for (;;) {
      if (this.skip) {
        this.held = this.held.replace(this.skip, "");
        if (this.held === "") return pieces;
        this.skip = undefined;
      }
      if (this.state === "channel") {
        // After `<|channel>`: its name, "thought" for reasoning.
        if (this.held.startsWith(THOUGHT)) {
          this.held = this.held.slice(THOUGHT.length);
          this.state = "thinking";
          this.skip = /^\s+/;
          continue;
        }
        if (THOUGHT.startsWith(this.held)) return pieces;
        this.state = "answer"; // another channel: its marker is dropped, what follows is read as answer
        continue;
      }
      if (this.state === "thinking") {
        const end = this.held.indexOf(CLOSE);
        if (end >= 0) {
          if (end > 0) pieces.push({ kind: "thinking", text: this.held.slice(0, end) });
          this.held = this.held.slice(end + CLOSE.length);
          this.state = "answer";
          this.skip = /^\n+/;
          continue;
        }
        this.emit(pieces, "thinking", this.held.length - partialSuffix(this.held, CLOSE));
        return pieces;
      }
      const open = this.held.indexOf(OPEN);
      const close = this.held.indexOf(CLOSE);
      const marker = open >= 0 && (close < 0 || open < close) ? OPEN : close >= 0 ? CLOSE : undefined;
      const stop = this.stopAt === undefined ? -1 : this.held.indexOf(this.stopAt);
      if (stop >= 0 && (marker === undefined || stop < (marker === OPEN ? open : close))) {
        if (stop > 0) pieces.push({ kind: "text", text: this.held.slice(0, stop) });
        this.held = this.held.slice(stop);
        this.stopped = true;
        return pieces;
      }
      if (marker !== undefined) {
        const at = marker === OPEN ? open : close;
        if (at > 0) pieces.push({ kind: "text", text: this.held.slice(0, at) });
        this.held = this.held.slice(at + marker.length);
        // A stray close marker is dropped; an open one names its channel next.
        if (marker === OPEN) this.state = "channel";
        continue;
      }
      const stopPartial = this.stopAt === undefined ? 0 : partialSuffix(this.held, this.stopAt);
      this.emit(pieces, "text", this.held.length - Math.max(partialSuffix(this.held, OPEN), partialSuffix(this.held, CLOSE), stopPartial));
      return pieces;
    }
  }

  /** After push() stopped at `stopAt`: the text from the marker on (the splitter then holds nothing); else undefined. */
  takeStopped(): string | undefined {
    if (!this.stopped) return undefined;
    const rest = this.held;
    this.held = "";
    this.stopped = false;
    return rest;
  }

  /**
   * Ends the output. What is held back is a possible partial marker (or a channel's unfinished name): at a natural
   * end it is output as what it most likely is; when generation was `cut` short it is dropped.
   */
  flush(cut = false): SplitPiece[] {
    const rest = this.held;
    const state = this.state;
    this.held = "";
    this.state = "answer";
    if (!rest || cut || state === "channel") return [];
    return [{ kind: state === "thinking" ? "thinking" : "text", text: rest }];
  }

  private emit(pieces: SplitPiece[], kind: SplitPiece["kind"], safe: number): void {
    if (safe > 0) pieces.push({ kind, text: this.held.slice(0, safe) });
    this.held = this.held.slice(safe);
  }
}
