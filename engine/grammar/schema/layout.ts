// Where a generated JSON document may hold whitespace, and how much: bounded, so that a weak model cannot spend its
// token budget on blanks (free whitespace between every token let it write up to 21 bytes per gap). Compact output
// allows one optional space after `:` and `,` and nothing else; pretty output may also break the line inside a
// container, indented to its nesting level.
import type { GrammarBuilder, GrammarSymbol } from "../grammar.js";

/**
 * The whitespace a constrained JSON document may hold.
 * - `"compact"` (the default): no whitespace, except one optional space after `:` and after `,`: both
 *   `{"a":1,"b":[1,2]}` and `{"a": 1, "b": [1, 2]}` (the separators of JSON.stringify and of Python's json.dumps).
 * - `"pretty"`: also a line break after `{`, `[` and `,` and before `}` and `]`, followed by exactly two spaces per
 *   nesting level (`JSON.stringify(value, null, 2)`), down to {@link MAX_PRETTY_LEVEL} levels; deeper, compact.
 */
export type JsonWhitespace = "compact" | "pretty";

/** The deepest nesting level at which pretty output may break lines; deeper containers are written compact. */
export const MAX_PRETTY_LEVEL = 16;

/** The optional whitespace around a container's members, at one nesting level. */
export interface Gaps {
  /** After `{` or `[` (before the first member). */
  readonly open: readonly GrammarSymbol[];
  /** Before `}` or `]` (after the last member). */
  readonly close: readonly GrammarSymbol[];
  /** After `,`. */
  readonly comma: readonly GrammarSymbol[];
  /** After `:`. */
  readonly colon: readonly GrammarSymbol[];
}

/** The gaps of one grammar, per nesting level, built once each. */
export class JsonLayout {
  private readonly byLevel = new Map<number, Gaps>();
  private space: GrammarSymbol | undefined;

  constructor(private readonly b: GrammarBuilder, readonly whitespace: JsonWhitespace = "compact") {}

  /**
   * Which rules a value at `level` can share with values at other levels: its gaps depend on the level only in pretty
   * mode and only down to {@link MAX_PRETTY_LEVEL}, so compiled rules are cached per schema and this key.
   */
  levelKey(level: number): number {
    return this.whitespace === "pretty" ? Math.min(level, MAX_PRETTY_LEVEL + 1) : 0;
  }

  /** The gaps inside a container whose members are at nesting `level` (1 for the members of the document's root). */
  gaps(level: number): Gaps {
    const key = this.levelKey(level);
    let gaps = this.byLevel.get(key);
    if (!gaps) {
      gaps = this.build(key);
      this.byLevel.set(key, gaps);
    }
    return gaps;
  }

  private build(level: number): Gaps {
    const b = this.b;
    const space = (this.space ??= b.optional("space", [b.literal(" ")]));
    if (this.whitespace === "compact" || level > MAX_PRETTY_LEVEL) return { open: [], close: [], comma: [space], colon: [space] };
    const indent = (depth: number) => b.literal(`\n${"  ".repeat(depth)}`);
    return {
      open: [b.optional(`newline@${level}`, [indent(level)])],
      close: [b.optional(`newline@${level - 1}`, [indent(level - 1)])],
      comma: [b.ref(b.rule(`comma-gap@${level}`, [[], [b.literal(" ")], [indent(level)]]))],
      colon: [space],
    };
  }
}
