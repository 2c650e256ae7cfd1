// Formats: the enforced string formats produce only what ajv-formats (full mode) accepts, the newer ones by its own
// regexes; a format and a pattern on one string are both enforced (zod writes both); number formats are bounds;
// unknown format names are ignored and known ones that are not enforced are refused.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { constraintGrammar } from "../answer.js";
import { GrammarAutomaton } from "../automaton.js";
import { checkWalks } from "../testing/walk-check.js";
import { STRING_FORMATS } from "./formats.js";

const UTF8 = new TextEncoder();
const require = createRequire(import.meta.url);
const ajvFormats = require("ajv-formats/dist/formats.js") as { fullFormats: Record<string, unknown> };

function accepts(schema: unknown, text: string): boolean {
  const automaton = new GrammarAutomaton(constraintGrammar({ format: { type: "json_schema", schema } }));
  return automaton.stepBytes(automaton.initial, UTF8.encode(text))?.accepting ?? false;
}

/** zod v4's own patterns, as z.toJSONSchema() writes them beside the format (zod 4.x, packages/zod/src/v4/core/regexes.ts). */
const ZOD = {
  uuid: "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$",
  email: "^(?!\\.)(?!.*\\.\\.)([A-Za-z0-9_'+\\-\\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$",
  datetime: "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?(?:Z))$",
  ipv4: "^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])$",
};

describe("string formats", () => {
  it("the newer ones are ajv-formats' own regexes (hostname without its trailing dot and length lookahead)", () => {
    const full = ajvFormats.fullFormats as Record<string, RegExp>;
    for (const name of ["ipv4", "ipv6", "duration"]) {
      expect(STRING_FORMATS[name]!.source, name).toBe(full[name]!.source);
      expect(STRING_FORMATS[name]!.ignoreCase ?? false, name).toBe(full[name]!.flags.includes("i"));
    }
    const uri = /^const URI = \/(.*)\/i;$/m.exec(readFileSync(require.resolve("ajv-formats/dist/formats.js"), "utf8"))![1];
    expect(STRING_FORMATS.uri!.source).toBe(uri);
    expect(STRING_FORMATS.uri!.ignoreCase).toBe(true);
    expect(STRING_FORMATS.hostname!.source).toBe(full.hostname!.source.replace("(?=.{1,253}\\.?$)", "").replace("\\.?$", "$"));
    expect(STRING_FORMATS.hostname!.maxLength).toBe(253);
  });

  for (const format of Object.keys(STRING_FORMATS)) {
    it(`${format}: walks never dead-end and every document passes ajv-formats`, () => {
      const report = checkWalks({ type: "string", format }, 60);
      expect(report.problems).toEqual([]);
      expect(report.documents.length).toBeGreaterThan(10);
    });
  }

  it("accept what they should and refuse what ajv-formats refuses", () => {
    const accepted: Array<[string, string]> = [["uri", "https://example.com/a?b=c#d"], ["uri", "URN:ISBN:0451450523"], ["uri", "http://[2001:db8::1]:8080/"],
      ["hostname", "api.Example.com"], ["ipv4", "192.168.0.1"], ["ipv6", "2001:DB8::1"], ["ipv6", "::ffff:192.0.2.1"], ["duration", "P1Y2M3DT4H5M6S"], ["duration", "P3W"], ["duration", "PT0S"]];
    const refused: Array<[string, string]> = [["uri", "example.com"], ["uri", "http://exa mple.com"], ["hostname", "-a.com"], ["hostname", "a..com"], ["hostname", "example.com."], ["hostname", `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}`],
      ["ipv4", "256.1.1.1"], ["ipv4", "01.1.1.1"], ["ipv6", "2001:db8:::1"], ["duration", "P"], ["duration", "PT"], ["duration", "P1W2D"], ["duration", "P1DT"]];
    for (const [format, value] of accepted) expect(accepts({ type: "string", format }, JSON.stringify(value)), `${format} ${value}`).toBe(true);
    for (const [format, value] of refused) expect(accepts({ type: "string", format }, JSON.stringify(value)), `${format} ${value}`).toBe(false);
  });
});

describe("formats alone satisfy zod's own checks (a client may send the format without zod's pattern)", () => {
  it("uuid carries a version and a variant digit, date-time is in UTC", () => {
    for (const [format, pattern] of [["uuid", ZOD.uuid], ["date-time", ZOD.datetime]] as const) {
      const report = checkWalks({ type: "string", format }, 60);
      expect(report.problems).toEqual([]);
      expect(report.documents.length).toBeGreaterThan(20);
      for (const text of report.documents) expect(text, format).toMatch(new RegExp(pattern));
    }
    expect(accepts({ type: "string", format: "date-time" }, '"2024-01-02T03:04:05+01:00"')).toBe(false);
    expect(accepts({ type: "string", format: "time" }, '"03:04:05+01:00"')).toBe(true);
  });
});

describe("a format and a pattern on one string (zod writes both)", () => {
  it("enforces both: the intersection of their automata", () => {
    const uuid = { type: "string", format: "uuid", pattern: ZOD.uuid };
    expect(accepts(uuid, '"123e4567-e89b-42d3-a456-426614174000"')).toBe(true);
    expect(accepts(uuid, '"123e4567-e89b-02d3-a456-426614174000"'), "version 0: the format's, not the pattern's").toBe(false);
    expect(accepts(uuid, '"123E4567-E89B-42D3-A456-426614174000"'), "upper case: the pattern's, not the format's").toBe(false);
    const datetime = { type: "string", format: "date-time", pattern: ZOD.datetime };
    expect(accepts(datetime, '"2024-02-28T12:30:00Z"')).toBe(true);
    expect(accepts(datetime, '"2024-02-28T12:30:00+01:00"'), "an offset: the format's, not the pattern's").toBe(false);
    expect(accepts(datetime, '"2024-02-28T12:30Z"'), "no seconds: the pattern's, not the format's").toBe(false);
  });

  for (const [name, schema] of [
    ["z.uuid()", { type: "string", format: "uuid", pattern: ZOD.uuid }],
    ["z.email()", { type: "string", format: "email", pattern: ZOD.email }],
    ["z.iso.datetime()", { type: "string", format: "date-time", pattern: ZOD.datetime }],
    ["z.ipv4()", { type: "string", format: "ipv4", pattern: ZOD.ipv4 }],
    ["z.url().regex(/^https:/)", { type: "string", format: "uri", pattern: "^https:" }],
  ] as const) {
    it(`${name}: walks never dead-end and every document passes both (ajv checks pattern and format)`, () => {
      const report = checkWalks(schema, 50);
      expect(report.problems).toEqual([]);
      expect(report.documents.length).toBeGreaterThan(10);
    });
  }

  it("is refused when nothing satisfies both, or when their product passes the DFA state limit", () => {
    expect(() => accepts({ type: "string", format: "ipv4", pattern: "^[a-z]+$" }, '""')).toThrowError(expect.objectContaining({ keyword: "pattern", path: "" }));
    expect(() => accepts({ type: "string", format: "email", pattern: "^.{0,300}$" }, '""')).toThrowError(expect.objectContaining({ keyword: "pattern", message: expect.stringContaining("5000 DFA states") }));
  });
});

describe("number formats are bounds; other format names", () => {
  it("int32 and int64 make numbers whole, int32 within 32 bits; float and double allow any number", () => {
    const int32 = { type: "number", format: "int32" };
    for (const text of ["2147483647", "-2147483648", "0"]) expect(accepts(int32, text), text).toBe(true);
    for (const text of ["2147483648", "-2147483649", "1.5"]) expect(accepts(int32, text), text).toBe(false);
    expect(accepts({ type: "integer", format: "int32", maximum: 10 }, "11")).toBe(false);
    expect(accepts({ type: "number", format: "int64" }, "1.5")).toBe(false);
    expect(accepts({ type: "number", format: "int64" }, "-900719925474099")).toBe(true);
    for (const format of ["float", "double"]) expect(accepts({ type: "number", format }, "-1.25"), format).toBe(true);
    for (const format of ["int32", "int64", "float", "double"]) expect(checkWalks({ type: "number", format }).problems, format).toEqual([]);
  });

  it("a format applies to its own type only, as validators read it", () => {
    const either = { type: ["number", "string"], format: "email" };
    expect(accepts(either, "5")).toBe(true);
    expect(accepts(either, '"a@b.co"')).toBe(true);
    expect(accepts(either, '"not an email"')).toBe(false);
    expect(accepts({ type: "string", format: "int32" }, '"any text"')).toBe(true);
  });

  it("unknown names are annotations (zod's cuid, nanoid, base64...): the string is free, a pattern beside it is not", () => {
    expect(accepts({ type: "string", format: "cuid" }, '"anything at all"')).toBe(true);
    const cuid = { type: "string", format: "cuid", pattern: "^[cC][0-9a-z]{6,}$" };
    expect(accepts(cuid, '"cjld2cjxh0000qzrmn831i7rn"')).toBe(true);
    expect(accepts(cuid, '"xjld2cjxh0000qzrmn831i7rn"')).toBe(false);
    expect(checkWalks(cuid).problems).toEqual([]);
  });

  it("names validators check but that are not enforced are refused, naming the format", () => {
    for (const format of ["iri", "uri-reference", "uri-template", "json-pointer", "regex", "idn-email", "byte"]) {
      expect(() => accepts({ type: "string", format }, '""'), format).toThrowError(expect.objectContaining({ keyword: `format=${format}` }));
    }
  });
});
