// Stop sequences matched on the decoded text as it streams, across token boundaries.

import { StopSequenceError } from "./errors.js";

/** What {@link StopSequenceMatcher.push} returns. */
export interface StopMatchResult {
  /** Text that is safe to emit now (it can no longer be part of a stop sequence). */
  text: string;
  /** Set when a stop sequence completed: `text` then holds everything before it, and the stream is over. */
  stop?: { sequence: string };
}

/**
 * Finds stop sequences in streamed text. It holds back only the longest tail of the text that could still
 * grow into a stop sequence (plus a dangling high surrogate), emits everything before a match and nothing after it.
 *
 * NOTE: the match is the one that completes first in the text (on a tie, the one that starts first), so the
 * result does not depend on how the text was split into deltas.
 */
export class StopSequenceMatcher {
  /** The distinct stop sequences. */
  readonly stops: readonly string[];
  private readonly longestStop: number;
  private held = "";
  private matched: { sequence: string } | undefined;

  /** @throws StopSequenceError if an entry is not a string or is empty. */
  constructor(stops: readonly string[]) {
    stops.forEach((stop, index) => {
      if (typeof stop !== "string") throw new StopSequenceError(index, `expected a string, got ${typeof stop}`);
      if (stop.length === 0) throw new StopSequenceError(index, "is empty; stop sequences must be non-empty strings");
    });
    this.stops = [...new Set(stops)];
    this.longestStop = this.stops.reduce((longest, stop) => Math.max(longest, stop.length), 0);
  }

  /** The stop sequence that ended the stream, if one has. */
  get stopped(): { sequence: string } | undefined {
    return this.matched;
  }

  /**
   * Adds the next piece of decoded text. After a stop, every later push returns empty text.
   * @param matching false: no stop sequence ends the stream with this text (EngineRequest.minTokens not yet reached);
   *   a later push matches only stop sequences that end in its own text, as vLLM checks min_tokens.
   */
  push(textDelta: string, matching = true): StopMatchResult {
    if (this.matched) return { text: "" };
    const text = this.held + textDelta;
    const match = matching ? this.firstMatch(text, this.held.length) : undefined;
    if (match) {
      this.held = "";
      this.matched = { sequence: match.sequence };
      return { text: text.slice(0, match.start), stop: { sequence: match.sequence } };
    }
    const emitLength = text.length - this.holdLength(text);
    this.held = text.slice(emitLength);
    return { text: text.slice(0, emitLength) };
  }

  /** Ends the stream: returns the held-back text (empty after a stop). */
  flush(): string {
    const text = this.held;
    this.held = "";
    return text;
  }

  /** The first match that ends after `heldLength` (held text holds no match of its own, unless matching was off). */
  private firstMatch(text: string, heldLength: number): { start: number; sequence: string } | undefined {
    let best: { start: number; end: number; sequence: string } | undefined;
    for (const sequence of this.stops) {
      const start = text.indexOf(sequence, Math.max(0, heldLength + 1 - sequence.length));
      if (start < 0) continue;
      const end = start + sequence.length;
      if (!best || end < best.end || (end === best.end && start < best.start)) best = { start, end, sequence };
    }
    return best;
  }

  /** Length of the longest tail of `text` that is a proper prefix of some stop sequence (or a lone high surrogate). */
  private holdLength(text: string): number {
    for (let length = Math.min(text.length, this.longestStop - 1); length > 0; length--) {
      const tail = text.slice(text.length - length);
      if (this.stops.some((stop) => stop.startsWith(tail))) return length;
    }
    const last = text.charCodeAt(text.length - 1);
    return last >= 0xd800 && last <= 0xdbff ? 1 : 0;
  }
}
