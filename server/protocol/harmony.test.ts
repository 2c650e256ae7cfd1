// The harmony reader: gpt-oss replies (analysis, final, commentary preambles and tool calls) out of streamed text,
// whatever the delta boundaries, and what a cut reply leaves.
import { describe, expect, it } from "vitest";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { tokenizerFromHuggingFace } from "../../engine/tokenizer/huggingface.js";
import { constraintSpecOf } from "./constraint.js";
import { HarmonyParser, type HarmonyPiece, harmonyReasoningEffort, routeOfHeader } from "./harmony.js";
import type { InternalRequest } from "./internal.js";
import { toEngineRequest } from "./run.js";

/** Feeds `deltas` (ids numbered) and merges consecutive pieces of one kind; `cut`: generation was cut short. */
function parse(deltas: string[], options: { cut?: boolean; calls?: boolean } = {}): { pieces: HarmonyPiece[]; parser: HarmonyParser } {
  let n = 0;
  const parser = new HarmonyParser(options.calls ?? true, () => `call_${++n}`);
  const pieces = [...deltas.flatMap((d) => parser.push(d)), ...parser.flush(options.cut)];
  const merged = pieces.reduce<HarmonyPiece[]>((out, piece) => {
    const last = out.at(-1);
    if ((piece.kind === "text" || piece.kind === "thinking") && last?.kind === piece.kind) last.text += piece.text;
    else if (piece.kind === "tool_call_delta" && last?.kind === "tool_call_delta" && last.index === piece.index) last.arguments += piece.arguments;
    else out.push({ ...piece });
    return out;
  }, []);
  return { pieces: merged, parser };
}

/** Whole, one character at a time, and every way to cut it in two. */
function splits(whole: string): string[][] {
  return [[whole], [...whole], ...Array.from({ length: whole.length - 1 }, (_, i) => [whole.slice(0, i + 1), whole.slice(i + 1)])];
}

const ANALYSIS = "<|channel|>analysis<|message|>User asks the weather. Need tool.<|end|>";
const WEATHER_CALL = '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}';

describe("HarmonyParser", () => {
  it("serves analysis as reasoning and final as the answer, whatever the delta boundaries", () => {
    const whole = "<|channel|>analysis<|message|>2+2 is 4.<|end|><|start|>assistant<|channel|>final<|message|>It is 4.";
    for (const deltas of splits(whole)) {
      const { pieces, parser } = parse(deltas);
      expect(pieces).toEqual([{ kind: "thinking", text: "2+2 is 4." }, { kind: "text", text: "It is 4." }]);
      expect(parser.calls).toBe(0);
    }
  });

  it("never lets markup out while streaming one character at a time", () => {
    const parser = new HarmonyParser(true);
    const pieces = [..."<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>final<|message|>Yes"].flatMap((c) => parser.push(c));
    expect(pieces.map((piece) => ("text" in piece ? piece.text : "")).join("")).toBe("Hm.Yes");
    expect(pieces.every((piece) => !("text" in piece) || !piece.text.includes("<"))).toBe(true);
  });

  it("is inside reasoning exactly in an analysis body", () => {
    const parser = new HarmonyParser(false);
    const seen: boolean[] = [];
    for (const delta of ["<|channel|>analysis", "<|message|>", "think", "<|end|>", "<|start|>assistant<|channel|>final<|message|>", "ok"]) {
      parser.push(delta);
      seen.push(parser.reasoning);
    }
    expect(seen).toEqual([false, true, true, false, false, false]);
  });

  it("streams a tool call: its start with the name, the arguments, the whole call", () => {
    const whole = ANALYSIS + WEATHER_CALL;
    for (const deltas of splits(whole)) {
      const { pieces, parser } = parse(deltas);
      expect(pieces).toEqual([
        { kind: "thinking", text: "User asks the weather. Need tool." },
        { kind: "tool_call_start", index: 0, id: "call_1", name: "get_weather" },
        { kind: "tool_call_delta", index: 0, arguments: '{"city":"Paris"}' },
        { kind: "tool_call", index: 0, id: "call_1", name: "get_weather", arguments: { city: "Paris" }, argumentsText: '{"city":"Paris"}' },
      ]);
      expect([parser.calls, parser.endedInsideCall]).toEqual([1, false]);
    }
  });

  it("reads the recipient before the channel, a content type without <|constrain|>, and <|call|> as the end", () => {
    const { pieces } = parse([ANALYSIS, '<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{"q": [1, 2]}<|call|>']);
    expect(pieces.at(-1)).toEqual({ kind: "tool_call", index: 0, id: "call_1", name: "lookup", arguments: { q: [1, 2] }, argumentsText: '{"q": [1, 2]}' });
    // The first message may carry the recipient too (the prompt wrote `<|start|>assistant`).
    expect(parse([' to=functions.now<|channel|>commentary <|constrain|>json<|message|>{}']).pieces).toEqual([
      { kind: "tool_call_start", index: 0, id: "call_1", name: "now" },
      { kind: "tool_call_delta", index: 0, arguments: "{}" },
      { kind: "tool_call", index: 0, id: "call_1", name: "now", arguments: {}, argumentsText: "{}" },
    ]);
  });

  it("serves a commentary preamble as answer text before the call", () => {
    const whole = `${ANALYSIS}<|start|>assistant<|channel|>commentary<|message|>Let me look that up.<|end|>${WEATHER_CALL}`;
    for (const deltas of [[whole], [...whole]]) {
      const { pieces } = parse(deltas);
      expect(pieces.slice(0, 3)).toEqual([
        { kind: "thinking", text: "User asks the weather. Need tool." },
        { kind: "text", text: "Let me look that up." },
        { kind: "tool_call_start", index: 0, id: "call_1", name: "get_weather" },
      ]);
    }
  });

  it("separates two messages of one kind, and takes the last channel of a header with a stray commentary", () => {
    const whole = "<|channel|>analysis<|message|>One.<|end|><|start|>assistant<|channel|>commentary to=assistant<|channel|>analysis<|message|>Two.<|end|><|start|>assistant<|channel|>commentary<|message|>Wait.<|end|><|start|>assistant<|channel|>final<|message|>Done.";
    expect(parse([...whole]).pieces).toEqual([{ kind: "thinking", text: "One.\n\nTwo." }, { kind: "text", text: "Wait.\n\nDone." }]);
  });

  it("holds a preamble until the call, so that reasoning written after it still comes first", () => {
    const whole = `${ANALYSIS}<|start|>assistant<|channel|>commentary<|message|>Let me look.<|end|><|start|>assistant<|channel|>analysis<|message|>Paris it is.<|end|>${WEATHER_CALL}`;
    for (const deltas of [[whole], [...whole]]) {
      expect(parse(deltas).pieces.slice(0, 3)).toEqual([
        { kind: "thinking", text: "User asks the weather. Need tool.\n\nParis it is." },
        { kind: "text", text: "Let me look." },
        { kind: "tool_call_start", index: 0, id: "call_1", name: "get_weather" },
      ]);
    }
    // Nothing follows the preamble: it comes at the end.
    expect(parse([`${ANALYSIS}<|start|>assistant<|channel|>commentary<|message|>Let me look.`]).pieces.at(-1)).toEqual({ kind: "text", text: "Let me look." });
  });

  it("keeps a call's body as answer text when the request offers no tools", () => {
    expect(parse([WEATHER_CALL.replace("<|start|>assistant", "")], { calls: false }).pieces).toEqual([{ kind: "text", text: '{"city":"Paris"}' }]);
    expect(routeOfHeader("<|channel|>commentary to=functions.f", false)).toEqual({ kind: "text" });
    expect(routeOfHeader("assistant to=functions.f<|channel|>commentary json", true)).toEqual({ kind: "call", name: "f" });
    expect(routeOfHeader("<|channel|>commentary to=python", true)).toEqual({ kind: "text" });
    expect(routeOfHeader("assistant<|channel|>commentary", true)).toEqual({ kind: "text", preamble: true });
  });

  it("reads a first message that opens with <|start|>assistant again like any other", () => {
    for (const deltas of splits("<|start|>assistant<|channel|>final<|message|>Hi")) expect(parse(deltas).pieces).toEqual([{ kind: "text", text: "Hi" }]);
  });

  it("reads a model that writes no harmony markup as plain text", () => {
    for (const deltas of splits("Hello there\nfriend")) expect(parse(deltas).pieces).toEqual([{ kind: "text", text: "Hello there\nfriend" }]);
  });

  it("drops what a cut leaves inside a marker or a header, and keeps it at a natural end", () => {
    expect(parse(["<|channel|>analysis<|message|>thinking<|en"], { cut: true }).pieces).toEqual([{ kind: "thinking", text: "thinking" }]);
    expect(parse([..."<|channel|>analysis<|message|>thinking<|"], { cut: true }).pieces).toEqual([{ kind: "thinking", text: "thinking" }]);
    expect(parse(["<|channel|>analysis<|message|>thinking<|en"]).pieces).toEqual([{ kind: "thinking", text: "thinking<|en" }]);
    expect(parse([`${ANALYSIS}<|start|>assistant<|chan`], { cut: true }).pieces).toEqual([{ kind: "thinking", text: "User asks the weather. Need tool." }]);
    expect(parse([`${ANALYSIS}<|sta`], { cut: true }).pieces).toEqual([{ kind: "thinking", text: "User asks the weather. Need tool." }]);
    expect(parse(["<|channel|>fin"], { cut: true }).pieces).toEqual([]);
  });

  it("keeps a call cut inside its arguments as a call with what was written, marked unfinished", () => {
    for (const cut of [true, false]) {
      const { pieces, parser } = parse([ANALYSIS, WEATHER_CALL.slice(0, -8)], { cut });
      expect(pieces.at(-1)).toEqual({ kind: "tool_call", index: 0, id: "call_1", name: "get_weather", arguments: {}, argumentsText: '{"city":' });
      expect(parser.endedInsideCall).toBe(true);
    }
    // Cut before the header's <|message|>: no call at all.
    const { pieces, parser } = parse([ANALYSIS, WEATHER_CALL.slice(0, WEATHER_CALL.indexOf("<|message|>"))], { cut: true });
    expect(pieces).toEqual([{ kind: "thinking", text: "User asks the weather. Need tool." }]);
    expect(parser.calls).toBe(0);
  });

  it("reports malformed call JSON as an unfinished call with its raw text", () => {
    const { pieces, parser } = parse([`${ANALYSIS}<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": oops}<|call|>`]);
    expect(pieces.at(-1)).toEqual({ kind: "tool_call", index: 0, id: "call_1", name: "f", arguments: {}, argumentsText: '{"a": oops}' });
    expect(parser.endedInsideCall).toBe(true);
  });

  it("drops whitespace that is layout around messages and arguments", () => {
    const { pieces } = parse(["<|channel|>final<|message|>\n", "Hi", "<|end|>\n"]);
    expect(pieces).toEqual([{ kind: "text", text: "Hi" }]);
    expect(parse([' to=functions.f<|channel|>commentary json<|message|> {"a": 1}\n ']).pieces.at(-1)).toMatchObject({ argumentsText: '{"a": 1}', arguments: { a: 1 } });
  });
});

describe("harmony requests", () => {
  const base: InternalRequest = {
    format: "openai", model: "m", messages: [{ role: "user", content: "Weather in Paris?" }], sampling: {}, stop: [], stream: false,
    includeUsage: false, thinking: { enabled: false }, autoCompaction: true,
  };
  const weather = { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } };
  const harmony = { syntax: "harmony" } as const;

  it("constrains the whole reply: calls as tool_choice says, a response format in the final message", () => {
    expect(constraintSpecOf(base, harmony)).toBeUndefined();
    expect(constraintSpecOf({ ...base, tools: [weather] }, harmony)).toEqual({ format: { type: "harmony", tools: [weather], choice: "auto" } });
    expect(constraintSpecOf({ ...base, tools: [weather], toolChoice: { type: "any" } }, harmony)?.format).toMatchObject({ choice: "required" });
    expect(constraintSpecOf({ ...base, tools: [weather], toolChoice: { type: "tool", name: "get_weather" } }, harmony)?.format).toMatchObject({ choice: { name: "get_weather" } });
    expect(constraintSpecOf({ ...base, tools: [weather], toolChoice: { type: "none" } }, harmony)?.format).toEqual({ type: "harmony", tools: [], choice: "none" });
    const json = { type: "json_object" } as const;
    expect(constraintSpecOf({ ...base, responseFormat: json, thinking: { enabled: true } }, { ...harmony, whitespace: "pretty" })).toEqual({ format: { type: "harmony", tools: [], choice: "none", answer: json }, whitespace: "pretty" });
    // Tagged models are unchanged: their reasoning is a prefix before the answer's format.
    expect(constraintSpecOf({ ...base, responseFormat: json, thinking: { enabled: true } })).toEqual({ format: json, thinking: { open: "<think>", close: "</think>" } });
  });

  it("maps the thinking settings to the template's reasoning effort, with no tag budget", () => {
    expect([{ enabled: false }, { enabled: true }, { enabled: true, budgetTokens: 1024 }, { enabled: true, budgetTokens: 8000 }, { enabled: true, budgetTokens: 20000 }, { enabled: true, budgetTokens: 100, effort: "high" as const }].map(harmonyReasoningEffort))
      .toEqual(["low", "medium", "low", "medium", "high", "high"]);
    const request = toEngineRequest("r", { ...base, thinking: { enabled: true, budgetTokens: 2048 } }, harmony);
    expect(request.input).toMatchObject({ templateKwargs: { enable_thinking: true, reasoning_effort: "low" } });
    expect(request.thinkingBudget).toBeUndefined();
    expect(toEngineRequest("r", { ...base, thinking: { enabled: true, budgetTokens: 2048 } }).thinkingBudget).toEqual({ tokens: 2048 });
  });
});

const tokenizerReason = missingFixtureReason(FIXTURES.gptOssDirectory);
describe.skipIf(skipOutsideCi(tokenizerReason))(titled("HarmonyParser on gpt-oss's tokens", tokenizerReason), () => {
  it("reads a reply token by token as the engine streams it, markers as single tokens, characters split across tokens", () => {
    failIfMissing(tokenizerReason);
    const tokenizer = tokenizerFromHuggingFace(FIXTURES.gptOssDirectory);
    const reply = "<|channel|>analysis<|message|>Météo à Paris 🌦️, 天气?<|end|><|start|>assistant<|channel|>commentary<|message|>Je regarde 🔍.<|end|>" +
      '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris 🗼"}';
    const tokens = tokenizer.encode(reply, { addSpecial: false, parseSpecial: true });
    for (const marker of ["<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|constrain|>"]) expect(tokens).toContain(tokenizer.tokenId(marker));
    const decoder = tokenizer.createStreamDecoder();
    const deltas = [...tokens.map((token) => decoder.push(token)), decoder.flush()].filter((text) => text !== "");
    expect(deltas.join("")).toBe(reply);
    const expected = [
      { kind: "thinking", text: "Météo à Paris 🌦️, 天气?" },
      { kind: "text", text: "Je regarde 🔍." },
      { kind: "tool_call_start", index: 0, id: "call_1", name: "get_weather" },
      { kind: "tool_call_delta", index: 0, arguments: '{"city":"Paris 🗼"}' },
      { kind: "tool_call", index: 0, id: "call_1", name: "get_weather", arguments: { city: "Paris 🗼" }, argumentsText: '{"city":"Paris 🗼"}' },
    ];
    expect(parse(deltas).pieces).toEqual(expected);
    expect(parse([reply]).pieces).toEqual(expected);
  }, 60_000);
});
