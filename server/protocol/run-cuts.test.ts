// Output cut short at every character, by the token limit or a stop sequence: whatever the protocol layer held back
// (a partial think tag, a partial tool-call tag, an unfinished call) must come out as what it was, never as text.
import { partialParse } from "@anthropic-ai/sdk/_vendor/partial-json-parser/parser";
import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../../engine/request.js";
import { type Script, engineEvents, replay } from "../testing/scripted-engine.js";
import type { InternalEvent, InternalRequest } from "./internal.js";
import { internalEvents } from "./run.js";

const REASONING = "Let me see.";
const TEXT = "Checking.\n";
const ARGUMENTS = '{"city": "Paris", "unit": "c"}';
const CALL = `<tool_call>\n{"name": "get_weather", "arguments": ${ARGUMENTS}}\n</tool_call>`;
const WHOLE = `<think>\n${REASONING}</think>\n\n${TEXT}${CALL}`;

const at = (part: string) => WHOLE.indexOf(part);
const reasoningStart = at(REASONING);
const textStart = at(TEXT);
const nameEnd = at('get_weather"') + 'get_weather"'.length;
const argumentsStart = at(ARGUMENTS);
const argumentsEnd = argumentsStart + ARGUMENTS.length;

const MARKUP = /[<>]|think|tool_call|"name"|"arguments"/;

function request(overrides: Partial<InternalRequest> = {}): InternalRequest {
  return {
    format: "anthropic",
    model: "m",
    messages: [{ role: "user", content: "Weather in Paris?" }],
    tools: [{ name: "get_weather", parameters: { type: "object" } }],
    sampling: {},
    stop: [],
    stream: true,
    includeUsage: false,
    thinking: { enabled: true },
    autoCompaction: true,
    ...overrides,
  };
}

async function collect(script: Script, req = request()): Promise<InternalEvent[]> {
  const events: InternalEvent[] = [];
  for await (const event of internalEvents(replay(engineEvents(script)), req)) events.push(event);
  return events;
}

/** The two ways the output before a cut may arrive: whole, and one character at a time. */
function deltasOf(output: string): string[][] {
  return output === "" ? [[]] : [[output], [...output]];
}

/** Checks one cut output's events: the InternalEvent order, no markup, and what each part must be. */
function expectCut(events: InternalEvent[], length: number, finish: { reason: string; stopSequence?: string }): void {
  const where = JSON.stringify(WHOLE.slice(0, length));
  const order = ["start", "thinking", "text", "tool_call_start", "tool_call_delta", "tool_call", "finish"];
  const ranks = events.map((event) => order.indexOf(event.type === "tool_call_delta" ? "tool_call_start" : event.type));
  expect(ranks, where).toEqual([...ranks].sort((a, b) => a - b));

  const joined = (type: "thinking" | "text") => events.flatMap((event) => (event.type === type ? [event.text] : [])).join("");
  expect(joined("thinking"), where).not.toMatch(MARKUP);
  expect(joined("text"), where).not.toMatch(MARKUP);
  expect(joined("thinking"), where).toBe(REASONING.slice(0, Math.max(0, length - reasoningStart)));
  expect(TEXT.startsWith(joined("text")), where).toBe(true);
  if (length > textStart + TEXT.length) expect(joined("text"), where).toBe(TEXT.trimEnd());

  const calls = events.flatMap((event) => (event.type === "tool_call" ? [event] : []));
  if (length < nameEnd) {
    expect(calls, where).toEqual([]);
  } else {
    const argumentsText = ARGUMENTS.slice(0, Math.max(0, length - argumentsStart));
    expect(calls.map(({ name, argumentsText, arguments: args }) => ({ name, argumentsText, args })), where).toEqual([
      { name: "get_weather", argumentsText, args: argumentsText === "" ? {} : partialParse(argumentsText) },
    ]);
  }
  expect(events.at(-1), where).toMatchObject({ type: "finish", ...finish });
}

describe("run.ts: output cut short", () => {
  it("by the token limit, at every character: no markup leaks, a call counts once named, finish max_tokens", async () => {
    for (let length = 0; length < WHOLE.length; length++) {
      for (const deltas of deltasOf(WHOLE.slice(0, length))) {
        expectCut(await collect({ deltas, reason: "length" }), length, { reason: "max_tokens" });
      }
    }
  });

  it("by a stop sequence, at every character: the same, and tool_use only once the call's arguments are whole", async () => {
    for (let length = 0; length <= WHOLE.length; length++) {
      for (const deltas of deltasOf(WHOLE.slice(0, length))) {
        const events = await collect({ deltas, reason: "stop", stopSequence: "STOP" });
        expectCut(events, length, length >= argumentsEnd ? { reason: "tool_use" } : { reason: "stop_sequence", stopSequence: "STOP" });
      }
    }
  });

  it("keeps what is held back at a natural end: the model chose to stop there", async () => {
    const shape = (events: InternalEvent[]) =>
      events.reduce<string[][]>((merged, event) => {
        if (event.type !== "thinking" && event.type !== "text") return merged;
        const last = merged.at(-1);
        if (last?.[0] === event.type) last[1] += event.text;
        else merged.push([event.type, event.text]);
        return merged;
      }, []);
    expect(shape(await collect({ deltas: ["<think>still thinking</thi"] }))).toEqual([["thinking", "still thinking</thi"]]);
    expect(shape(await collect({ deltas: ["a <b>bold</b> <tool"] }, request({ thinking: { enabled: false } })))).toEqual([["text", "a <b>bold</b> <tool"]]);
  });

  it("yields nothing more when aborted inside a call", async () => {
    const events: EngineEvent[] = engineEvents({ deltas: [TEXT, CALL.slice(0, 30)] });
    const finish = events.at(-1) as Extract<EngineEvent, { type: "finish" }>;
    finish.reason = "aborted";
    const seen: InternalEvent[] = [];
    for await (const event of internalEvents(replay(events), request({ thinking: { enabled: false } }))) seen.push(event);
    expect(seen.map((event) => event.type)).toEqual(["start", "text"]);
    expect(seen.flatMap((event) => (event.type === "text" ? [event.text] : [])).join("")).toBe(TEXT.trimEnd());
  });
});
