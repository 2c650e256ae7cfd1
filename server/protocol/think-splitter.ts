// Splits a model's streamed output into reasoning and answer at the chat template's think tags: output that opens
// with `<think>` (after optional whitespace) is reasoning until `</think>`, the rest is the answer. Tags may arrive
// split across deltas, so a possible partial tag is held back until the next delta settles it.

/** The tag pair around reasoning (Qwen3, DeepSeek-R1 style by default). */
export interface ThinkTags {
  open: string;
  close: string;
}

export const DEFAULT_THINK_TAGS: ThinkTags = Object.freeze({ open: "<think>", close: "</think>" });

/** A piece of output: reasoning or answer text. */
export type SplitPiece = { kind: "thinking" | "text"; text: string };

/** Incremental splitter: push() deltas, flush() once at the end. */
export class ThinkSplitter {
  private state: "start" | "thinking" | "answer" = "start";
  private held = "";
  /** Newlines right after a tag are the template's layout, not content; they may arrive in later deltas. */
  private skipNewlines = false;

  constructor(private readonly tags: ThinkTags = DEFAULT_THINK_TAGS) {}

  /** Whether the output is inside the reasoning (its open tag seen, its close tag not yet). */
  get reasoning(): boolean {
    return this.state === "thinking";
  }

  push(delta: string): SplitPiece[] {
    this.held += delta;
    const pieces: SplitPiece[] = [];
    for (;;) {
      if (this.skipNewlines) {
        this.held = this.held.replace(/^\n+/, "");
        if (this.held === "") return pieces;
        this.skipNewlines = false;
      }
      if (this.state === "start") {
        const trimmed = this.held.trimStart();
        if (trimmed.startsWith(this.tags.open)) {
          this.held = trimmed.slice(this.tags.open.length);
          this.state = "thinking";
          this.skipNewlines = true;
          continue;
        }
        if (this.tags.open.startsWith(trimmed)) return pieces; // undecided: could still become the open tag
        this.state = "answer";
        continue;
      }
      if (this.state === "thinking") {
        const end = this.held.indexOf(this.tags.close);
        if (end >= 0) {
          if (end > 0) pieces.push({ kind: "thinking", text: this.held.slice(0, end) });
          this.held = this.held.slice(end + this.tags.close.length);
          this.state = "answer";
          this.skipNewlines = true;
          continue;
        }
        const safe = this.held.length - partialSuffix(this.held, this.tags.close);
        if (safe > 0) pieces.push({ kind: "thinking", text: this.held.slice(0, safe) });
        this.held = this.held.slice(safe);
        return pieces;
      }
      if (this.held) pieces.push({ kind: "text", text: this.held });
      this.held = "";
      return pieces;
    }
  }

  /**
   * Ends the output. What is held back is a possible partial tag (and, before the reasoning, whitespace). At a natural
   * end it is output as what it most likely is: the model chose to stop there. When generation was `cut` short (the
   * token limit or a stop sequence ended it), it is the start of a tag the model did not finish, and is dropped:
   * template markup never reaches the output.
   */
  flush(cut = false): SplitPiece[] {
    const rest = this.held;
    this.held = "";
    if (!rest || cut) return [];
    return [{ kind: this.state === "thinking" ? "thinking" : "text", text: rest }];
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag` (a tag that may be cut off by the delta). */
export function partialSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (text.endsWith(tag.slice(0, n))) return n;
  return 0;
}
