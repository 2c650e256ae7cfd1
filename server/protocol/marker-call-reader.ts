// What the readers of calls that follow a marker share (Mistral's `[TOOL_CALLS]`, Gemma 4's `<|tool_call>`): the
// answer's text up to the marker, streamed, with a possible partial marker held back until the next delta settles
// it; whitespace right before the marker (layout if a call follows, content if not) and right after a call (layout)
// kept apart from the text; and the marker given back as text when what follows it is no call.
import { partialSuffix } from "./think-splitter.js";
import type { ToolCallPiece } from "./tool-calls.js";

/** The text side of a "marker, then call" reader; subclasses read the calls after {@link readText} finds a marker. */
export abstract class MarkerCallReader {
  /** Text not yet settled; after the marker, what follows it. */
  protected held = "";
  /** The whitespace before the marker: layout if a call follows, content if it turns out to be text. */
  protected gap = "";
  /** Whitespace at the start of `held` is layout (it follows a call), not content. */
  protected afterCall = false;

  constructor(protected readonly marker: string) {}

  /**
   * Reads `held` as answer text: settled text goes into `pieces`. True when the marker was read (`held` is then what
   * follows it, `gap` the whitespace before it); false when everything is settled but a possible partial marker and
   * the whitespace before it, held back.
   */
  protected readText(pieces: ToolCallPiece[]): boolean {
    if (this.afterCall) {
      this.held = this.held.trimStart();
      if (this.held === "") return false;
      this.afterCall = false;
    }
    const at = this.held.indexOf(this.marker);
    if (at >= 0) {
      const before = this.held.slice(0, at);
      const content = before.trimEnd();
      this.text(pieces, content);
      this.gap = before.slice(content.length);
      this.held = this.held.slice(at + this.marker.length);
      return true;
    }
    const partial = partialSuffix(this.held, this.marker);
    const settled = this.held.slice(0, this.held.length - partial).trimEnd().length;
    this.text(pieces, this.held.slice(0, settled));
    this.held = this.held.slice(settled);
    return false;
  }

  /** The marker just read opened no call: it goes out as text (with the whitespace before it); reading goes on. */
  protected markerAsText(pieces: ToolCallPiece[]): void {
    this.text(pieces, this.gap + this.marker);
    this.gap = "";
  }

  /** Text, when there is any. */
  protected text(pieces: ToolCallPiece[], text: string): void {
    if (text !== "") pieces.push({ kind: "text", text });
  }
}
