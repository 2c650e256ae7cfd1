import { describe, expect, it } from "vitest";
import {
  ANNOTATION_FORMATS,
  ANNOTATION_KEYWORDS,
  DEFINITION_CONTAINERS,
  NUMBER_FORMATS,
  SCHEMA_CORPUS,
  SUPPORTED_FORMATS,
  SUPPORTED_KEYWORDS,
  UNSUPPORTED_SCHEMAS,
} from "./schema-corpus.js";
import { newValidator as newAjv, validatorFor } from "./validator.js";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Keywords whose value is a map of name -> subschema. */
const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions"]);
/** Keywords whose value is a single subschema (items may also be an array of them: a draft-07 tuple). */
const SCHEMA_SINGLES = new Set(["items", "additionalProperties", "propertyNames", "additionalItems"]);
/** Keywords whose value is an array of subschemas. */
const SCHEMA_ARRAYS = new Set(["prefixItems", "anyOf", "oneOf", "allOf"]);

interface KeywordSite {
  /** Pointer of the schema object holding the keyword. */
  at: string;
  keyword: string;
  value: unknown;
  /** The schema object holding the keyword. */
  holder: Json;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * Every keyword of every schema object reachable through the supported subschema
 * locations. Values of enum/const/default/examples are data, not schemas, and the
 * contents of unsupported keywords are not descended into.
 */
function keywordSites(schema: unknown, at = ""): KeywordSite[] {
  if (!isObject(schema)) return [];
  const sites: KeywordSite[] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    sites.push({ at, keyword, value, holder: schema });
    const here = `${at}/${escapePointer(keyword)}`;
    if (SCHEMA_MAPS.has(keyword) && isObject(value)) {
      for (const [name, sub] of Object.entries(value)) sites.push(...keywordSites(sub, `${here}/${escapePointer(name)}`));
    } else if (SCHEMA_SINGLES.has(keyword) && Array.isArray(value)) {
      value.forEach((sub, i) => sites.push(...keywordSites(sub, `${here}/${i}`)));
    } else if (SCHEMA_SINGLES.has(keyword)) {
      sites.push(...keywordSites(value, here));
    } else if (SCHEMA_ARRAYS.has(keyword) && Array.isArray(value)) {
      value.forEach((sub, i) => sites.push(...keywordSites(sub, `${here}/${i}`)));
    }
  }
  return sites;
}

/** Keyword names found in a schema, plus "format:<value>" for each format used. */
function keywordsIn(schema: unknown): Set<string> {
  const found = new Set<string>();
  for (const site of keywordSites(schema)) {
    found.add(site.keyword);
    if (site.keyword === "format" && typeof site.value === "string") found.add(`format:${site.value}`);
  }
  return found;
}

const KNOWN_KEYWORDS = new Set<string>([...SUPPORTED_KEYWORDS, ...ANNOTATION_KEYWORDS, ...DEFINITION_CONTAINERS]);

/** Keyword sites outside the supported subset (unknown keyword names). */
function unknownSites(schema: unknown): KeywordSite[] {
  return keywordSites(schema).filter((site) => !KNOWN_KEYWORDS.has(site.keyword));
}

function resolvePointer(root: unknown, pointer: string): { found: boolean; value: unknown } {
  if (pointer === "") return { found: true, value: root };
  let current: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(current)) {
      const index = Number(segment);
      if (!Number.isInteger(index) || index < 0 || index >= current.length) return { found: false, value: undefined };
      current = current[index];
    } else if (isObject(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return { found: false, value: undefined };
    }
  }
  return { found: true, value: current };
}

/** Regex features outside the generator's ECMAScript subset (lookaheads are in it). */
const UNSUPPORTED_REGEX = /\(\?<[=!]|\\[1-9]|\\k<|\\b|\\B/;

describe("SCHEMA_CORPUS", () => {
  it("has at least 64 cases with unique kebab-case names", () => {
    expect(SCHEMA_CORPUS.length).toBeGreaterThanOrEqual(64);
    const names = SCHEMA_CORPUS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it("covers every supported keyword", () => {
    const declared = new Set(SCHEMA_CORPUS.flatMap((c) => c.keywords));
    const missing = SUPPORTED_KEYWORDS.filter((k) => !declared.has(k));
    expect(missing).toEqual([]);
  });

  it("declares only supported keywords", () => {
    for (const c of SCHEMA_CORPUS) {
      const unknown = c.keywords.filter((k) => !SUPPORTED_KEYWORDS.includes(k));
      expect(unknown, c.name).toEqual([]);
    }
  });

  it.each(SCHEMA_CORPUS.map((c) => [c.name, c] as const))("%s: declared keywords occur in its schema", (_name, c) => {
    const found = keywordsIn(c.schema);
    const absent = c.keywords.filter((k) => !found.has(k));
    expect(absent).toEqual([]);
  });

  it.each(SCHEMA_CORPUS.map((c) => [c.name, c] as const))("%s: stays inside the supported subset", (_name, c) => {
    expect(unknownSites(c.schema).map((s) => `${s.at}/${s.keyword}`)).toEqual([]);
    for (const site of keywordSites(c.schema)) {
      const where = `${c.name} ${site.at}/${site.keyword}`;
      switch (site.keyword) {
        case "format":
          expect([...SUPPORTED_FORMATS, ...NUMBER_FORMATS, ...ANNOTATION_FORMATS], where).toContain(site.value);
          break;
        case "multipleOf":
          expect(site.holder.type, where).toBe("integer");
          expect(Number.isInteger(site.value), where).toBe(true);
          break;
        case "$ref":
          // Local JSON pointers: "#", definitions, and zod-to-json-schema's paths ("#/properties/root").
          expect(site.value, where).toMatch(/^#(\/[^/]+)*$/);
          expect(resolvePointer(c.schema, decodeURIComponent((site.value as string).slice(1))).found, where).toBe(true);
          break;
        case "pattern":
          expect(typeof site.value, where).toBe("string");
          expect(site.value, where).not.toMatch(UNSUPPORTED_REGEX);
          break;
        case "minItems":
        case "maxItems":
          expect(site.value, where).toBeLessThan(10);
          break;
        case "minLength":
          expect(site.value, where).toBeLessThan(64);
          break;
        case "maxLength":
          // Short strings keep walks and generations short; pydantic's HttpUrl writes 2083 beside its format.
          expect(site.value, where).toBeLessThan(site.holder.format === undefined ? 64 : 2084);
          break;
        case "required":
          // Required names must be declared properties, or extra properties the schema allows (z.record of an enum).
          for (const name of site.value as string[]) {
            const declared = isObject(site.holder.properties) && Object.hasOwn(site.holder.properties, name);
            expect(declared || (site.holder.additionalProperties !== undefined && site.holder.additionalProperties !== false), `${where} ${name}`).toBe(true);
          }
          break;
      }
    }
  });

  it.each(SCHEMA_CORPUS.map((c) => [c.name, c] as const))("%s: compiles with ajv and its valid documents pass", (_name, c) => {
    const ajv = validatorFor(c.schema);
    expect(ajv.validateSchema(c.schema), JSON.stringify(ajv.errors)).toBe(true);
    const validate = ajv.compile(c.schema);
    expect(c.valid.length).toBeGreaterThan(0);
    for (const doc of c.valid) {
      const ok = validate(doc);
      expect(ok, `${JSON.stringify(doc)}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});

describe("UNSUPPORTED_SCHEMAS", () => {
  it("has at least 15 cases with unique names", () => {
    expect(UNSUPPORTED_SCHEMAS.length).toBeGreaterThanOrEqual(15);
    const names = UNSUPPORTED_SCHEMAS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it("covers every rejected keyword", () => {
    const keywords = new Set(UNSUPPORTED_SCHEMAS.map((c) => c.keyword));
    for (const k of [
      "not",
      "if",
      "patternProperties",
      "propertyNames",
      "dependentRequired",
      "dependentSchemas",
      "minProperties",
      "maxProperties",
      "uniqueItems",
      "contains",
      "unevaluatedProperties",
      "unevaluatedItems",
      "multipleOf",
      "format=iri",
      "$ref",
      "pattern",
      "oneOf",
      "allOf",
    ]) {
      expect(keywords, k).toContain(k);
    }
  });

  it.each(UNSUPPORTED_SCHEMAS.map((c) => [c.name, c] as const))("%s: path points at the keyword", (_name, c) => {
    const [keyword, value] = c.keyword.split("=", 2) as [string, string | undefined];
    expect(c.path.split("/").at(-1)).toBe(keyword);
    const resolved = resolvePointer(c.schema, c.path);
    expect(resolved.found).toBe(true);
    if (value !== undefined) expect(resolved.value).toBe(value);
  });

  it.each(UNSUPPORTED_SCHEMAS.map((c) => [c.name, c] as const))("%s: holds exactly one unsupported construct", (_name, c) => {
    const keyword = c.keyword.split("=", 2)[0]!;
    const parent = c.path.slice(0, c.path.lastIndexOf("/"));
    const unknown = unknownSites(c.schema);
    if (SUPPORTED_KEYWORDS.includes(keyword)) {
      // A supported keyword used in a way the generator cannot honour: nothing else is unknown.
      expect(unknown.map((s) => `${s.at}/${s.keyword}`)).toEqual([]);
      expect(keywordSites(c.schema).some((s) => s.at === parent && s.keyword === keyword)).toBe(true);
    } else {
      const allowed = keyword === "if" ? ["if", "then", "else"] : [keyword];
      expect(unknown.map((s) => `${s.at}/${s.keyword}`).sort()).toEqual(
        allowed.filter((k) => Object.hasOwn(resolvePointer(c.schema, parent).value as Json, k)).map((k) => `${parent}/${k}`).sort(),
      );
    }
  });

  it.each(UNSUPPORTED_SCHEMAS.map((c) => [c.name, c] as const))("%s: is a valid draft 2020-12 schema", (_name, c) => {
    const ajv = newAjv();
    expect(ajv.validateSchema(c.schema), JSON.stringify(ajv.errors)).toBe(true);
    // Refs to other documents cannot be compiled without loading them.
    if (c.keyword !== "$ref") expect(() => ajv.compile(c.schema)).not.toThrow();
  });
});
