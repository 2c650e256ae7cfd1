// The schema compiler against the corpus: every schema compiles, random walks through its automaton never dead-end
// and every finished walk is a document that ajv accepts; every unsupported schema is refused with its keyword and
// path; the corpus's valid documents in the generator's own layout are accepted byte for byte.
import { describe, expect, it } from "vitest";
import { constraintGrammar } from "../answer.js";
import { GrammarAutomaton } from "../automaton.js";
import { seededRandom } from "../../testing/seeded-random.js";
import { randomWalk } from "../testing/byte-walk.js";
import { checkWalks } from "../testing/walk-check.js";
import { SCHEMA_CORPUS, UNSUPPORTED_SCHEMAS } from "../testing/schema-corpus.js";
import { newValidator, validatorFor } from "../testing/validator.js";
import { SchemaError } from "./errors.js";

const UTF8 = new TextDecoder("utf-8", { fatal: true });
const automatonOf = (schema: unknown) => new GrammarAutomaton(constraintGrammar({ format: { type: "json_schema", schema } }));

describe("every corpus schema", () => {
  for (const entry of SCHEMA_CORPUS) {
    it(`${entry.name}: 40 random walks end in valid documents, never in a dead end`, () => {
      const automaton = automatonOf(entry.schema);
      const validate = validatorFor(entry.schema).compile(entry.schema as object);
      let complete = 0;
      for (let seed = 1; seed <= 40; seed++) {
        const walk = randomWalk(automaton, seededRandom(seed * 7919 + entry.name.length));
        expect(walk.deadEnd, `dead end after ${JSON.stringify(new TextDecoder().decode(walk.bytes))}`).toBe(false);
        if (!walk.complete) continue;
        complete++;
        const text = UTF8.decode(walk.bytes);
        const document = JSON.parse(text);
        expect(validate(document), `${text}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
      expect(complete).toBeGreaterThan(0);
    });
  }
});

describe("every corpus schema in pretty layout", () => {
  for (const entry of SCHEMA_CORPUS) {
    it(`${entry.name}: 10 random walks end in valid documents, never in a dead end`, () => {
      const report = checkWalks(entry.schema, 10, "pretty", 600);
      expect(report.problems).toEqual([]);
    });
  }
});

describe("documents written in the generator's layout", () => {
  it("are accepted, and a byte changed at the end is not", () => {
    const cases: Array<[unknown, string]> = [
      [{ type: "object", properties: { a: { type: "integer" }, b: { type: "string" } }, required: ["a"] }, '{"a": 1, "b": "x"}'],
      [{ type: "array", items: { type: "number" }, maxItems: 3 }, "[1.5, -2, 0]"],
      [{ enum: ["x", 1, null, { k: [true] }] }, '{"k":[true]}'],
      [{ type: "string", format: "date" }, '"2024-02-28"'],
      [{ type: "string", pattern: "^[a-z]{2}\\d$" }, '"ab1"'],
      [{ $defs: { n: { type: "object", properties: { next: { anyOf: [{ $ref: "#/$defs/n" }, { type: "null" }] } }, required: ["next"] } }, $ref: "#/$defs/n" }, '{"next": {"next": null}}'],
    ];
    for (const [schema, text] of cases) {
      const automaton = automatonOf(schema);
      const end = automaton.stepBytes(automaton.initial, new TextEncoder().encode(text));
      expect(end?.accepting, text).toBe(true);
      const broken = automaton.stepBytes(automaton.initial, new TextEncoder().encode(`${text.slice(0, -1)}!`));
      expect(broken?.accepting ?? false, `${text} with its last byte changed`).toBe(false);
    }
  });

  it("refuses what the schema rules out: a missing required property, an extra one, a number out of range, a long string", () => {
    const refused: Array<[unknown, string]> = [
      [{ type: "object", properties: { a: { type: "integer" } }, required: ["a"] }, "{}"],
      [{ type: "object", properties: { a: { type: "integer" } }, additionalProperties: false }, '{"b": 1}'],
      [{ type: "integer", minimum: 3, maximum: 7 }, "8"],
      [{ type: "integer", multipleOf: 5 }, "12"],
      [{ type: "number", exclusiveMaximum: 1 }, "1"],
      [{ type: "string", maxLength: 3 }, '"abcd"'],
      [{ type: "string", minLength: 2 }, '"a"'],
      [{ type: "array", minItems: 2 }, "[1]"],
      [{ type: "string", format: "date" }, '"2023-02-29"'],
      [{ type: "boolean" }, "null"],
    ];
    for (const [schema, text] of refused) {
      const automaton = automatonOf(schema);
      expect(automaton.stepBytes(automaton.initial, new TextEncoder().encode(text))?.accepting ?? false, `${JSON.stringify(schema)} ${text}`).toBe(false);
    }
  });
});

describe("unsupported schemas", () => {
  for (const entry of UNSUPPORTED_SCHEMAS) {
    it(`${entry.name}: refused, naming ${entry.keyword} at ${entry.path}`, () => {
      let error: unknown;
      try {
        automatonOf(entry.schema);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(SchemaError);
      const schemaError = error as SchemaError;
      expect(schemaError.keyword).toBe(entry.keyword);
      const parent = entry.path.slice(0, entry.path.lastIndexOf("/"));
      expect([entry.path, parent]).toContain(schemaError.path);
      expect(schemaError.message).toContain(entry.keyword.split("=")[0]);
    });
  }

  it("what cannot be generated exactly is refused, never loosened, and hostile schemas are errors, not crashes", () => {
    const refused: Array<[unknown, string]> = [
      [{ type: "string", enum: ["a", "abcd"], minLength: 2 }, "minLength"],
      [{ enum: [1, 10], maximum: 5 }, "maximum"],
      [{ const: 5, type: "string" }, "const"],
      [{ type: "string", format: "iri" }, "format=iri"],
      [{ type: "string", format: "uri", pattern: "^(?:[a-z]{1,3}\\.){0,20}x{0,200}$" }, "pattern"],
      [{ type: "object", properties: { v: { $id: "https://example.com/a", type: "string" } } }, "$id"],
      [{ allOf: [{ type: "object", properties: { x: { type: "integer" } } }, { additionalProperties: { type: "string" } }] }, "allOf"],
      [{ allOf: [{ type: "array", prefixItems: [{ type: "integer" }] }, { items: { type: "string" } }] }, "allOf"],
      [{ allOf: [{ $ref: "#" }], type: "object" }, "allOf"],
      [{ $ref: "#/%E0" }, "$ref"],
      [{ $ref: "#/__proto__" }, "$ref"],
      [{ type: "object", required: ["toString"], additionalProperties: false }, "required"],
      [{ type: "string", pattern: "a[ab]{11}$", maxLength: 4096 }, "pattern"],
      [{ enum: Array.from({ length: 2000 }, (_, i) => i) }, "enum"],
      [{ $defs: { a: { type: "object", properties: { n: { $ref: "#/$defs/a" } } }, b: { type: "object", properties: { n: { $ref: "#/$defs/b" } } } }, allOf: [{ $ref: "#/$defs/a" }, { $ref: "#/$defs/b" }] }, "nesting"],
      [{ type: "string", pattern: `${"(".repeat(5000)}a${")".repeat(5000)}` }, "nesting"],
    ];
    for (const [schema, keyword] of refused) expect(() => automatonOf(schema), JSON.stringify(schema).slice(0, 120)).toThrowError(expect.objectContaining({ keyword }));
  });

  it("inherited names are unknown format names (ignored), never lookups on Object.prototype", () => {
    for (const format of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      for (const type of ["string", "number"]) {
        const automaton = automatonOf({ type, format });
        const text = type === "string" ? '"any text"' : "12.5";
        expect(automaton.stepBytes(automaton.initial, new TextEncoder().encode(text))?.accepting, `${type} ${format}`).toBe(true);
      }
    }
  });

  it("inherited names are ordinary property names", () => {
    const automaton = automatonOf({ type: "object", required: ["constructor"], additionalProperties: false, properties: { constructor: { type: "integer" } } });
    expect(automaton.stepBytes(automaton.initial, new TextEncoder().encode('{"constructor": 1}'))?.accepting).toBe(true);
    const undeclared = automatonOf({ type: "object", required: ["constructor"] });
    expect(undeclared.stepBytes(undeclared.initial, new TextEncoder().encode("{}"))?.accepting ?? false).toBe(false);
  });

  it("unsatisfiable schemas are refused up front instead of dead-ending", () => {
    const unsatisfiable: Array<[unknown, string]> = [
      [{ type: "integer", minimum: 5, maximum: 4 }, "minimum"],
      [{ type: "string", minLength: 5, maxLength: 2 }, "minLength"],
      [{ type: "string", pattern: "^a{5}$", maxLength: 3 }, "pattern"],
      [{ type: "array", minItems: 3, maxItems: 1 }, "minItems"],
      [{ enum: [1, 2], type: "string" }, "enum"],
      [false, "false"],
      [{ type: "object", properties: { a: false }, required: ["a"] }, "required"],
    ];
    for (const [schema, keyword] of unsatisfiable) expect(() => automatonOf(schema), JSON.stringify(schema)).toThrowError(expect.objectContaining({ keyword }));
  });
});

describe("lone surrogates (UTF-16 halves that UTF-8 cannot encode)", () => {
  it("a pattern that needs one is refused when compiled, escaped or literal, instead of masking every token later", () => {
    for (const pattern of ["^\\ud800$", "^\ud800$", "^[\\udc00-\\udfff]+$", "^a\\ud800b$"]) {
      expect(() => automatonOf({ type: "string", pattern }), pattern).toThrowError(expect.objectContaining({ keyword: "pattern", path: "" }));
    }
    expect(() => automatonOf({ type: "object", properties: { s: { type: "string", pattern: "^\\udfff+$" } }, required: ["s"] }))
      .toThrowError(expect.objectContaining({ keyword: "pattern", path: "/properties/s" }));
  });

  it("a pattern that also allows other strings keeps them, and nothing after the quote dead-ends", () => {
    const automaton = automatonOf({ type: "string", pattern: "^(?:\\ud800|ok)$" });
    expect(automaton.stepBytes(automaton.initial, new TextEncoder().encode('"ok"'))?.accepting).toBe(true);
    for (let seed = 1; seed <= 20; seed++) expect(randomWalk(automaton, seededRandom(seed)).deadEnd).toBe(false);
  });

  it("names and values holding one are written escaped, as JSON.stringify writes them, and read back the same", () => {
    const schema = { type: "object", properties: { "\ud800": { enum: ["\udc00x", 1] } }, required: ["\ud800"], additionalProperties: false };
    const automaton = automatonOf(schema);
    const text = JSON.stringify({ "\ud800": "\udc00x" });
    expect(text).toBe('{"\\ud800":"\\udc00x"}');
    expect(automaton.stepBytes(automaton.initial, new TextEncoder().encode(text))?.accepting).toBe(true);
    expect(JSON.parse(text)).toEqual({ "\ud800": "\udc00x" });
    // ajv cannot compile a property named by a lone surrogate (its error paths are URIs); the value alone it can.
    const value = automatonOf({ const: "a\udc00" });
    expect(value.stepBytes(value.initial, new TextEncoder().encode('"a\\udc00"'))?.accepting).toBe(true);
    expect(newValidator().compile({ const: "a\udc00" })(JSON.parse('"a\\udc00"'))).toBe(true);
  });

  it("tool names and propertyNames holding one: names escaped, keys only from what UTF-8 can write", () => {
    const automaton = new GrammarAutomaton(constraintGrammar({ format: { type: "tool_calls", tools: [{ name: "f\ud800", parameters: { type: "object" } }], choice: "required", tags: { open: "<a>", close: "</a>" } } }));
    expect(automaton.stepBytes(automaton.initial, new TextEncoder().encode(`<a>${JSON.stringify({ name: "f\ud800", arguments: {} })}</a>`))?.accepting).toBe(true);
    const names = { type: "object", propertyNames: { pattern: "^\\ud800$" }, additionalProperties: true };
    for (let seed = 1; seed <= 10; seed++) expect(randomWalk(automatonOf(names), seededRandom(seed)).deadEnd).toBe(false);
    expect(automatonOf(names).stepBytes(automatonOf(names).initial, new TextEncoder().encode("{}"))?.accepting).toBe(true);
    expect(() => automatonOf({ ...names, required: ["\ud800"] })).toThrowError(expect.objectContaining({ keyword: "propertyNames" }));
  });

  it("tags holding one are refused, naming the parameter", () => {
    const tools = [{ name: "f", parameters: { type: "object" } }];
    expect(() => constraintGrammar({ format: { type: "tool_calls", tools, choice: "auto", tags: { open: "<\ud800>", close: "</x>" } } }))
      .toThrowError(expect.objectContaining({ keyword: "tags" }));
    expect(() => constraintGrammar({ format: { type: "json_object" }, thinking: { close: "</think\udc00>" } }))
      .toThrowError(expect.objectContaining({ keyword: "thinking" }));
  });
});
