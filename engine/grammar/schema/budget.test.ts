// Compile limits: each one, when passed, is a SchemaError that names it (with the keyword and path that crossed it),
// a schema at a limit compiles, and the grammar of an object grows linearly with its properties.
import { describe, expect, it } from "vitest";
import { type ConstraintSpec, constraintGrammar } from "../answer.js";
import { GrammarAutomaton } from "../automaton.js";
import { COMPILE_LIMITS } from "./budget.js";

const names = (n: number, prefix = "p") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
/** Properties named `list`, each its own copy of `schema` (a shared object is compiled once and counted once). */
const properties = (list: string[], schema: unknown = { type: "integer" }) => Object.fromEntries(list.map((name) => [name, structuredClone(schema)]));
const compile = (schema: unknown) => new GrammarAutomaton(constraintGrammar({ format: { type: "json_schema", schema } }));

describe("compile limits", () => {
  it("properties per object: the issue's 20,000 required properties are refused at once; 1,000 compile", () => {
    const many = names(20_000);
    expect(() => compile({ type: "object", properties: properties(many), required: many }))
      .toThrowError(expect.objectContaining({ keyword: "properties", path: "", message: expect.stringContaining(`${COMPILE_LIMITS.propertiesPerObject} properties`) }));
    const required = names(COMPILE_LIMITS.propertiesPerObject, "r");
    expect(() => compile({ type: "object", required: [...required, "one more"] })).toThrowError(expect.objectContaining({ keyword: "properties" }));
    const automaton = compile({ type: "object", properties: properties(required), required });
    expect(automaton.stepBytes(automaton.initial, new TextEncoder().encode('{"r0":'))).not.toBeNull();
  });

  it("subschemas: the whole constraint counts, tools together", () => {
    const object = (k: number) => ({ type: "object", properties: properties(names(900), { type: "integer", minimum: k }) });
    const big = { type: "object", properties: Object.fromEntries(Array.from({ length: 6 }, (_, k) => [`o${k}`, object(k)])) };
    expect(() => compile(big)).toThrowError(expect.objectContaining({ keyword: "size", message: expect.stringContaining("limit on schema size") }));
    const tools = Array.from({ length: 6 }, (_, k) => ({ name: `t${k}`, parameters: object(k) }));
    const spec: ConstraintSpec = { format: { type: "tool_calls", tools, choice: "required", tags: { open: "<a>", close: "</a>" } } };
    expect(() => constraintGrammar(spec)).toThrowError(expect.objectContaining({ keyword: "size", path: expect.stringMatching(/^\/tools\/5\/parameters/) }));
    expect(() => constraintGrammar({ ...spec, format: { ...spec.format, tools: tools.slice(0, 5) } as ConstraintSpec["format"] })).not.toThrow();
  });

  it("literals: their count and their bytes", () => {
    const enums = properties(names(20), { enum: Array.from({ length: 1024 }, (_, i) => i) });
    expect(() => compile({ type: "object", properties: enums })).toThrowError(expect.objectContaining({ keyword: "enum", message: expect.stringContaining("limit on literals") }));
    const long = properties(names(300), { const: "x".repeat(1000) });
    expect(() => compile({ type: "object", properties: long })).toThrowError(expect.objectContaining({ keyword: "const", message: expect.stringContaining("limit on literal bytes") }));
    const longNames = names(300, "y".repeat(1000));
    expect(() => compile({ type: "object", properties: properties(longNames) })).toThrowError(expect.objectContaining({ keyword: "properties", message: expect.stringContaining("limit on literal bytes") }));
    expect(() => compile({ type: "object", properties: properties(names(19), { enum: Array.from({ length: 1024 }, (_, i) => i) }) })).not.toThrow();
  });

  it("pattern work: patterns, formats and their products together", () => {
    const patterns = Object.fromEntries([0, 1, 2, 3].map((i) => [`s${i}`, { type: "string", pattern: `[ab]*a[ab]{11}${"x".repeat(i)}` }]));
    expect(() => compile({ type: "object", properties: patterns })).toThrowError(expect.objectContaining({ keyword: "pattern", message: expect.stringContaining("limit on pattern work") }));
    const formats = Object.fromEntries(["email", "uri", "ipv6", "hostname", "date-time", "duration", "uuid", "ipv4", "date", "time"].map((format) => [format, { type: "string", format }]));
    expect(() => compile({ type: "object", properties: formats })).not.toThrow();
  });
});

describe("object grammars grow linearly with their properties", () => {
  it("1,000 optional properties: a few rules and symbols per property (skipping one was an alternative per later property)", () => {
    for (const n of [100, 1000]) {
      const grammar = constraintGrammar({ format: { type: "json_schema", schema: { type: "object", properties: properties(names(n), { type: "string" }) } } });
      const symbols = grammar.rules.reduce((sum, alternatives) => sum + alternatives.reduce((count, sequence) => count + sequence.length + 1, 0), 0);
      expect(symbols, `${n} properties`).toBeLessThan(20 * n);
    }
  });
});
