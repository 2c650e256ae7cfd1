// The answer formats other than a bare JSON Schema, matched byte by byte: JSON mode, tool calls between tags under each
// tool_choice, and free reasoning before the answer.
import { describe, expect, it } from "vitest";
import { type ConstraintSpec, type ToolSpec, constraintGrammar } from "./answer.js";
import { GrammarAutomaton, type MatchState } from "./automaton.js";
import { SchemaError } from "./schema/errors.js";

const UTF8 = new TextEncoder();

function automatonOf(spec: ConstraintSpec): GrammarAutomaton {
  return new GrammarAutomaton(constraintGrammar(spec));
}

/** The state after `text`, or null when some byte of it is refused. */
function after(automaton: GrammarAutomaton, text: string): MatchState | null {
  return automaton.stepBytes(automaton.initial, UTF8.encode(text));
}

function expectAccepted(automaton: GrammarAutomaton, texts: string[]): void {
  for (const text of texts) expect(after(automaton, text)?.accepting, `should accept ${JSON.stringify(text)}`).toBe(true);
}

/** Not a whole answer: refused at some byte, or a prefix that is not complete. */
function expectRefused(automaton: GrammarAutomaton, texts: string[]): void {
  for (const text of texts) expect(after(automaton, text)?.accepting ?? false, `should refuse ${JSON.stringify(text)}`).toBe(false);
}

/** Refused at some byte (not merely incomplete). */
function expectCut(automaton: GrammarAutomaton, texts: string[]): void {
  for (const text of texts) expect(after(automaton, text), `should cut ${JSON.stringify(text)}`).toBeNull();
}

/** Refused exactly at the byte where `prefix` ends: `prefix` itself is live, one more byte of `text` is not. */
function expectCutAfter(automaton: GrammarAutomaton, prefix: string, rest: string): void {
  expect(after(automaton, prefix), `${JSON.stringify(prefix)} is live`).not.toBeNull();
  expect(after(automaton, prefix + rest), `${JSON.stringify(prefix + rest)} is cut`).toBeNull();
}

function schemaError(thunk: () => unknown): SchemaError {
  try {
    thunk();
  } catch (error) {
    if (error instanceof SchemaError) return error;
    throw error;
  }
  throw new Error("no SchemaError thrown");
}

describe("whitespace between JSON tokens is bounded", () => {
  const nested = { a: 1, b: { c: ["x", { d: [] }], e: {} }, f: [1, 2] };

  it("compact (the default): one optional space after a colon or comma, nothing else", () => {
    const compact = automatonOf({ format: { type: "json_object" } });
    expectAccepted(compact, [JSON.stringify(nested), '{"a": 1, "b": {"c": ["x", {"d": []}], "e": {}}, "f": [1, 2]}']);
    expectCut(compact, [" {}", "{ }", '{ "a":1}', '{"a" :1}', '{"a":1 }', '{"a":1 ,"b":2}', "{\n}", '{"a":\n1}', '{"a":[1 ]}', '{"a":[ 1]}']);
    expectCutAfter(compact, '{"a": ', " ");
    expectCutAfter(compact, '{"a":1, ', " ");
    expectCutAfter(compact, '{"a":1,', "\t");
  });

  it("pretty: also a line break after { [ and , and before } ], indented two spaces per level", () => {
    const pretty = automatonOf({ format: { type: "json_object" }, whitespace: "pretty" });
    expectAccepted(pretty, [JSON.stringify(nested, null, 2), JSON.stringify(nested), '{"a": 1, "b": {"c": ["x", {"d": []}], "e": {}}, "f": [1, 2]}', '{\n  "a": [1, 2]\n}']);
    expectCut(pretty, ['{\n "a": 1}', '{\n    "a": 1}', '{\n\n  "a": 1}', '{"a": {\n  "b": 1}}', '{\n  "a": 1\n  }', "{\n  }", '{\n\t"a": 1}']);
    expectCutAfter(pretty, '{\n  "a": [\n    1,\n    ', " ");
    // Deeper than the last pretty level, containers are compact.
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = { k: deep };
    expectAccepted(pretty, [JSON.stringify(deep)]);
    expectRefused(pretty, [JSON.stringify(deep, null, 2)]);
  });

  it("tool calls: a line break or a space around the tagged JSON, laid out like any JSON inside", () => {
    const tools: ToolSpec[] = [{ name: "f", parameters: { type: "object", properties: { x: { type: "array", items: { type: "integer" } } }, required: ["x"] } }];
    const pretty = automatonOf({ format: { type: "tool_calls", tools, choice: "required", tags: TAGS }, whitespace: "pretty" });
    const body = { name: "f", arguments: { x: [1, 2] } };
    expectAccepted(pretty, [`<tool_call>\n${JSON.stringify(body, null, 2)}\n</tool_call>`, `<tool_call>${JSON.stringify(body)}</tool_call>`]);
    expectCut(pretty, [`<tool_call>\n\n${JSON.stringify(body)}</tool_call>`, `<tool_call>   ${JSON.stringify(body)}</tool_call>`]);
  });
});

describe("json_object", () => {
  const automaton = automatonOf({ format: { type: "json_object" } });

  it("accepts objects: empty, nested, with or without a space after colons and commas", () => {
    expectAccepted(automaton, [
      "{}",
      '{"a":1}',
      '{"a": {"b": [1, -2.5, {"c": null}], "d": "x"}, "e": true, "f": false, "g": []}',
      '{"a":{"b":[1,-2.5,{"c":null}],"d":"x"},"e":true}',
      '{"é😀": "\\u00e9\\n"}',
    ]);
    expect(after(automaton, "{}")!.finished).toBe(true);
    expect(after(automaton, '{"a": [1')!.accepting).toBe(false);
  });

  it("refuses anything but an object at the top level", () => {
    expectCut(automaton, ["[]", "[1]", '"s"', "1", "-1", "null", "true", "false", "x"]);
    expectRefused(automaton, ["", "{", '{"a"', '{"a":}', '{"a":1,}', "{} {}", '{"a":1e5}', "{'a':1}", '{"a":01}']);
    expectCutAfter(automaton, "{}", " ");
    expectCutAfter(automaton, '{"a":1,', "}");
  });
});

const TAGS = { open: "<tool_call>", close: "</tool_call>" };
const TOOLS: ToolSpec[] = [
  {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { location: { type: "string", minLength: 1 }, unit: { enum: ["celsius", "fahrenheit"] } },
      required: ["location"],
      additionalProperties: false,
    },
  },
  { name: "ping", parameters: { type: "object", properties: { host: { type: "string" } } } },
];

/** A call as Qwen's chat template writes it. */
const call = (name: string, args: string) => `<tool_call>\n{"name": "${name}", "arguments": ${args}}\n</tool_call>`;
const WEATHER = call("get_weather", '{"location": "Paris"}');
const PING = call("ping", "{}");

describe("tool_calls", () => {
  it("required: one call or more, separated by whitespace; no text, no unknown tool, arguments as their schema says", () => {
    const automaton = automatonOf({ format: { type: "tool_calls", tools: TOOLS, choice: "required", tags: TAGS } });
    expectAccepted(automaton, [
      WEATHER,
      PING,
      `${WEATHER}\n${PING}`,
      `${PING}\n${WEATHER}\n${WEATHER}`,
      `${WEATHER}${PING}`,
      '<tool_call>{"name":"get_weather","arguments":{"location":"Oslo","unit":"celsius"}}</tool_call>',
      call("ping", '{"host": "example.com"}'),
    ]);
    expect(after(automaton, "")!.accepting).toBe(false);
    expect(after(automaton, WEATHER)!.finished).toBe(false); // another call may follow
    // Text before a call.
    expectCut(automaton, ["Sure.", `Sure.\n${WEATHER}`, ` ${WEATHER}`]);
    // A tool that is not among the tools.
    expectCutAfter(automaton, '<tool_call>\n{"name": "', "get_time");
    expectCut(automaton, [call("get_time", "{}"), call("get_weather2", '{"location": "Paris"}')]);
    // Arguments against the schema: a missing required property, an undeclared one, a wrong type, an empty string.
    expectCutAfter(automaton, '<tool_call>\n{"name": "get_weather", "arguments": {', "}");
    expectCut(automaton, [
      call("get_weather", "{}"),
      call("get_weather", '{"location": "Paris", "when": "now"}'),
      call("get_weather", '{"location": 3}'),
      call("get_weather", '{"location": ""}'),
      call("get_weather", '{"location": "Paris", "unit": "kelvin"}'),
      call("ping", '{"host": 1}'),
      call("ping", "[]"),
    ]);
    // Text after the calls.
    expectCutAfter(automaton, `${WEATHER}\n`, "Done");
    expectRefused(automaton, [`${WEATHER}\n`, WEATHER.slice(0, -1)]);
  });

  it("a named tool: exactly one call of it, then the output is finished", () => {
    const automaton = automatonOf({ format: { type: "tool_calls", tools: TOOLS, choice: { name: "get_weather" }, tags: TAGS } });
    expectAccepted(automaton, [WEATHER, call("get_weather", '{"location": "Rome", "unit": "fahrenheit"}')]);
    const end = after(automaton, WEATHER)!;
    expect(end.accepting).toBe(true);
    expect(end.finished).toBe(true);
    expectCut(automaton, [PING, `${WEATHER}\n${WEATHER}`, `${WEATHER} `, `Text ${WEATHER}`]);
    expectCutAfter(automaton, '<tool_call>\n{"name": "', "p");
    expect(after(automaton, "")!.accepting).toBe(false);
  });

  it("auto: nothing, text, text then calls, or calls; text may hold parts of the open tag but nothing follows the calls", () => {
    const automaton = automatonOf({ format: { type: "tool_calls", tools: TOOLS, choice: "auto", tags: TAGS } });
    expect(automaton.initial.accepting).toBe(true);
    expectAccepted(automaton, [
      "",
      "The weather in Paris is sunny.",
      "{not json at all",
      "Let me check.\n" + WEATHER,
      `Checking both.\n${WEATHER}\n${PING}`,
      WEATHER,
      "I could write <tool_ here, or <tool_call without its end, or </tool_call>.",
      "a <tool_<tool_",
    ]);
    // Text that holds a whole open tag is a call: it must go on as one.
    expectRefused(automaton, ["Text <tool_call> more text", "<tool_call>", "x<tool_call>{"]);
    expectCutAfter(automaton, "Text <tool_call>", " more text");
    expectCutAfter(automaton, "Text <tool_<tool_call>", "x");
    // Nothing but whitespace and further calls after a call.
    expectCutAfter(automaton, WEATHER, " Done");
    expectCutAfter(automaton, `Text ${WEATHER}\n`, "Done");
    expectRefused(automaton, [`${WEATHER}\n`]);
    // A call inside text is checked as one.
    expectCut(automaton, [`Text ${call("get_time", "{}")}`, `Text ${call("get_weather", "{}")}`]);
  });

  it("none: text that never opens a call; parallel false: one call at most", () => {
    const none = automatonOf({ format: { type: "tool_calls", tools: TOOLS, choice: "none", tags: TAGS } });
    expectAccepted(none, ["", "Just text, <tool_ even."]);
    expectCut(none, [WEATHER, `Text ${WEATHER}`]);
    const single = automatonOf({ format: { type: "tool_calls", tools: TOOLS, choice: "required", tags: TAGS, parallel: false } });
    expectAccepted(single, [WEATHER, PING]);
    expect(after(single, WEATHER)!.finished).toBe(true);
    expectCut(single, [`${WEATHER}\n${PING}`]);
  });

  it("refuses a tool_choice naming no tool, and reports a tool's schema error under its index", () => {
    const unknown = schemaError(() => constraintGrammar({ format: { type: "tool_calls", tools: TOOLS, choice: { name: "get_time" }, tags: TAGS } }));
    expect(unknown.keyword).toBe("tool_choice");
    expect(unknown.message).toContain("get_time");
    const tools: ToolSpec[] = [TOOLS[0]!, { name: "bad", parameters: { type: "object", properties: { ip: { type: "string", format: "uri-reference" } } } }];
    for (const choice of ["auto", "required", { name: "bad" }] as const) {
      const error = schemaError(() => constraintGrammar({ format: { type: "tool_calls", tools, choice, tags: TAGS } }));
      expect(error.keyword).toBe("format=uri-reference");
      expect(error.path.startsWith("/tools/1/parameters"), error.path).toBe(true);
      expect(error.path).toBe("/tools/1/parameters/properties/ip");
    }
    const uniqueItems = schemaError(() => constraintGrammar({ format: { type: "tool_calls", tools: [{ name: "t", parameters: { type: "array", uniqueItems: true } }], choice: "auto", tags: TAGS } }));
    expect(uniqueItems.keyword).toBe("uniqueItems");
    expect(uniqueItems.path).toBe("/tools/0/parameters");
  });
});

describe("reasoning first", () => {
  const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false };
  const automaton = automatonOf({ format: { type: "json_schema", schema }, thinking: { close: "</think>" } });

  it("takes any text up to the close tag, blank lines, then the answer", () => {
    expectAccepted(automaton, [
      '</think>{"answer": 1}',
      'Let me think. 6 * 7 = 42.</think>\n\n{"answer": 42}',
      'Reasoning with {"answer": 3} and <think> and { unbalanced</think>\n{"answer": 3}',
      '<think>\nhmm\n</think>\n\n{"answer": -5}',
      'é😀 \u0000 </thin </think>{"answer": 0}',
    ]);
    expect(after(automaton, '</think>{"answer": 1}')!.finished).toBe(true);
  });

  it("JSON before the close tag is still reasoning; the answer alone is not enough", () => {
    expectRefused(automaton, ['{"answer": 1}', 'thinking {"answer": 1}', "</think>", "x</think>\n\n"]);
    const reasoning = after(automaton, '{"answer": 1}')!;
    expect(reasoning.finished).toBe(false);
    // After the close tag only the schema's document may come (with at most four line feeds before it).
    expectCutAfter(automaton, "ok</think>", "Answer:");
    expectCutAfter(automaton, "ok</think>", '{"answer": "1"');
    expectCutAfter(automaton, "ok</think>\n\n\n\n", "\n");
    expectCutAfter(automaton, 'ok</think>{"answer": 1}', " ");
    expectCutAfter(automaton, "ok</think>", "</think>");
  });

  it("with an open tag, the output starts with it", () => {
    const opened = automatonOf({ format: { type: "json_object" }, thinking: { open: "<think>", close: "</think>" } });
    expectAccepted(opened, ["<think>\nhmm\n</think>\n\n{}", "<think></think>{}"]);
    expectCut(opened, ["hmm</think>{}", "</think>{}", " <think></think>{}"]);
  });

  it("works with tool calls after the reasoning", () => {
    const tools = automatonOf({ format: { type: "tool_calls", tools: TOOLS, choice: "auto", tags: TAGS }, thinking: { close: "</think>" } });
    expectAccepted(tools, ["plan</think>", `plan</think>\n\n${WEATHER}`, "plan</think>\n\nIt is sunny.", `plan ${WEATHER} inside reasoning</think>\n\nok`]);
    expectRefused(tools, [WEATHER, ""]);
  });
});
