// The tool-call extractor: Hermes `<tool_call>` blocks out of streamed text, whatever the delta boundaries.
import { describe, expect, it } from "vitest";
import { newToolCallId, parseToolCallBody, ToolCallExtractor, type ToolCallPiece } from "./tool-calls.js";

/** Feeds `deltas` (ids numbered) and merges consecutive text pieces; `cut`: generation was cut short. */
function extract(deltas: string[], cut = false): ToolCallPiece[] {
  let n = 0;
  const extractor = new ToolCallExtractor(undefined, () => `call_${++n}`);
  const pieces = [...deltas.flatMap((d) => extractor.push(d)), ...extractor.flush(cut)];
  return pieces.reduce<ToolCallPiece[]>((merged, piece) => {
    const last = merged.at(-1);
    if (last?.kind === "text" && piece.kind === "text") last.text += piece.text;
    else merged.push({ ...piece });
    return merged;
  }, []);
}

/** Every way to cut `whole` into two deltas, and one character at a time. */
function splits(whole: string): string[][] {
  const cuts = Array.from({ length: whole.length - 1 }, (_, i) => [whole.slice(0, i + 1), whole.slice(i + 1)]);
  return [[whole], [...whole], ...cuts];
}

const weather = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}\n</tool_call>';
const call = (id: string, name: string, args: Record<string, unknown>): ToolCallPiece => ({ kind: "tool_call", index: Number(id.slice(5)) - 1, id, name, arguments: args });

describe("ToolCallExtractor", () => {
  it("takes a call out of the text, whatever the delta boundaries", () => {
    const whole = `Let me check.\n\n${weather}`;
    for (const deltas of splits(whole)) {
      expect(extract(deltas)).toEqual([{ kind: "text", text: "Let me check." }, call("call_1", "get_weather", { city: "Paris", unit: "c" })]);
    }
  });

  it("never lets a piece of a tag out as text", () => {
    const extractor = new ToolCallExtractor();
    const streamed = [..."Sure.\n<tool_call>\n{\"name\": \"f\"}\n</tool_call>\n"].flatMap((c) => extractor.push(c));
    expect(streamed).toEqual([{ kind: "text", text: "S" }, { kind: "text", text: "u" }, { kind: "text", text: "r" }, { kind: "text", text: "e" }, { kind: "text", text: "." }]);
    expect(extractor.calls).toBe(1);
  });

  it("finds several calls, in order, with the whitespace between them dropped", () => {
    const whole = `${weather}\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\n${weather}\n`;
    for (const deltas of [[whole], [...whole]]) {
      expect(extract(deltas)).toEqual([
        call("call_1", "get_weather", { city: "Paris", unit: "c" }),
        call("call_2", "get_time", {}),
        call("call_3", "get_weather", { city: "Paris", unit: "c" }),
      ]);
    }
  });

  it("puts text written after a call before the calls", () => {
    expect(extract([`${weather}\n\nDone`, " soon.\n"])).toEqual([{ kind: "text", text: "Done soon." }, call("call_1", "get_weather", { city: "Paris", unit: "c" })]);
  });

  it("passes a call with invalid JSON on as the raw text, whitespace kept", () => {
    const bad = 'Hi\n<tool_call>\n{"name": "f", "arguments": {oops}\n</tool_call> bye';
    for (const deltas of splits(bad)) expect(extract(deltas)).toEqual([{ kind: "text", text: bad }]);
    expect(extract(["<tool_call>[1, 2]</tool_call>"])).toEqual([{ kind: "text", text: "<tool_call>[1, 2]</tool_call>" }]);
    expect(extract(['<tool_call>{"arguments": {}}</tool_call>'])).toEqual([{ kind: "text", text: '<tool_call>{"arguments": {}}</tool_call>' }]);
  });

  it("keeps good calls next to a bad one", () => {
    expect(extract([`${weather}\n<tool_call>nope</tool_call>`])).toEqual([{ kind: "text", text: "<tool_call>nope</tool_call>" }, call("call_1", "get_weather", { city: "Paris", unit: "c" })]);
  });

  it("accepts arguments as a JSON string, `parameters`, or none", () => {
    expect(extract(['<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>'])).toEqual([call("call_1", "f", { a: 1 })]);
    expect(extract(['<tool_call>{"name": "f", "parameters": {"b": [2]}}</tool_call>'])).toEqual([call("call_1", "f", { b: [2] })]);
    expect(extract(['<tool_call>{"name": "f"}</tool_call>'])).toEqual([call("call_1", "f", {})]);
  });

  it("leaves text without calls exactly as it was, tag-like text included", () => {
    for (const text of ["Hello there!\n\n", "a <b>bold</b> <tool", "  spaced  \n  out  ", "see <tool_result> and </tool_call>"]) {
      for (const deltas of splits(text)) expect(extract(deltas)).toEqual([{ kind: "text", text }]);
    }
  });

  it("ends an unterminated call as a call when its JSON is whole, as text when cut off", () => {
    expect(extract(['<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n'])).toEqual([call("call_1", "f", { x: 1 })]);
    expect(extract(['Text <tool_call>\n{"name": "f", "argu'])).toEqual([{ kind: "text", text: 'Text <tool_call>\n{"name": "f", "argu' }]);
  });

  it("when generation was cut short, drops an unfinished tag or nameless call, and keeps a named one", () => {
    for (const cut of ["Text <", "Text\n<tool_c", "Text <tool_call>", 'Text <tool_call>\n{"na', 'Text <tool_call>\n{"name": "f']) {
      for (const deltas of splits(cut)) expect(extract(deltas, true), cut).toEqual([{ kind: "text", text: "Text" }]);
    }
    expect(extract(['Text <tool_call>\n{"name": "f", "argu'], true)).toEqual([{ kind: "text", text: "Text" }, { ...call("call_1", "f", {}), argumentsText: "" }]);
    expect(extract(['<tool_call>{"name": "f", "arguments": {"a": 1, "b": "x'], true)).toEqual([{ ...call("call_1", "f", { a: 1 }), argumentsText: '{"a": 1, "b": "x' }]);
    expect(extract(["Text, cut as text is"], true)).toEqual([{ kind: "text", text: "Text, cut as text is" }]);
  });

  it("counts the calls it found", () => {
    const extractor = new ToolCallExtractor();
    extractor.push(`${weather}${weather}`);
    expect(extractor.calls).toBe(2);
    const flushed = extractor.flush();
    expect(flushed.map((piece) => piece.kind)).toEqual(["tool_call", "tool_call"]);
    expect(new Set(flushed.map((piece) => (piece.kind === "tool_call" ? piece.id : ""))).size).toBe(2);
  });
});

/** Feeds `deltas` to a streaming extractor (ids numbered); returns every piece in order. */
function stream(deltas: string[]): ToolCallPiece[] {
  let n = 0;
  const extractor = new ToolCallExtractor(undefined, () => `call_${++n}`, true);
  return [...deltas.flatMap((d) => extractor.push(d)), ...extractor.flush()];
}

describe("ToolCallExtractor streaming constrained calls", () => {
  it("sends a call's name, then its arguments in fragments that join to the arguments' JSON, then the whole call", () => {
    const whole = `Checking.\n${weather}\n<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>`;
    for (const deltas of splits(whole)) {
      const pieces = stream(deltas);
      const kinds = pieces.map((piece) => piece.kind).filter((kind, i, all) => kind !== all[i - 1]);
      expect(kinds).toEqual(["text", "tool_call_start", "tool_call_delta", "tool_call", "tool_call_start", "tool_call_delta", "tool_call"]);
      const fragments = (index: number) => pieces.map((piece) => (piece.kind === "tool_call_delta" && piece.index === index ? piece.arguments : "")).join("");
      expect(fragments(0)).toBe('{"city": "Paris", "unit": "c"}');
      expect(fragments(1)).toBe('{"zone": "UTC"}');
      const calls = pieces.filter((piece) => piece.kind === "tool_call");
      expect(calls).toEqual([
        { kind: "tool_call", index: 0, id: "call_1", name: "get_weather", arguments: { city: "Paris", unit: "c" }, argumentsText: '{"city": "Paris", "unit": "c"}' },
        { kind: "tool_call", index: 1, id: "call_2", name: "get_time", arguments: { zone: "UTC" }, argumentsText: '{"zone": "UTC"}' },
      ]);
      expect(pieces.find((piece) => piece.kind === "tool_call_start")).toEqual({ kind: "tool_call_start", index: 0, id: "call_1", name: "get_weather" });
    }
  });

  it("keeps a close tag inside an argument string in the arguments, whatever the delta boundaries", () => {
    const whole = '<tool_call>\n{"name": "write", "arguments": {"text": "a</tool_call>b"}}\n</tool_call>';
    for (const deltas of splits(whole)) {
      const pieces = stream(deltas);
      const fragments = pieces.map((piece) => (piece.kind === "tool_call_delta" ? piece.arguments : "")).join("");
      expect(pieces.filter((piece) => piece.kind === "text")).toEqual([]);
      expect(pieces.at(-1)).toMatchObject({ kind: "tool_call", name: "write", arguments: { text: "a</tool_call>b" }, argumentsText: fragments });
    }
  });

  it("keeps braces and quotes inside argument strings in the arguments", () => {
    const pieces = stream(['<tool_call>{"name": "f", "arguments": {"s": "a}\\"]{"}}</tool_call>']);
    expect(pieces.at(-1)).toMatchObject({ kind: "tool_call", arguments: { s: 'a}"]{' }, argumentsText: '{"s": "a}\\"]{"}' });
  });

  it("ends a call cut off inside its arguments as a call with what was written, parsed as far as it is complete", () => {
    const pieces = stream(['<tool_call>\n{"name": "f", "arguments": {"x": [1, 2']);
    expect(pieces.map((piece) => piece.kind)).toEqual(["tool_call_start", "tool_call_delta", "tool_call"]);
    expect(pieces.at(-1)).toEqual({ kind: "tool_call", index: 0, id: "call_1", name: "f", arguments: { x: [1] }, argumentsText: '{"x": [1, 2' });
  });

  it("says whether generation ended inside a call's arguments", () => {
    const endedInside = (output: string) => {
      const extractor = new ToolCallExtractor(undefined, undefined, true);
      const pieces = [...extractor.push(output), ...extractor.flush(true)];
      return [pieces.filter((piece) => piece.kind === "tool_call").length, extractor.endedInsideCall];
    };
    expect(endedInside('<tool_call>{"name": "f", "arguments": {"x": 1')).toEqual([1, true]);
    expect(endedInside('<tool_call>{"name": "f", "argu')).toEqual([1, true]);
    expect(endedInside('<tool_call>{"name": "f", "arguments": {"x": 1}}\n</tool_')).toEqual([1, false]);
    expect(endedInside('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>\n<tool_call>{"na')).toEqual([1, false]);
  });

  it("holds a call in another layout until the end, as without streaming", () => {
    const pieces = stream(['<tool_call>{"arguments": {"a": 1}, "name": "f"}</tool_call>']);
    expect(pieces).toEqual([{ kind: "tool_call", index: 0, id: "call_1", name: "f", arguments: { a: 1 } }]);
  });
});

describe("parseToolCallBody and newToolCallId", () => {
  it("parses a call and rejects what is not one", () => {
    expect(parseToolCallBody(' {"name": "f", "arguments": {"a": "b"}} ')).toEqual({ name: "f", arguments: { a: "b" } });
    for (const body of ["", "{}", '{"name": ""}', '{"name": 3}', '{"name": "f", "arguments": [1]}', '{"name": "f", "arguments": "not json"}', "null"]) {
      expect(parseToolCallBody(body)).toBeUndefined();
    }
  });

  it("makes format-neutral ids: call_ and 24 hex digits", () => {
    const id = newToolCallId();
    expect(id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(newToolCallId()).not.toBe(id);
  });
});
