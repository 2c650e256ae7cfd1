// The Gemma 4 call reader: `<|tool_call>call:NAME{...}<tool_call|>` calls out of streamed text, whatever the delta
// boundaries, streamed as generated, with Gemma's value notation read as JSON and cut output never leaking markup.
import { describe, expect, it } from "vitest";
import { Gemma4CallReader, readGemma4Value } from "./gemma4.js";
import type { ToolCallPiece } from "./tool-calls.js";

/** Feeds `deltas` (ids numbered) and merges consecutive text pieces; `cut`: generation was cut. */
function read(deltas: string[], cut = false): ToolCallPiece[] {
  let n = 0;
  const reader = new Gemma4CallReader(() => `id${++n}`);
  const pieces = [...deltas.flatMap((d) => reader.push(d)), ...reader.flush(cut)];
  return pieces.reduce<ToolCallPiece[]>((merged, piece) => {
    const last = merged.at(-1);
    if (last?.kind === "text" && piece.kind === "text") last.text += piece.text;
    else merged.push({ ...piece });
    return merged;
  }, []);
}

/** Whole, one character at a time, and every cut into two deltas. */
function splits(whole: string): string[][] {
  const cuts = Array.from({ length: whole.length - 1 }, (_, i) => [whole.slice(0, i + 1), whole.slice(i + 1)]);
  return [[whole], [...whole], ...cuts];
}

/** The pieces of one streamed call. */
function streamed(index: number, name: string, args: Record<string, unknown>): ToolCallPiece[] {
  const id = `id${index + 1}`;
  const argumentsText = JSON.stringify(args);
  return [
    { kind: "tool_call_start", index, id, name },
    { kind: "tool_call_delta", index, arguments: argumentsText },
    { kind: "tool_call", index, id, name, arguments: args, argumentsText },
  ];
}

const Q = '<|"|>';
const WEATHER = `{city:${Q}Paris, "FR"${Q},days:3,units:[${Q}c${Q},${Q}f${Q}],detail:{wind:true,rain:null},score:-1.5e2}`;
const WEATHER_JSON = { city: 'Paris, "FR"', days: 3, units: ["c", "f"], detail: { wind: true, rain: null }, score: -150 };

describe("Gemma4CallReader", () => {
  it("streams a call after text, whatever the delta boundaries", () => {
    const whole = `Let me check.\n<|tool_call>call:get_weather${WEATHER}<tool_call|>`;
    for (const deltas of splits(whole)) {
      expect(read(deltas)).toEqual([{ kind: "text", text: "Let me check." }, ...streamed(0, "get_weather", WEATHER_JSON)]);
    }
  });

  it("streams several calls in order, and a call with no arguments", () => {
    const whole = `<|tool_call>call:get_weather${WEATHER}<tool_call|><|tool_call>call:get_time{}<tool_call|>`;
    for (const deltas of splits(whole)) {
      expect(read(deltas)).toEqual([...streamed(0, "get_weather", WEATHER_JSON), ...streamed(1, "get_time", {})]);
    }
  });

  it("passes on text that only looks like markup, and an open tag that names no call, as text", () => {
    for (const whole of ["a <|tool_ b", "x <|tool_call>not a call", "<|tool_call>call:{}"]) {
      for (const deltas of splits(whole)) expect(read(deltas)).toEqual([{ kind: "text", text: whole }]);
    }
  });

  it("ends a call at the <tool_call|> after its arguments' value: a string may hold the marker, whatever the delta boundaries", () => {
    const args = `{note:${Q}write <tool_call|> then }<tool_call|>${Q},n:1}`;
    const whole = `Ok.<|tool_call>call:save${args}<tool_call|><|tool_call>call:get_time{}<tool_call|>`;
    const json = { note: "write <tool_call|> then }<tool_call|>", n: 1 };
    for (const deltas of splits(whole)) {
      expect(read(deltas), JSON.stringify(deltas)).toEqual([{ kind: "text", text: "Ok." }, ...streamed(0, "save", json), ...streamed(1, "get_time", {})]);
    }
    // A string still open when generation stops holds the rest: the marker inside it does not end the call.
    const reader = new Gemma4CallReader(() => "id1");
    expect([...reader.push(`<|tool_call>call:save{n:1,note:${Q}a<tool_call|>b`), ...reader.flush(true)]).toEqual(streamed(0, "save", { n: 1 }));
    expect(reader.endedInsideCall).toBe(true);
  });

  it("keeps a key as written up to its colon, trailing whitespace included, as llama.cpp does", () => {
    expect(readGemma4Value(`{ a :1,\n b\t:{ c :2}}`).value).toEqual({ "a ": 1, "b\t": { "c ": 2 } });
    for (const deltas of splits(`<|tool_call>call:f{ key :1}<tool_call|>`)) expect(read(deltas)).toEqual(streamed(0, "f", { "key ": 1 }));
  });

  it("never lets cut markup become text: a partial tag is dropped, a call cut after its name keeps its whole members", () => {
    expect(read(["Hi <|tool_c"], true)).toEqual([{ kind: "text", text: "Hi" }]);
    expect(read(["Hi <|tool_call>call:get_we"], true)).toEqual([{ kind: "text", text: "Hi" }]);
    const reader = new Gemma4CallReader(() => "id1");
    const pieces = [...reader.push(`<|tool_call>call:get_weather{days:3,city:${Q}Par`), ...reader.flush(true)];
    expect(pieces).toEqual(streamed(0, "get_weather", { days: 3 }));
    expect(reader.endedInsideCall).toBe(true);
  });

  it("reads Gemma's value notation as llama.cpp does: strings as written, bare keys, numbers, lists, objects", () => {
    expect(readGemma4Value(WEATHER)).toEqual({ value: WEATHER_JSON, complete: true, end: WEATHER.length });
    expect(readGemma4Value(`{a:${Q}line\nbreak \\ {}:${Q}}`).value).toEqual({ a: "line\nbreak \\ {}:" });
    expect(readGemma4Value("{a:[1,[2,{b:false}]],c:{}}").value).toEqual({ a: [1, [2, { b: false }]], c: {} });
    expect(readGemma4Value("{a:1,b:").complete).toBe(false);
    expect(readGemma4Value("{a:1,b:wrong}")).toMatchObject({ value: { a: 1 }, complete: false });
  });
});
