// propertyNames (every z.record writes one) with additionalProperties: extra keys satisfy it and never repeat a declared
// name, declared names it refuses are never written (or refused when required), and a key can never dead-end.
import { describe, expect, it } from "vitest";
import { constraintGrammar } from "../answer.js";
import { GrammarAutomaton } from "../automaton.js";
import { checkWalks } from "../testing/walk-check.js";

const UTF8 = new TextEncoder();

function automatonOf(schema: unknown): GrammarAutomaton {
  return new GrammarAutomaton(constraintGrammar({ format: { type: "json_schema", schema } }));
}

function accepts(schema: unknown, text: string): boolean {
  const automaton = automatonOf(schema);
  return automaton.stepBytes(automaton.initial, UTF8.encode(text))?.accepting ?? false;
}

describe("propertyNames", () => {
  it("z.record(z.string(), z.number()): any key, number values", () => {
    const schema = { type: "object", propertyNames: { type: "string" }, additionalProperties: { type: "number" } };
    expect(accepts(schema, '{"any key \\n": 1, "x": -2.5}')).toBe(true);
    expect(accepts(schema, '{"x": "y"}')).toBe(false);
    expect(checkWalks(schema).problems).toEqual([]);
  });

  it("a pattern: every extra key matches it", () => {
    const schema = { type: "object", propertyNames: { type: "string", pattern: "^[a-z]+$" }, additionalProperties: { type: "integer" } };
    expect(accepts(schema, '{"abc": 1, "z": 2}')).toBe(true);
    expect(accepts(schema, '{"Abc": 1}')).toBe(false);
    expect(accepts(schema, '{"": 1}')).toBe(false);
    const report = checkWalks(schema);
    expect(report.problems).toEqual([]);
    expect(report.documents.some((document) => Object.keys(document as object).length > 0)).toBe(true);
  });

  it("z.record(z.enum([...]), ...): the listed keys, all required, and nothing else", () => {
    const schema = { type: "object", propertyNames: { type: "string", enum: ["a", "b"] }, additionalProperties: { type: "number" }, required: ["a", "b"] };
    expect(accepts(schema, '{"a": 1, "b": 2}')).toBe(true);
    expect(accepts(schema, '{"a": 1}')).toBe(false);
    expect(accepts(schema, '{"a": 1, "b": 2, "c": 3}')).toBe(false);
    expect(checkWalks(schema).problems).toEqual([]);
    const partial = { type: "object", propertyNames: { enum: ["x", "y", 3] }, additionalProperties: true };
    expect(accepts(partial, '{"y": null, "x": []}')).toBe(true);
    expect(accepts(partial, '{"3": 1}')).toBe(false);
  });

  it("lengths and formats constrain keys too", () => {
    const short = { type: "object", propertyNames: { maxLength: 2 }, additionalProperties: { type: "boolean" } };
    expect(accepts(short, '{"ab": true}')).toBe(true);
    expect(accepts(short, '{"abc": true}')).toBe(false);
    expect(checkWalks(short).problems).toEqual([]);
    const ids = { type: "object", propertyNames: { format: "uuid" }, additionalProperties: { type: "string", maxLength: 3 } };
    expect(accepts(ids, '{"123e4567-e89b-12d3-a456-426614174000": "x"}')).toBe(true);
    expect(accepts(ids, '{"key": "x"}')).toBe(false);
    expect(checkWalks(ids).problems).toEqual([]);
  });

  it("extra keys never repeat a declared or required name, and a declared name it refuses is not written", () => {
    const schema = { type: "object", properties: { a: { type: "integer" }, Q: { type: "integer" } }, propertyNames: { pattern: "^[a-c]$" }, additionalProperties: true };
    expect(accepts(schema, '{"a": 1, "b": 2}')).toBe(true);
    expect(accepts(schema, '{"a": 1, "a": 2}')).toBe(false);
    expect(accepts(schema, '{"Q": 1}')).toBe(false);
    const automaton = automatonOf(schema);
    expect(automaton.stepBytes(automaton.initial, UTF8.encode('{"a": 1, "a'))).toBeNull();
    expect(checkWalks(schema).problems).toEqual([]);
    expect(() => automatonOf({ type: "object", properties: { Q: { type: "integer" } }, required: ["Q"], propertyNames: { pattern: "^[a-c]$" } }))
      .toThrowError(expect.objectContaining({ keyword: "propertyNames", path: "" }));
  });

  it("when the declared names use up every allowed key, no extra key is offered: nothing dead-ends", () => {
    for (const schema of [
      { type: "object", properties: { "": { type: "null" } }, propertyNames: { maxLength: 0 }, additionalProperties: { type: "integer" } },
      { type: "object", properties: { a: { type: "null" }, b: { type: "null" } }, propertyNames: { pattern: "^[ab]$" }, additionalProperties: { type: "integer" } },
      { type: "object", properties: { a: { type: "null" } }, propertyNames: { enum: ["a"] }, additionalProperties: { type: "integer" } },
      { type: "object", propertyNames: false, additionalProperties: { type: "integer" } },
    ]) {
      const report = checkWalks(schema, 30);
      expect(report.problems, JSON.stringify(schema)).toEqual([]);
      expect(accepts(schema, '{"b": 1}') && accepts(schema, '{"c": 1}'), JSON.stringify(schema)).toBe(false);
    }
  });

  it("forms that cannot be enforced on keys are refused, naming propertyNames", () => {
    for (const names of [{ anyOf: [{ pattern: "^a" }, { pattern: "^b" }] }, { $ref: "#/$defs/name" }, { not: { const: "x" } }, { enum: ["a"], pattern: "^a" }, { type: "string", pattern: "(?<=a)b" }]) {
      const schema = { type: "object", propertyNames: names, additionalProperties: true, $defs: { name: { pattern: "^a" } } };
      expect(() => automatonOf(schema), JSON.stringify(names)).toThrowError(expect.objectContaining({ keyword: expect.stringMatching(/^(propertyNames|pattern)$/) }));
    }
  });
});
