// The Mistral call reader: `[TOOL_CALLS]` calls (v3 / Nemo JSON lists and tekken v11+ `NAME[ARGS]{...}`) out of
// streamed text, whatever the delta boundaries, streamed as generated, with cut output never leaking markup.
import { describe, expect, it } from "vitest";
import { MistralCallReader, newMistralToolCallId } from "./mistral.js";
import type { ToolCallPiece } from "./tool-calls.js";

/** Feeds `deltas` (ids numbered) and merges consecutive text pieces and argument fragments; `cut`: generation was cut. */
function read(layout: "json" | "args", deltas: string[], cut = false): ToolCallPiece[] {
  let n = 0;
  const reader = new MistralCallReader(layout, () => `id${++n}`);
  const pieces = [...deltas.flatMap((d) => reader.push(d)), ...reader.flush(cut)];
  return pieces.reduce<ToolCallPiece[]>((merged, piece) => {
    const last = merged.at(-1);
    if (last?.kind === "text" && piece.kind === "text") last.text += piece.text;
    else if (last?.kind === "tool_call_delta" && piece.kind === "tool_call_delta" && last.index === piece.index) last.arguments += piece.arguments;
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
function streamed(index: number, name: string, argumentsText: string): ToolCallPiece[] {
  const id = `id${index + 1}`;
  return [
    { kind: "tool_call_start", index, id, name },
    { kind: "tool_call_delta", index, arguments: argumentsText },
    { kind: "tool_call", index, id, name, arguments: JSON.parse(argumentsText), argumentsText },
  ];
}

const WEATHER = '{"city": "Paris", "unit": "c"}';
const TIME = '{"zone": "CET"}';

describe("MistralCallReader, JSON lists (v3 / Nemo)", () => {
  it("streams a call after text, whatever the delta boundaries", () => {
    const whole = `Let me check.\n[TOOL_CALLS][{"name": "get_weather", "arguments": ${WEATHER}}]`;
    for (const deltas of splits(whole)) {
      expect(read("json", deltas)).toEqual([{ kind: "text", text: "Let me check." }, ...streamed(0, "get_weather", WEATHER)]);
    }
  });

  it("streams several calls of one list in order, and each start before its arguments", () => {
    const whole = `[TOOL_CALLS] [{"name": "get_weather", "arguments": ${WEATHER}}, {"name":"get_time","arguments":${TIME}}]`;
    for (const deltas of splits(whole)) {
      expect(read("json", deltas)).toEqual([...streamed(0, "get_weather", WEATHER), ...streamed(1, "get_time", TIME)]);
    }
    // One character at a time, the start comes before any argument text, and the arguments' fragments add up.
    const reader = new MistralCallReader("json", () => "x");
    const pieces = [...whole].flatMap((c) => reader.push(c));
    expect(pieces[0]).toEqual({ kind: "tool_call_start", index: 0, id: "x", name: "get_weather" });
    expect(pieces.filter((piece) => piece.kind === "tool_call_delta" && piece.index === 0).map((piece) => (piece as { arguments: string }).arguments).join("")).toBe(WEATHER);
    expect(reader.calls).toBe(2);
  });

  it("never lets a piece of the marker out as text", () => {
    const reader = new MistralCallReader("json");
    const pieces = [...'Sure.\n[TOOL_CALLS][{"name": "f", "arguments": {}}]'].flatMap((c) => reader.push(c));
    expect(pieces.filter((piece) => piece.kind === "text").map((piece) => (piece as { text: string }).text).join("")).toBe("Sure.");
    expect(reader.calls).toBe(1);
  });

  it("passes on a call written in another order of keys, with an id, whole when its object closes", () => {
    const whole = `[TOOL_CALLS][{"arguments": ${TIME}, "name": "get_time", "id": "abcDEF123"}]`;
    for (const deltas of splits(whole)) {
      expect(read("json", deltas)).toEqual([{ kind: "tool_call", index: 0, id: "id1", name: "get_time", arguments: { zone: "CET" } }]);
    }
  });

  it("passes malformed calls on as the text they were at a natural end", () => {
    for (const bad of ["Hi [TOOL_CALLS] not a list", "[TOOL_CALLS][{\"name\": oops}]", "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}"]) {
      for (const deltas of [[bad], [...bad]]) {
        const pieces = read("json", deltas);
        // The unfinished object still streamed its call: it counts, marked unfinished.
        if (bad.endsWith("1}")) expect(pieces.at(-1)).toMatchObject({ kind: "tool_call", name: "f", arguments: { a: 1 } });
        else expect(pieces).toEqual([{ kind: "text", text: bad }]);
      }
    }
  });

  it("a reply cut inside a call keeps the call as far as written and drops the markup", () => {
    const whole = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"unit": "c", "city": "Par';
    for (const deltas of [[whole], [...whole]]) {
      const reader = new MistralCallReader("json", () => "id1");
      const pieces = [...deltas.flatMap((d) => reader.push(d)), ...reader.flush(true)];
      expect(pieces.some((piece) => piece.kind === "text")).toBe(false);
      // A partial string is dropped, as the Anthropic SDK reads a cut input_json_delta (see partial-json.ts).
      expect(pieces.at(-1)).toEqual({ kind: "tool_call", index: 0, id: "id1", name: "get_weather", arguments: { unit: "c" }, argumentsText: '{"unit": "c", "city": "Par' });
      expect(reader.endedInsideCall).toBe(true);
    }
    // Cut inside the marker, or before a call's name: nothing but the text before it.
    for (const cut of ["Hello [TOOL_CA", "Hello [TOOL_CALLS][{\"na", "Hello [TOOL_CALLS]"]) {
      for (const deltas of [[cut], [...cut]]) expect(read("json", deltas, true)).toEqual([{ kind: "text", text: "Hello" }]);
    }
  });

  it("gives text without calls as it came, trailing whitespace and brackets included", () => {
    const text = "A list: [1, 2] and [TOOL] not a call.\n";
    for (const deltas of splits(text)) expect(read("json", deltas)).toEqual([{ kind: "text", text }]);
  });
});

describe("MistralCallReader, [ARGS] calls (tekken v11+)", () => {
  it("streams calls one after another, whatever the delta boundaries", () => {
    const whole = `Checking.[TOOL_CALLS]get_weather[ARGS]${WEATHER}[TOOL_CALLS]get_time[ARGS]${TIME}`;
    for (const deltas of splits(whole)) {
      expect(read("args", deltas)).toEqual([{ kind: "text", text: "Checking." }, ...streamed(0, "get_weather", WEATHER), ...streamed(1, "get_time", TIME)]);
    }
  });

  it("arguments with brackets and markers inside strings stay arguments", () => {
    const args = '{"q": "[TOOL_CALLS]x[ARGS]{\\"}", "n": [1, {"a": "}"}]}';
    for (const deltas of splits(`[TOOL_CALLS]search[ARGS]${args}`)) expect(read("args", deltas)).toEqual(streamed(0, "search", args));
  });

  it("a call cut inside its arguments is a call as far as written; cut before [ARGS], nothing", () => {
    const reader = new MistralCallReader("args", () => "id1");
    const pieces = [...'[TOOL_CALLS]get_weather[ARGS]{"unit": "c", "city": "Pa'].flatMap((c) => reader.push(c));
    pieces.push(...reader.flush(true));
    expect(pieces.at(-1)).toEqual({ kind: "tool_call", index: 0, id: "id1", name: "get_weather", arguments: { unit: "c" }, argumentsText: '{"unit": "c", "city": "Pa' });
    expect(reader.endedInsideCall).toBe(true);
    for (const deltas of [["Ok [TOOL_CALLS]get_wea"], [..."Ok [TOOL_CALLS]get_weather[AR"]]) expect(read("args", deltas, true)).toEqual([{ kind: "text", text: "Ok" }]);
  });

  it("takes the id a model writes after [CALL_ID] (Mistral Small 3.2's layout)", () => {
    const whole = `[TOOL_CALLS]get_time[CALL_ID]aB3dE6gH9[ARGS]${TIME}`;
    for (const deltas of splits(whole)) {
      expect(read("args", deltas)).toEqual(streamed(0, "get_time", TIME).map((piece) => ("id" in piece ? { ...piece, id: "aB3dE6gH9" } : piece)));
    }
    // An id that is not 9 letters and digits is replaced.
    expect(read("args", [`[TOOL_CALLS]get_time[CALL_ID]x1[ARGS]${TIME}`])).toEqual(streamed(0, "get_time", TIME));
  });

  it("malformed: a name that is not one, or arguments that are not JSON", () => {
    expect(read("args", ["[TOOL_CALLS] two words [ARGS]{}"])).toEqual([{ kind: "text", text: "[TOOL_CALLS] two words [ARGS]{}" }]);
    const reader = new MistralCallReader("args", () => "id1");
    const pieces = [...reader.push("[TOOL_CALLS]f[ARGS]{oops"), ...reader.flush(false)];
    expect(pieces.at(-1)).toMatchObject({ kind: "tool_call", name: "f", arguments: {} });
    expect(reader.endedInsideCall).toBe(true);
  });
});

describe("newMistralToolCallId", () => {
  it("gives 9 letters and digits, different each time", () => {
    const ids = new Set(Array.from({ length: 200 }, () => newMistralToolCallId()));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
  });
});
