import { describe, expect, it } from "vitest";
import { ThinkSplitter, type SplitPiece } from "./think-splitter.js";

/** Feeds `deltas` and merges consecutive pieces of one kind; `cut`: generation was cut short. */
function split(deltas: string[], cut = false): SplitPiece[] {
  const splitter = new ThinkSplitter();
  const pieces = [...deltas.flatMap((d) => splitter.push(d)), ...splitter.flush(cut)];
  return pieces.reduce<SplitPiece[]>((merged, piece) => {
    const last = merged.at(-1);
    if (last && last.kind === piece.kind) last.text += piece.text;
    else merged.push({ ...piece });
    return merged;
  }, []);
}

describe("ThinkSplitter", () => {
  it("splits reasoning from the answer, whatever the delta boundaries", () => {
    const whole = "<think>\nLet me see.</think>\n\nThe answer.";
    const expected = [{ kind: "thinking", text: "Let me see." }, { kind: "text", text: "The answer." }];
    expect(split([whole])).toEqual(expected);
    expect(split([...whole])).toEqual(expected); // one character at a time
    expect(split(["<thi", "nk>Let me see.</th", "ink>\n\nThe answer."])).toEqual([{ kind: "thinking", text: "Let me see." }, { kind: "text", text: "The answer." }]);
  });

  it("treats output without an opening tag as the answer", () => {
    expect(split(["Hello", " <think> is not at the start"])).toEqual([{ kind: "text", text: "Hello <think> is not at the start" }]);
    expect(split(["<", "b>bold"])).toEqual([{ kind: "text", text: "<b>bold" }]);
  });

  it("keeps unfinished reasoning as reasoning", () => {
    expect(split(["<think>still thinking</thi"])).toEqual([{ kind: "thinking", text: "still thinking</thi" }]);
  });

  it("drops a partial tag when generation was cut short inside it", () => {
    expect(split(["<think>still thinking</thi"], true)).toEqual([{ kind: "thinking", text: "still thinking" }]);
    expect(split([..."<think>still thinking</"], true)).toEqual([{ kind: "thinking", text: "still thinking" }]);
    expect(split(["\n<thi"], true)).toEqual([]);
    expect(split(["<think>still thinking"], true)).toEqual([{ kind: "thinking", text: "still thinking" }]);
  });
});
