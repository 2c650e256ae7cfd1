// Gemma 4's thought channels split from the answer, whatever the delta boundaries: reasoning at the start, an empty
// channel again at the end, other channels and stray close markers dropped, cut markers never shown.
import { describe, expect, it } from "vitest";
import type { SplitPiece } from "./think-splitter.js";
import { ThoughtChannelSplitter } from "./thought-channels.js";

/** Feeds `deltas` and merges consecutive pieces of a kind; `cut`: generation was cut. */
function split(deltas: string[], cut = false): SplitPiece[] {
  const splitter = new ThoughtChannelSplitter();
  const pieces = [...deltas.flatMap((d) => splitter.push(d)), ...splitter.flush(cut)];
  return pieces.reduce<SplitPiece[]>((merged, piece) => {
    const last = merged.at(-1);
    if (last?.kind === piece.kind) last.text += piece.text;
    else merged.push({ ...piece });
    return merged;
  }, []);
}

/** Whole, one character at a time, and every cut into two deltas. */
function splits(whole: string): string[][] {
  const cuts = Array.from({ length: whole.length - 1 }, (_, i) => [whole.slice(0, i + 1), whole.slice(i + 1)]);
  return [[whole], [...whole], ...cuts];
}

describe("ThoughtChannelSplitter", () => {
  it("reads thought channels as reasoning wherever they come, and drops other channels and stray markers", () => {
    const cases: Array<[string, SplitPiece[]]> = [
      ["<|channel>thought\nStep 1.\nStep 2.<channel|>\n\nThe answer.", [{ kind: "thinking", text: "Step 1.\nStep 2." }, { kind: "text", text: "The answer." }]],
      ["Plain answer < | with > symbols", [{ kind: "text", text: "Plain answer < | with > symbols" }]],
      ["Answer.<|channel>thought\n<channel|>", [{ kind: "text", text: "Answer." }]],
      ["A<channel|>B<|channel>final\nC", [{ kind: "text", text: "ABfinal\nC" }]],
      ["<|channel>thought one<channel|>x<|channel>thought two<channel|>y", [{ kind: "thinking", text: "one" }, { kind: "text", text: "x" }, { kind: "thinking", text: "two" }, { kind: "text", text: "y" }]],
    ];
    for (const [whole, expected] of cases) {
      for (const deltas of splits(whole)) expect(split(deltas), JSON.stringify(deltas)).toEqual(expected);
    }
  });

  it("tells whether it is inside reasoning, and never shows a cut marker", () => {
    const splitter = new ThoughtChannelSplitter();
    splitter.push("<|channel>thought\nHm");
    expect(splitter.reasoning).toBe(true);
    splitter.push("<channel|>");
    expect(splitter.reasoning).toBe(false);
    expect(split(["Hi <|chan"], true)).toEqual([{ kind: "text", text: "Hi " }]);
    expect(split(["<|channel>thought\nabc<chan"], true)).toEqual([{ kind: "thinking", text: "abc" }]);
    expect(split(["Hi <|chan"])).toEqual([{ kind: "text", text: "Hi <|chan" }]);
  });
});
