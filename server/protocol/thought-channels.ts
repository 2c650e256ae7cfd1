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

/** Incremental splitter of thought channels: push() deltas, flush() once at the end (ThinkSplitter's interface). */
export class ThoughtChannelSplitter {
  private state: "answer" | "channel" | "thinking" = "answer";
  private held = "";
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
      if (marker !== undefined) {
        const at = marker === OPEN ? open : close;
        if (at > 0) pieces.push({ kind: "text", text: this.held.slice(0, at) });
        this.held = this.held.slice(at + marker.length);
        // A stray close marker is dropped; an open one names its channel next.
        if (marker === OPEN) this.state = "channel";
        continue;
      }
      this.emit(pieces, "text", this.held.length - Math.max(partialSuffix(this.held, OPEN), partialSuffix(this.held, CLOSE)));
      return pieces;
    }
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
