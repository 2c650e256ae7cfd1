// Draft-07 tuples (the AI SDK's and zod-to-json-schema's): `items` as an array is read as prefixItems and
// `additionalItems` as items, whatever `$schema` says; documents validate under ajv's draft-07 mode.
import { describe, expect, it } from "vitest";
import { constraintGrammar } from "../answer.js";
import { GrammarAutomaton } from "../automaton.js";
import { checkWalks } from "../testing/walk-check.js";

const UTF8 = new TextEncoder();
const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

function accepts(schema: unknown, text: string): boolean {
  const automaton = new GrammarAutomaton(constraintGrammar({ format: { type: "json_schema", schema } }));
  return automaton.stepBytes(automaton.initial, UTF8.encode(text))?.accepting ?? false;
}

describe("draft-07 tuples", () => {
  it("a closed tuple (z.tuple([z.string(), z.number()]) under the AI SDK): exactly those items", () => {
    const schema = { $schema: DRAFT_07, type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false, minItems: 2, maxItems: 2 };
    expect(accepts(schema, '["a", 1]')).toBe(true);
    for (const text of ['["a"]', '["a", 1, 2]', '[1, "a"]', "[]"]) expect(accepts(schema, text), text).toBe(false);
    const report = checkWalks(schema);
    expect(report.problems).toEqual([]);
    expect(report.documents.length).toBeGreaterThan(5);
  });

  it("a rest element (additionalItems as a schema), and any further items when it is absent", () => {
    const rest = { $schema: DRAFT_07, type: "array", items: [{ type: "string" }], additionalItems: { type: "boolean" }, minItems: 1 };
    expect(accepts(rest, '["a", true, false]')).toBe(true);
    expect(accepts(rest, '["a", 1]')).toBe(false);
    expect(checkWalks(rest).problems).toEqual([]);
    const open = { $schema: DRAFT_07, type: "array", items: [{ type: "string" }] };
    expect(accepts(open, '["a", {"x": [1]}, null]')).toBe(true);
    expect(accepts(open, "[1]")).toBe(false);
    expect(checkWalks(open).problems).toEqual([]);
  });

  it("is read the same without $schema, inside allOf, and ignores additionalItems beside a schema under items", () => {
    const bare = { type: "array", items: [{ type: "integer" }], additionalItems: false };
    expect(accepts(bare, "[1]")).toBe(true);
    expect(accepts(bare, "[1, 2]")).toBe(false);
    const merged = { allOf: [{ type: "array", items: [{ type: "integer" }], additionalItems: false }, { minItems: 1 }] };
    expect(accepts(merged, "[7]")).toBe(true);
    expect(accepts(merged, "[]")).toBe(false);
    const ignored = { $schema: DRAFT_07, type: "array", items: { type: "integer" }, additionalItems: false };
    expect(accepts(ignored, "[1, 2, 3]")).toBe(true);
    expect(checkWalks(ignored).problems).toEqual([]);
  });

  it("refuses items as an array beside prefixItems (two drafts at once)", () => {
    expect(() => accepts({ type: "array", prefixItems: [{ type: "string" }], items: [{ type: "number" }] }, "[]"))
      .toThrowError(expect.objectContaining({ keyword: "items", path: "" }));
  });
});
