// Schema corpus for testing the grammar-constrained JSON generator.
//
// SCHEMA_CORPUS: schemas inside the supported subset. Tests compile each one, generate
// documents from random-weight models at temperature 1 with several seeds, and check every
// complete output with ajv (draft 2020-12, or draft-07 where $schema says so, + ajv-formats).
// Cases follow the keyword groups of the JSON-Schema-Test-Suite (draft2020-12), realistic
// tool/API argument schemas, and what zod, the AI SDK, LangChain and pydantic write (generated
// with them, the call in a comment).
// `valid` holds a few conforming documents (checked by schema-corpus.test.ts), written with
// properties in declared order, as the generator writes them.
//
// UNSUPPORTED_SCHEMAS: each holds exactly one construct the compiler must reject, with the
// keyword its error has to name and the path to the offending keyword.

export interface CorpusSchema {
  /** Unique, short, kebab-case, e.g. "object-required-optional". */
  name: string;
  /** The keywords this case exercises (from SUPPORTED_KEYWORDS), for the coverage check. */
  keywords: string[];
  schema: Record<string, unknown> | boolean;
  /** A few documents that conform, to show the schema is satisfiable and what output looks like. */
  valid: unknown[];
}

export interface UnsupportedSchema {
  name: string;
  schema: Record<string, unknown>;
  /** The keyword (or keyword=value, e.g. "format=iri") the compiler must name in its error. */
  keyword: string;
  /** JSON pointer-ish path of the offending keyword, e.g. "/properties/tags/uniqueItems". */
  path: string;
}

/** Formats the generator implements; each appears in SUPPORTED_KEYWORDS as "format:<name>". */
export const SUPPORTED_FORMATS: readonly string[] = ["date-time", "date", "time", "uuid", "email", "uri", "hostname", "ipv4", "ipv6", "duration"];

/** Number formats, enforced as bounds (int32, int64) or no constraint (float, double). */
export const NUMBER_FORMATS: readonly string[] = ["int32", "int64", "float", "double"];

/** Format names no standard defines (zod writes these): annotations, ignored. */
export const ANNOTATION_FORMATS: readonly string[] = ["cuid", "nanoid", "base64"];

/** Every supported keyword, so tests can check SCHEMA_CORPUS covers each at least once. */
export const SUPPORTED_KEYWORDS: readonly string[] = [
  "type",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "items",
  "prefixItems",
  "additionalItems",
  "minItems",
  "maxItems",
  "enum",
  "const",
  "anyOf",
  "oneOf",
  "allOf",
  "$ref",
  "$defs",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  ...SUPPORTED_FORMATS.map((f) => `format:${f}`),
];

/** Keywords accepted and ignored by the generator. */
export const ANNOTATION_KEYWORDS: readonly string[] = [
  "title",
  "description",
  "default",
  "examples",
  "$schema",
  "$id",
  "$comment",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentEncoding",
  "discriminator",
];

/**
 * Keywords that hold definitions reachable by $ref but are not themselves in
 * SUPPORTED_KEYWORDS ("definitions" is the pre-2019 spelling of "$defs", used via
 * "#/definitions/Name").
 */
export const DEFINITION_CONTAINERS: readonly string[] = ["$defs", "definitions"];

export const SCHEMA_CORPUS: readonly CorpusSchema[] = [
  // ---------------------------------------------------------------------------
  // type: each primitive type alone, then unions (type.json in the test suite).
  // ---------------------------------------------------------------------------
  {
    name: "type-string",
    keywords: ["type"],
    schema: { type: "string" },
    valid: ["", "hello", "ünïcödé ✓"],
  },
  {
    name: "type-number",
    keywords: ["type"],
    schema: { type: "number" },
    valid: [0, -1.5, 3.14159, 1e21, 42],
  },
  {
    name: "type-integer",
    keywords: ["type"],
    schema: { type: "integer" },
    valid: [0, -7, 123456789],
  },
  {
    name: "type-boolean",
    keywords: ["type"],
    schema: { type: "boolean" },
    valid: [true, false],
  },
  {
    name: "type-null",
    keywords: ["type"],
    schema: { type: "null" },
    valid: [null],
  },
  {
    name: "type-object-any",
    keywords: ["type"],
    schema: { type: "object" },
    valid: [{}, { a: 1, b: [true, null] }],
  },
  {
    name: "type-array-bounded",
    keywords: ["type", "maxItems"],
    schema: { type: "array", maxItems: 3 },
    valid: [[], [1, "two", null], [{ x: [] }]],
  },
  {
    name: "type-union-string-null",
    keywords: ["type", "maxLength"],
    schema: { type: ["string", "null"], maxLength: 8 },
    valid: [null, "", "nullable"],
  },
  {
    name: "type-union-scalars",
    keywords: ["type"],
    schema: { type: ["integer", "boolean", "null"] },
    valid: [3, false, null],
  },
  {
    // Keywords of each type only apply to values of that type.
    name: "type-union-number-string-bounds",
    keywords: ["type", "minimum", "maximum", "maxLength"],
    schema: { type: ["number", "string"], minimum: 0, maximum: 10, maxLength: 5 },
    valid: [0, 9.5, "", "abcde"],
  },
  {
    name: "type-union-object-array",
    keywords: ["type", "properties", "required", "additionalProperties", "items", "maxItems"],
    schema: {
      type: ["object", "array"],
      properties: { id: { type: "integer", minimum: 1 } },
      required: ["id"],
      additionalProperties: false,
      items: { type: "boolean" },
      maxItems: 4,
    },
    valid: [{ id: 1 }, [], [true, false, true]],
  },

  // ---------------------------------------------------------------------------
  // Objects: properties, required, additionalProperties (properties.json,
  // required.json, additionalProperties.json).
  // ---------------------------------------------------------------------------
  {
    name: "object-optional-properties",
    keywords: ["type", "properties", "additionalProperties", "maxLength"],
    schema: {
      type: "object",
      properties: {
        nickname: { type: "string", maxLength: 12 },
        age: { type: "integer" },
        active: { type: "boolean" },
      },
      additionalProperties: false,
    },
    valid: [{}, { age: 30 }, { nickname: "kit", age: 4, active: true }],
  },
  {
    name: "object-required-optional",
    keywords: ["type", "properties", "required", "additionalProperties", "maxLength"],
    schema: {
      type: "object",
      properties: {
        id: { type: "integer" },
        label: { type: "string", maxLength: 20 },
        note: { type: "string", maxLength: 20 },
        score: { type: "number" },
      },
      required: ["id", "score"],
      additionalProperties: false,
    },
    valid: [{ id: 1, score: 0.5 }, { id: 2, label: "b", note: "n", score: -3 }],
  },
  {
    name: "object-all-required",
    keywords: ["type", "properties", "required", "additionalProperties", "enum", "maxLength"],
    schema: {
      type: "object",
      properties: {
        a: { type: "boolean" },
        b: { type: "null" },
        c: { type: "integer" },
        d: { type: "number" },
        e: { type: "string", maxLength: 4 },
        f: { enum: ["x", "y"] },
      },
      required: ["a", "b", "c", "d", "e", "f"],
      additionalProperties: false,
    },
    valid: [{ a: true, b: null, c: 1, d: 1.5, e: "ok", f: "y" }],
  },
  {
    name: "object-additional-false-empty",
    keywords: ["type", "additionalProperties"],
    schema: { type: "object", additionalProperties: false },
    valid: [{}],
  },
  {
    name: "object-additional-true",
    keywords: ["type", "properties", "required", "additionalProperties"],
    schema: {
      type: "object",
      properties: { kind: { const: "open" } },
      required: ["kind"],
      additionalProperties: true,
    },
    valid: [{ kind: "open" }, { kind: "open", extra: [1, 2], more: { deep: null } }],
  },
  {
    // A string-keyed map of bounded integers (e.g. word counts).
    name: "object-additional-schema-map",
    keywords: ["type", "additionalProperties", "minimum", "maximum"],
    schema: {
      type: "object",
      additionalProperties: { type: "integer", minimum: 0, maximum: 1000 },
    },
    valid: [{}, { apples: 3, pears: 0 }],
  },
  {
    name: "object-properties-plus-additional-schema",
    keywords: ["type", "properties", "required", "additionalProperties", "maxLength", "format", "format:date"],
    schema: {
      type: "object",
      properties: {
        name: { type: "string", maxLength: 16 },
        since: { type: "string", format: "date" },
      },
      required: ["name"],
      additionalProperties: { type: "string", maxLength: 8 },
    },
    valid: [{ name: "x" }, { name: "cfg", since: "2023-01-31", mode: "fast" }],
  },
  {
    name: "object-false-property",
    keywords: ["type", "properties", "required"],
    schema: {
      type: "object",
      properties: { allowed: { type: "integer" }, forbidden: false },
      required: ["allowed"],
    },
    valid: [{ allowed: 1 }],
  },
  {
    name: "object-nested-three-levels",
    keywords: ["type", "properties", "required", "additionalProperties", "enum", "maxLength"],
    schema: {
      type: "object",
      properties: {
        outer: {
          type: "object",
          properties: {
            middle: {
              type: "object",
              properties: {
                inner: { type: "string", maxLength: 10 },
                level: { enum: [1, 2, 3] },
              },
              required: ["inner", "level"],
              additionalProperties: false,
            },
          },
          required: ["middle"],
          additionalProperties: false,
        },
      },
      required: ["outer"],
      additionalProperties: false,
    },
    valid: [{ outer: { middle: { inner: "core", level: 3 } } }],
  },
  {
    // Property names that need escaping or look like keywords.
    name: "object-unusual-property-names",
    keywords: ["type", "properties", "required", "additionalProperties"],
    schema: {
      type: "object",
      properties: {
        type: { type: "string", maxLength: 6 },
        "with space": { type: "integer" },
        'quote"d': { type: "boolean" },
        "": { type: "null" },
        "ünï": { type: "integer" },
      },
      required: ["type", "with space", 'quote"d', "", "ünï"],
      additionalProperties: false,
    },
    valid: [{ type: "t", "with space": 1, 'quote"d': true, "": null, "ünï": 2 }],
  },

  // ---------------------------------------------------------------------------
  // Arrays: items, prefixItems, minItems, maxItems (items.json, prefixItems.json,
  // minItems.json, maxItems.json).
  // ---------------------------------------------------------------------------
  {
    name: "array-items-integers",
    keywords: ["type", "items", "maxItems", "minimum", "maximum"],
    schema: { type: "array", items: { type: "integer", minimum: -5, maximum: 5 }, maxItems: 6 },
    valid: [[], [-5, 0, 5], [1, 1, 1, 1, 1, 1]],
  },
  {
    name: "array-min-max-items",
    keywords: ["type", "items", "minItems", "maxItems"],
    schema: { type: "array", items: { type: "boolean" }, minItems: 2, maxItems: 4 },
    valid: [[true, false], [false, false, false, true]],
  },
  {
    name: "array-exact-length",
    keywords: ["type", "items", "minItems", "maxItems"],
    schema: { type: "array", items: { type: "number" }, minItems: 3, maxItems: 3 },
    valid: [[0, 1.5, -2]],
  },
  {
    name: "array-empty-only",
    keywords: ["type", "maxItems"],
    schema: { type: "array", maxItems: 0 },
    valid: [[]],
  },
  {
    // minItems without maxItems: unbounded length, but at least one element.
    name: "array-min-items-only",
    keywords: ["type", "items", "minItems", "maxLength"],
    schema: { type: "array", items: { type: "string", maxLength: 3 }, minItems: 1 },
    valid: [["a"], ["ab", "", "xyz"]],
  },
  {
    name: "array-nested-matrix",
    keywords: ["type", "items", "minItems", "maxItems"],
    schema: {
      type: "array",
      items: { type: "array", items: { type: "number" }, minItems: 2, maxItems: 2 },
      minItems: 1,
      maxItems: 3,
    },
    valid: [[[1, 2]], [[0, 0], [1.5, -1], [3, 4]]],
  },
  {
    name: "array-of-enums",
    keywords: ["type", "items", "enum", "minItems", "maxItems"],
    schema: {
      type: "array",
      items: { enum: ["read", "write", "admin"] },
      minItems: 1,
      maxItems: 3,
    },
    valid: [["read"], ["read", "write", "admin"]],
  },
  {
    name: "array-of-objects",
    keywords: ["type", "items", "properties", "required", "additionalProperties", "maxItems", "maxLength", "minimum"],
    schema: {
      type: "array",
      items: {
        type: "object",
        properties: {
          sku: { type: "string", maxLength: 8 },
          qty: { type: "integer", minimum: 1 },
        },
        required: ["sku", "qty"],
        additionalProperties: false,
      },
      maxItems: 4,
    },
    valid: [[], [{ sku: "A1", qty: 2 }, { sku: "B2", qty: 1 }]],
  },
  {
    // A closed tuple: exactly these positions, nothing after.
    name: "tuple-prefix-items-closed",
    keywords: ["type", "prefixItems", "items", "minItems", "maxLength"],
    schema: {
      type: "array",
      prefixItems: [{ type: "string", maxLength: 6 }, { type: "integer" }, { type: "boolean" }],
      items: false,
      minItems: 3,
    },
    valid: [["abc", 1, true], ["", -4, false]],
  },
  {
    // Without minItems a closed tuple may stop early.
    name: "tuple-prefix-items-short-allowed",
    keywords: ["type", "prefixItems", "items", "minimum", "maximum"],
    schema: {
      type: "array",
      prefixItems: [
        { type: "number", minimum: -90, maximum: 90 },
        { type: "number", minimum: -180, maximum: 180 },
      ],
      items: false,
    },
    valid: [[], [51.5], [51.5, -0.12]],
  },
  {
    name: "tuple-prefix-items-then-items",
    keywords: ["type", "prefixItems", "items", "const", "maxItems", "minItems"],
    schema: {
      type: "array",
      prefixItems: [{ const: "header" }, { type: "integer" }],
      items: { type: "null" },
      minItems: 2,
      maxItems: 5,
    },
    valid: [["header", 3], ["header", 0, null, null]],
  },
  {
    // prefixItems with the rest unconstrained (items absent).
    name: "tuple-prefix-items-open-rest",
    keywords: ["type", "prefixItems", "maxItems", "enum"],
    schema: {
      type: "array",
      prefixItems: [{ enum: ["GET", "POST"] }, { type: "string", maxLength: 10 }],
      maxItems: 3,
    },
    valid: [["GET", "/x"], ["POST", "/y", { any: "thing" }]],
  },

  // ---------------------------------------------------------------------------
  // enum and const (enum.json, const.json): any JSON values, mixed types, escapes.
  // ---------------------------------------------------------------------------
  {
    name: "enum-strings",
    keywords: ["enum"],
    schema: { enum: ["small", "medium", "large", "x-large"] },
    valid: ["small", "x-large"],
  },
  {
    name: "enum-integers-typed",
    keywords: ["type", "enum"],
    schema: { type: "integer", enum: [1, 2, 3, 5, 8, 13] },
    valid: [1, 13],
  },
  {
    name: "enum-mixed-types",
    keywords: ["enum"],
    schema: { enum: ["a", 1, 2.5, -3, true, false, null, { x: 1 }, [1, "two"], [], {}] },
    valid: ["a", 2.5, null, { x: 1 }, [1, "two"], {}],
  },
  {
    name: "enum-prefix-sharing",
    keywords: ["enum"],
    schema: { enum: ["", "a", "ab", "abc", 1, 10, 100] },
    valid: ["", "abc", 10],
  },
  {
    // Values whose JSON text needs escapes: the generator writes them, the model does not invent them.
    name: "enum-escaped-strings",
    keywords: ["enum"],
    schema: { enum: ['say "hi"', "back\\slash", "tab\there", "line\nbreak", "snow ☃", "emoji 😀"] },
    valid: ['say "hi"', "back\\slash", "line\nbreak", "emoji 😀"],
  },
  {
    name: "enum-nullable",
    keywords: ["type", "enum"],
    schema: { type: ["string", "null"], enum: ["on", "off", null] },
    valid: ["on", null],
  },
  {
    name: "const-string",
    keywords: ["const"],
    schema: { const: "fixed-value" },
    valid: ["fixed-value"],
  },
  {
    name: "const-number",
    keywords: ["const"],
    schema: { const: -12.5 },
    valid: [-12.5],
  },
  {
    name: "const-null",
    keywords: ["const"],
    schema: { const: null },
    valid: [null],
  },
  {
    name: "const-object",
    keywords: ["const"],
    schema: { const: { kind: "fixed", n: [1, 2, { ok: true }], s: 'q"uote' } },
    valid: [{ kind: "fixed", n: [1, 2, { ok: true }], s: 'q"uote' }],
  },
  {
    name: "const-in-object-properties",
    keywords: ["type", "properties", "required", "const", "additionalProperties"],
    schema: {
      type: "object",
      properties: {
        version: { const: 2 },
        ok: { const: true },
        tags: { const: [] },
      },
      required: ["version", "ok", "tags"],
      additionalProperties: false,
    },
    valid: [{ version: 2, ok: true, tags: [] }],
  },

  // ---------------------------------------------------------------------------
  // anyOf (anyOf.json): overlapping branches allowed.
  // ---------------------------------------------------------------------------
  {
    name: "anyof-types",
    keywords: ["anyOf", "type", "maxLength"],
    schema: { anyOf: [{ type: "string", maxLength: 5 }, { type: "integer" }] },
    valid: ["hey", 42],
  },
  {
    name: "anyof-overlapping-ranges",
    keywords: ["anyOf", "type", "minimum", "maximum"],
    schema: {
      anyOf: [
        { type: "integer", minimum: 0, maximum: 10 },
        { type: "integer", minimum: 5, maximum: 20 },
      ],
    },
    valid: [0, 7, 20],
  },
  {
    name: "anyof-objects",
    keywords: ["anyOf", "type", "properties", "required", "additionalProperties", "format", "format:email", "pattern"],
    schema: {
      anyOf: [
        {
          type: "object",
          properties: { email: { type: "string", format: "email", maxLength: 40 } },
          required: ["email"],
          additionalProperties: false,
        },
        {
          type: "object",
          properties: { phone: { type: "string", pattern: "^\\+?[0-9]{7,12}$" } },
          required: ["phone"],
          additionalProperties: false,
        },
      ],
    },
    valid: [{ email: "a@example.com" }, { phone: "+441234567" }],
  },
  {
    name: "anyof-nullable-ref",
    keywords: ["anyOf", "$ref", "$defs", "type", "properties", "required", "additionalProperties"],
    schema: {
      type: "object",
      properties: {
        primary: { anyOf: [{ $ref: "#/$defs/point" }, { type: "null" }] },
        secondary: { anyOf: [{ $ref: "#/$defs/point" }, { type: "null" }] },
      },
      required: ["primary", "secondary"],
      additionalProperties: false,
      $defs: {
        point: {
          type: "object",
          properties: { x: { type: "integer" }, y: { type: "integer" } },
          required: ["x", "y"],
          additionalProperties: false,
        },
      },
    },
    valid: [{ primary: { x: 1, y: 2 }, secondary: null }],
  },
  {
    name: "anyof-enum-or-pattern",
    keywords: ["anyOf", "enum", "type", "pattern"],
    schema: {
      anyOf: [{ enum: ["auto", "none"] }, { type: "string", pattern: "^[0-9]{1,3}px$" }],
    },
    valid: ["auto", "12px"],
  },

  // ---------------------------------------------------------------------------
  // oneOf (oneOf.json): only provably disjoint branches: distinct types, or
  // discriminated unions keyed by a required const/enum property.
  // ---------------------------------------------------------------------------
  {
    name: "oneof-disjoint-types",
    keywords: ["oneOf", "type", "maxLength", "maxItems", "items"],
    schema: {
      oneOf: [
        { type: "string", maxLength: 8 },
        { type: "boolean" },
        { type: "null" },
        { type: "array", items: { type: "integer" }, maxItems: 3 },
      ],
    },
    valid: ["x", true, null, [1, 2]],
  },
  {
    name: "oneof-number-or-object",
    keywords: ["oneOf", "type", "minimum", "exclusiveMaximum", "properties", "required"],
    schema: {
      oneOf: [
        { type: "number", minimum: 0, exclusiveMaximum: 1 },
        { type: "object", properties: { value: { type: "number" } }, required: ["value"] },
      ],
    },
    valid: [0, 0.99, { value: 3 }],
  },
  {
    name: "oneof-discriminated-shapes",
    keywords: ["oneOf", "type", "properties", "required", "additionalProperties", "const", "exclusiveMinimum", "maximum"],
    schema: {
      oneOf: [
        {
          type: "object",
          properties: {
            kind: { const: "circle" },
            radius: { type: "number", exclusiveMinimum: 0, maximum: 100 },
          },
          required: ["kind", "radius"],
          additionalProperties: false,
        },
        {
          type: "object",
          properties: {
            kind: { const: "rectangle" },
            width: { type: "number", exclusiveMinimum: 0, maximum: 100 },
            height: { type: "number", exclusiveMinimum: 0, maximum: 100 },
          },
          required: ["kind", "width", "height"],
          additionalProperties: false,
        },
        {
          type: "object",
          properties: {
            kind: { const: "triangle" },
            sides: {
              type: "array",
              items: { type: "number", exclusiveMinimum: 0, maximum: 100 },
              minItems: 3,
              maxItems: 3,
            },
          },
          required: ["kind", "sides"],
          additionalProperties: false,
        },
      ],
    },
    valid: [
      { kind: "circle", radius: 2.5 },
      { kind: "rectangle", width: 3, height: 4 },
      { kind: "triangle", sides: [3, 4, 5] },
    ],
  },
  {
    // Discriminator values given as enums, disjoint across branches.
    name: "oneof-discriminated-enum",
    keywords: ["oneOf", "type", "properties", "required", "additionalProperties", "enum", "minimum", "maximum", "maxLength"],
    schema: {
      oneOf: [
        {
          type: "object",
          properties: {
            event: { enum: ["click", "dblclick"] },
            x: { type: "integer", minimum: 0, maximum: 1920 },
            y: { type: "integer", minimum: 0, maximum: 1080 },
          },
          required: ["event", "x", "y"],
          additionalProperties: false,
        },
        {
          type: "object",
          properties: {
            event: { enum: ["keydown", "keyup"] },
            key: { type: "string", minLength: 1, maxLength: 10 },
          },
          required: ["event", "key"],
          additionalProperties: false,
        },
      ],
    },
    valid: [{ event: "click", x: 10, y: 20 }, { event: "keyup", key: "Enter" }],
  },
  {
    name: "oneof-discriminated-in-array",
    keywords: ["type", "items", "maxItems", "oneOf", "$ref", "$defs", "properties", "required", "additionalProperties", "const", "maxLength"],
    schema: {
      type: "array",
      items: { oneOf: [{ $ref: "#/$defs/text" }, { $ref: "#/$defs/image" }] },
      maxItems: 4,
      $defs: {
        text: {
          type: "object",
          properties: { type: { const: "text" }, text: { type: "string", maxLength: 24 } },
          required: ["type", "text"],
          additionalProperties: false,
        },
        image: {
          type: "object",
          properties: {
            type: { const: "image" },
            url: { type: "string", pattern: "^https://[a-z]{1,10}\\.example/[a-z0-9]{1,8}\\.png$" },
          },
          required: ["type", "url"],
          additionalProperties: false,
        },
      },
    },
    valid: [[], [{ type: "text", text: "hello" }, { type: "image", url: "https://cdn.example/a1.png" }]],
  },

  // ---------------------------------------------------------------------------
  // allOf (allOf.json): object parts with compatible properties; numeric or string
  // parts that only add bounds.
  // ---------------------------------------------------------------------------
  {
    name: "allof-object-merge",
    keywords: ["allOf", "type", "properties", "required", "maxLength"],
    schema: {
      allOf: [
        { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
        { type: "object", properties: { name: { type: "string", maxLength: 12 } }, required: ["name"] },
      ],
    },
    valid: [{ id: 1, name: "merged" }],
  },
  {
    name: "allof-integer-bounds",
    keywords: ["allOf", "type", "minimum", "maximum", "multipleOf"],
    schema: {
      allOf: [{ type: "integer", minimum: 0, multipleOf: 5 }, { maximum: 100 }, { minimum: 10 }],
    },
    valid: [10, 55, 100],
  },
  {
    name: "allof-string-bounds",
    keywords: ["allOf", "type", "minLength", "maxLength"],
    schema: { allOf: [{ type: "string", minLength: 2 }, { maxLength: 6 }] },
    valid: ["ab", "abcdef"],
  },
  {
    name: "allof-number-exclusive-bounds",
    keywords: ["allOf", "type", "exclusiveMinimum", "exclusiveMaximum"],
    schema: { type: "number", allOf: [{ exclusiveMinimum: -1 }, { exclusiveMaximum: 1 }] },
    valid: [0, -0.5, 0.999],
  },
  {
    // Base type + extension, the common "inheritance" pattern.
    name: "allof-ref-extension",
    keywords: ["allOf", "$ref", "$defs", "type", "properties", "required", "format", "format:uuid", "format:date-time"],
    schema: {
      $defs: {
        entity: {
          type: "object",
          properties: {
            id: { type: "string", format: "uuid" },
            createdAt: { type: "string", format: "date-time" },
          },
          required: ["id"],
        },
      },
      allOf: [
        { $ref: "#/$defs/entity" },
        {
          type: "object",
          properties: { title: { type: "string", maxLength: 30 } },
          required: ["title"],
        },
      ],
    },
    valid: [
      { id: "123e4567-e89b-12d3-a456-426614174000", title: "first" },
      { id: "00000000-0000-0000-0000-000000000000", createdAt: "2024-02-29T23:59:59Z", title: "" },
    ],
  },

  // ---------------------------------------------------------------------------
  // $ref and $defs (ref.json, defs.json): local refs, legacy definitions, chains,
  // root recursion, recursive data structures that terminate easily.
  // ---------------------------------------------------------------------------
  {
    name: "ref-defs-shared",
    keywords: ["$ref", "$defs", "type", "properties", "required", "additionalProperties", "maxLength"],
    schema: {
      type: "object",
      properties: {
        billing: { $ref: "#/$defs/contact" },
        shipping: { $ref: "#/$defs/contact" },
      },
      required: ["billing", "shipping"],
      additionalProperties: false,
      $defs: {
        contact: {
          type: "object",
          properties: {
            name: { type: "string", maxLength: 20 },
            city: { type: "string", maxLength: 20 },
          },
          required: ["name", "city"],
          additionalProperties: false,
        },
      },
    },
    valid: [{ billing: { name: "A", city: "Oslo" }, shipping: { name: "B", city: "Rome" } }],
  },
  {
    name: "ref-definitions-legacy",
    keywords: ["$ref", "type", "properties", "required", "enum"],
    schema: {
      type: "object",
      properties: { color: { $ref: "#/definitions/color" } },
      required: ["color"],
      definitions: { color: { enum: ["red", "green", "blue"] } },
    },
    valid: [{ color: "green" }],
  },
  {
    name: "ref-chain",
    keywords: ["$ref", "$defs", "type", "minimum", "maximum", "items", "maxItems"],
    schema: {
      $ref: "#/$defs/percentages",
      $defs: {
        percentages: { type: "array", items: { $ref: "#/$defs/percent" }, maxItems: 4 },
        percent: { $ref: "#/$defs/bounded" },
        bounded: { type: "integer", minimum: 0, maximum: 100 },
      },
    },
    valid: [[], [0, 50, 100]],
  },
  {
    name: "ref-with-annotations",
    keywords: ["$ref", "$defs", "type", "properties", "required", "pattern"],
    schema: {
      type: "object",
      properties: {
        code: { $ref: "#/$defs/code", description: "ISO 3166-1 alpha-2 code", title: "Country" },
      },
      required: ["code"],
      $defs: { code: { type: "string", pattern: "^[A-Z]{2}$" } },
    },
    valid: [{ code: "NO" }],
  },
  {
    // Singly linked list through the root: next is optional or null.
    name: "ref-root-linked-list",
    keywords: ["$ref", "anyOf", "type", "properties", "required", "additionalProperties"],
    schema: {
      type: "object",
      properties: {
        value: { type: "integer" },
        next: { anyOf: [{ $ref: "#" }, { type: "null" }] },
      },
      required: ["value"],
      additionalProperties: false,
    },
    valid: [{ value: 1 }, { value: 1, next: { value: 2, next: null } }, { value: 1, next: { value: 2, next: { value: 3 } } }],
  },
  {
    name: "ref-recursive-tree",
    keywords: ["$ref", "$defs", "type", "properties", "required", "additionalProperties", "items", "maxItems", "maxLength"],
    schema: {
      $ref: "#/$defs/node",
      $defs: {
        node: {
          type: "object",
          properties: {
            label: { type: "string", maxLength: 8 },
            children: { type: "array", items: { $ref: "#/$defs/node" }, maxItems: 3 },
          },
          required: ["label"],
          additionalProperties: false,
        },
      },
    },
    valid: [{ label: "root" }, { label: "r", children: [{ label: "a" }, { label: "b", children: [] }] }],
  },
  {
    name: "ref-recursive-comment-tree",
    keywords: ["$ref", "$defs", "type", "properties", "required", "additionalProperties", "items", "maxItems", "format", "format:uuid", "format:date-time", "minLength", "maxLength"],
    schema: {
      type: "object",
      properties: {
        thread: { type: "array", items: { $ref: "#/$defs/comment" }, maxItems: 3 },
      },
      required: ["thread"],
      additionalProperties: false,
      $defs: {
        comment: {
          type: "object",
          properties: {
            id: { type: "string", format: "uuid" },
            author: { type: "string", minLength: 1, maxLength: 16 },
            posted: { type: "string", format: "date-time" },
            body: { type: "string", maxLength: 40 },
            replies: { type: "array", items: { $ref: "#/$defs/comment" }, maxItems: 2 },
          },
          required: ["id", "author", "body"],
          additionalProperties: false,
        },
      },
    },
    valid: [
      { thread: [] },
      {
        thread: [
          {
            id: "5f1b2c3d-0000-4000-8000-000000000001",
            author: "ann",
            posted: "2024-06-01T12:00:00+02:00",
            body: "first!",
            replies: [{ id: "5f1b2c3d-0000-4000-8000-000000000002", author: "bo", body: "hi" }],
          },
        ],
      },
    ],
  },
  {
    // Arbitrary JSON value via mutual recursion; arrays bounded so it closes easily.
    name: "ref-recursive-json-value",
    keywords: ["$ref", "$defs", "anyOf", "type", "items", "maxItems", "additionalProperties", "maxLength"],
    schema: {
      $ref: "#/$defs/value",
      $defs: {
        value: {
          anyOf: [
            { type: ["null", "boolean", "number"] },
            { type: "string", maxLength: 10 },
            { type: "array", items: { $ref: "#/$defs/value" }, maxItems: 3 },
            { type: "object", additionalProperties: { $ref: "#/$defs/value" } },
          ],
        },
      },
    },
    valid: [null, 1, "s", [1, [true, "x"]], { a: { b: [] } }],
  },
  {
    name: "ref-defs-at-root-used-twice-nested",
    keywords: ["$ref", "$defs", "type", "properties", "required", "items", "minItems", "maxItems", "prefixItems"],
    schema: {
      type: "object",
      properties: {
        segment: {
          type: "array",
          prefixItems: [{ $ref: "#/$defs/coord" }, { $ref: "#/$defs/coord" }],
          items: false,
          minItems: 2,
        },
      },
      required: ["segment"],
      $defs: {
        coord: { type: "array", items: { type: "integer" }, minItems: 2, maxItems: 2 },
      },
    },
    valid: [{ segment: [[0, 0], [3, 4]] }],
  },

  // ---------------------------------------------------------------------------
  // Strings: length bounds (minLength.json, maxLength.json), including unbounded.
  // ---------------------------------------------------------------------------
  {
    name: "string-min-length-unbounded",
    keywords: ["type", "minLength"],
    schema: { type: "string", minLength: 3 },
    valid: ["abc", "a longer sentence"],
  },
  {
    name: "string-max-length",
    keywords: ["type", "maxLength"],
    schema: { type: "string", maxLength: 10 },
    valid: ["", "ten chars!"],
  },
  {
    name: "string-min-max-length",
    keywords: ["type", "minLength", "maxLength"],
    schema: { type: "string", minLength: 5, maxLength: 20 },
    valid: ["hello", "twenty characters!!!"],
  },
  {
    name: "string-exact-length",
    keywords: ["type", "minLength", "maxLength"],
    schema: { type: "string", minLength: 4, maxLength: 4 },
    valid: ["abcd", "1 2 "],
  },
  {
    name: "string-empty-only",
    keywords: ["type", "maxLength"],
    schema: { type: "string", maxLength: 0 },
    valid: [""],
  },
  {
    name: "string-max-length-63",
    keywords: ["type", "minLength", "maxLength"],
    schema: { type: "string", minLength: 1, maxLength: 63 },
    valid: ["x", "a".repeat(63)],
  },

  // ---------------------------------------------------------------------------
  // pattern (pattern.json): ECMAScript subset: literals, classes, \d \w \s,
  // groups, alternation, quantifiers, anchors; one unanchored pattern.
  // ---------------------------------------------------------------------------
  {
    name: "pattern-us-zip",
    keywords: ["type", "pattern"],
    schema: { type: "string", pattern: "^\\d{5}(-\\d{4})?$" },
    valid: ["12345", "12345-6789"],
  },
  {
    name: "pattern-hex-color",
    keywords: ["type", "pattern"],
    schema: { type: "string", pattern: "^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$" },
    valid: ["#fff", "#A0b1C2"],
  },
  {
    name: "pattern-alternation",
    keywords: ["type", "pattern"],
    schema: { type: "string", pattern: "^(red|green|blue)(-(light|dark))?$" },
    valid: ["red", "blue-dark"],
  },
  {
    name: "pattern-slug-with-length",
    keywords: ["type", "pattern", "minLength", "maxLength"],
    schema: { type: "string", pattern: "^[a-z0-9]+(-[a-z0-9]+)*$", minLength: 3, maxLength: 32 },
    valid: ["abc", "my-first-post-2024"],
  },
  {
    name: "pattern-semver",
    keywords: ["type", "pattern", "maxLength"],
    schema: { type: "string", pattern: "^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)$", maxLength: 20 },
    valid: ["0.0.1", "10.20.300"],
  },
  {
    name: "pattern-word-space-classes",
    keywords: ["type", "pattern"],
    schema: { type: "string", pattern: "^\\w{1,8}\\s\\w{1,8}$" },
    valid: ["hello world", "a_1 B2"],
  },
  {
    // Unanchored: the match may sit anywhere in the string (pattern.json "pattern is not anchored").
    name: "pattern-unanchored",
    keywords: ["type", "pattern", "maxLength"],
    schema: { type: "string", pattern: "ab+c", maxLength: 12 },
    valid: ["abc", "xxabbbcyy"],
  },
  {
    name: "pattern-start-anchor-only",
    keywords: ["type", "pattern", "maxLength"],
    schema: { type: "string", pattern: "^id_[0-9]{2}", maxLength: 10 },
    valid: ["id_00", "id_42-rest"],
  },
  {
    name: "pattern-dot-and-optional",
    keywords: ["type", "pattern"],
    schema: { type: "string", pattern: "^v?[0-9]\\.[0-9]+ .{1,4}$" },
    valid: ["1.0 beta", "v2.15 rc"],
  },
  {
    name: "pattern-negated-class",
    keywords: ["type", "pattern"],
    schema: { type: "string", pattern: "^[^a-z\\s]{2,6}$" },
    valid: ["AB", "12-XY!"],
  },

  // ---------------------------------------------------------------------------
  // format: date-time, date, time, uuid, email (format.json with ajv-formats).
  // ---------------------------------------------------------------------------
  {
    name: "format-date-time",
    keywords: ["type", "format", "format:date-time"],
    schema: { type: "string", format: "date-time" },
    valid: ["2024-05-01T10:00:00Z", "1999-12-31T23:59:59.123+05:30"],
  },
  {
    name: "format-date",
    keywords: ["type", "format", "format:date"],
    schema: { type: "string", format: "date" },
    valid: ["2024-02-29", "1970-01-01"],
  },
  {
    name: "format-time",
    keywords: ["type", "format", "format:time"],
    schema: { type: "string", format: "time" },
    valid: ["10:00:00Z", "23:59:59.5-08:00"],
  },
  {
    name: "format-uuid",
    keywords: ["type", "format", "format:uuid"],
    schema: { type: "string", format: "uuid" },
    valid: ["123e4567-e89b-12d3-a456-426614174000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"],
  },
  {
    name: "format-email",
    keywords: ["type", "format", "format:email"],
    schema: { type: "string", format: "email" },
    valid: ["a@b.co", "first.last+tag@example.org"],
  },
  {
    name: "format-nullable-time-and-date",
    keywords: ["type", "properties", "required", "additionalProperties", "format", "format:time", "format:date"],
    schema: {
      type: "object",
      properties: {
        day: { type: "string", format: "date" },
        opens: { type: ["string", "null"], format: "time" },
        closes: { type: ["string", "null"], format: "time" },
      },
      required: ["day", "opens", "closes"],
      additionalProperties: false,
    },
    valid: [{ day: "2024-12-25", opens: null, closes: null }, { day: "2024-12-24", opens: "09:00:00Z", closes: "13:30:00+01:00" }],
  },

  // ---------------------------------------------------------------------------
  // Numbers and integers: minimum/maximum, exclusive bounds (draft 2020 numeric
  // form), multipleOf on integers (minimum.json, exclusiveMinimum.json, multipleOf.json).
  // ---------------------------------------------------------------------------
  {
    name: "number-min-max-decimal",
    keywords: ["type", "minimum", "maximum"],
    schema: { type: "number", minimum: -1.5, maximum: 2.25 },
    valid: [-1.5, 0, 2.25, 1.125],
  },
  {
    name: "number-exclusive-decimal",
    keywords: ["type", "exclusiveMinimum", "exclusiveMaximum"],
    schema: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
    valid: [0.5, 0.001, 0.999],
  },
  {
    name: "number-exclusive-narrow",
    keywords: ["type", "exclusiveMinimum", "exclusiveMaximum"],
    schema: { type: "number", exclusiveMinimum: 1.1, exclusiveMaximum: 1.2 },
    valid: [1.15, 1.1000001, 1.19],
  },
  {
    name: "number-minimum-only",
    keywords: ["type", "minimum"],
    schema: { type: "number", minimum: 100 },
    valid: [100, 1e6, 100.5],
  },
  {
    name: "number-maximum-only-negative",
    keywords: ["type", "maximum"],
    schema: { type: "number", maximum: -0.5 },
    valid: [-0.5, -100, -3.75],
  },
  {
    name: "integer-min-max",
    keywords: ["type", "minimum", "maximum"],
    schema: { type: "integer", minimum: 1, maximum: 12 },
    valid: [1, 6, 12],
  },
  {
    name: "integer-negative-range",
    keywords: ["type", "minimum", "maximum"],
    schema: { type: "integer", minimum: -50, maximum: -10 },
    valid: [-50, -10, -23],
  },
  {
    name: "integer-large-narrow-range",
    keywords: ["type", "minimum", "maximum"],
    schema: { type: "integer", minimum: 1000000, maximum: 1000005 },
    valid: [1000000, 1000005],
  },
  {
    name: "integer-single-value",
    keywords: ["type", "minimum", "maximum"],
    schema: { type: "integer", minimum: 7, maximum: 7 },
    valid: [7],
  },
  {
    name: "integer-exclusive-bounds",
    keywords: ["type", "exclusiveMinimum", "exclusiveMaximum"],
    schema: { type: "integer", exclusiveMinimum: 0, exclusiveMaximum: 10 },
    valid: [1, 9],
  },
  {
    name: "integer-exclusive-decimal-bounds",
    keywords: ["type", "exclusiveMinimum", "exclusiveMaximum"],
    schema: { type: "integer", exclusiveMinimum: -2.5, exclusiveMaximum: 2.5 },
    valid: [-2, 0, 2],
  },
  {
    name: "integer-multiple-of-bounded",
    keywords: ["type", "multipleOf", "minimum", "maximum"],
    schema: { type: "integer", multipleOf: 5, minimum: 0, maximum: 100 },
    valid: [0, 25, 100],
  },
  {
    name: "integer-multiple-of-unbounded",
    keywords: ["type", "multipleOf"],
    schema: { type: "integer", multipleOf: 3 },
    valid: [0, -3, 999],
  },
  {
    name: "integer-multiple-of-exclusive",
    keywords: ["type", "multipleOf", "exclusiveMinimum", "exclusiveMaximum"],
    schema: { type: "integer", multipleOf: 7, exclusiveMinimum: -20, exclusiveMaximum: 50 },
    valid: [-14, 0, 49],
  },
  {
    name: "integer-nullable-bounded",
    keywords: ["type", "minimum", "maximum"],
    schema: { type: ["integer", "null"], minimum: 0, maximum: 255 },
    valid: [null, 0, 255],
  },

  // ---------------------------------------------------------------------------
  // Boolean and empty schemas; annotations that are accepted and ignored.
  // ---------------------------------------------------------------------------
  {
    name: "schema-true",
    keywords: [],
    schema: true,
    valid: [null, 1, "x", [], { a: [1, { b: null }] }],
  },
  {
    name: "schema-empty-object",
    keywords: [],
    schema: {},
    valid: [false, 0.5, "", {}],
  },
  {
    name: "annotations-ignored",
    keywords: ["type", "properties", "required", "additionalProperties", "maxLength", "minimum", "maximum"],
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "https://example.com/schemas/annotated-widget.json",
      $comment: "Every annotation keyword the generator must accept and ignore.",
      title: "Widget",
      description: "A widget with annotated fields.",
      type: "object",
      properties: {
        name: { type: "string", maxLength: 16, title: "Name", examples: ["gizmo"], default: "widget" },
        legacy: { type: "boolean", deprecated: true, description: "Old flag." },
        id: { type: "integer", minimum: 1, maximum: 9999, readOnly: true },
        secret: { type: "string", maxLength: 8, writeOnly: true },
      },
      required: ["name"],
      additionalProperties: false,
      examples: [{ name: "gizmo" }],
      default: { name: "widget" },
    },
    valid: [{ name: "gizmo" }, { name: "w", legacy: false, id: 12, secret: "s3cr3t" }],
  },

  // ---------------------------------------------------------------------------
  // Realistic tool-call and API schemas mixing the above.
  // ---------------------------------------------------------------------------
  {
    name: "tool-get-weather",
    keywords: ["type", "properties", "required", "additionalProperties", "minLength", "maxLength", "enum", "minimum", "maximum"],
    schema: {
      type: "object",
      description: "Arguments of get_weather.",
      properties: {
        location: { type: "string", minLength: 2, maxLength: 40, description: "City and country." },
        unit: { enum: ["celsius", "fahrenheit"] },
        days: { type: "integer", minimum: 1, maximum: 7 },
        include_hourly: { type: "boolean" },
      },
      required: ["location", "unit"],
      additionalProperties: false,
    },
    valid: [{ location: "Paris, FR", unit: "celsius" }, { location: "NYC", unit: "fahrenheit", days: 3, include_hourly: false }],
  },
  {
    name: "tool-web-search",
    keywords: ["type", "properties", "required", "additionalProperties", "minLength", "items", "maxItems", "pattern", "minimum", "maximum", "format", "format:date"],
    schema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1 },
        max_results: { type: "integer", minimum: 1, maximum: 10 },
        domains: {
          type: "array",
          items: { type: "string", pattern: "^[a-z0-9]+(\\.[a-z0-9]+)+$", maxLength: 30 },
          maxItems: 3,
        },
        after: { type: "string", format: "date" },
      },
      required: ["query"],
      additionalProperties: false,
    },
    valid: [{ query: "grammar constrained decoding" }, { query: "q", max_results: 5, domains: ["example.com", "a.b.org"], after: "2024-01-01" }],
  },
  {
    name: "tool-http-request",
    keywords: ["type", "properties", "required", "additionalProperties", "enum", "pattern", "maxLength", "anyOf"],
    schema: {
      type: "object",
      properties: {
        method: { enum: ["GET", "POST", "PUT", "DELETE"] },
        url: { type: "string", pattern: "^https://[a-z0-9.-]+(/[a-zA-Z0-9._-]*)*$", maxLength: 60 },
        headers: { type: "object", additionalProperties: { type: "string", maxLength: 20 } },
        body: { anyOf: [{ type: "string", maxLength: 40 }, { type: "null" }] },
      },
      required: ["method", "url"],
      additionalProperties: false,
    },
    valid: [{ method: "GET", url: "https://api.example.com/v1/items" }, { method: "POST", url: "https://x.io", headers: { Accept: "text/plain" }, body: null }],
  },
  {
    name: "product-listing",
    keywords: ["type", "properties", "required", "additionalProperties", "pattern", "maxLength", "exclusiveMinimum", "enum", "items", "maxItems", "minimum", "multipleOf"],
    schema: {
      type: "object",
      properties: {
        sku: { type: "string", pattern: "^[A-Z]{3}-\\d{4}$" },
        name: { type: "string", maxLength: 40 },
        price: { type: "number", exclusiveMinimum: 0, maximum: 10000 },
        currency: { enum: ["USD", "EUR", "GBP", "JPY"] },
        tags: { type: "array", items: { enum: ["new", "sale", "eco", "limited"] }, maxItems: 4 },
        in_stock: { type: "boolean" },
        pack_size: { type: "integer", minimum: 6, maximum: 48, multipleOf: 6 },
        dimensions: {
          type: "object",
          properties: {
            width_cm: { type: "number", exclusiveMinimum: 0 },
            height_cm: { type: "number", exclusiveMinimum: 0 },
          },
          required: ["width_cm", "height_cm"],
          additionalProperties: false,
        },
      },
      required: ["sku", "name", "price", "currency", "in_stock"],
      additionalProperties: false,
    },
    valid: [
      { sku: "ABC-1234", name: "Kettle", price: 29.99, currency: "EUR", in_stock: true },
      { sku: "XYZ-0001", name: "Mug", price: 4, currency: "USD", tags: ["new", "eco"], in_stock: false, pack_size: 12, dimensions: { width_cm: 8, height_cm: 10.5 } },
    ],
  },
  {
    name: "address-postcode",
    keywords: ["type", "properties", "required", "additionalProperties", "minLength", "maxLength", "pattern", "const", "items", "minItems", "maxItems"],
    schema: {
      type: "object",
      properties: {
        lines: { type: "array", items: { type: "string", minLength: 1, maxLength: 40 }, minItems: 1, maxItems: 3 },
        city: { type: "string", minLength: 1, maxLength: 30 },
        postcode: { type: "string", pattern: "^[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}$" },
        country: { const: "GB" },
      },
      required: ["lines", "city", "postcode", "country"],
      additionalProperties: false,
    },
    valid: [{ lines: ["10 Downing Street"], city: "London", postcode: "SW1A 2AA", country: "GB" }, { lines: ["1 A Rd", "Flat 2"], city: "Leeds", postcode: "LS11AA", country: "GB" }],
  },
  {
    name: "calendar-event",
    keywords: ["type", "properties", "required", "additionalProperties", "format", "format:date-time", "format:email", "items", "minItems", "maxItems", "enum", "maxLength", "minLength", "anyOf"],
    schema: {
      type: "object",
      properties: {
        title: { type: "string", minLength: 1, maxLength: 50 },
        start: { type: "string", format: "date-time" },
        end: { type: "string", format: "date-time" },
        all_day: { type: "boolean" },
        attendees: {
          type: "array",
          items: { type: "string", format: "email", maxLength: 40 },
          minItems: 1,
          maxItems: 5,
        },
        recurrence: { anyOf: [{ enum: ["daily", "weekly", "monthly"] }, { type: "null" }] },
        location: { type: ["string", "null"], maxLength: 30 },
      },
      required: ["title", "start", "end", "attendees"],
      additionalProperties: false,
    },
    valid: [
      { title: "Standup", start: "2024-07-01T09:00:00Z", end: "2024-07-01T09:15:00Z", attendees: ["a@team.dev"] },
      { title: "Offsite", start: "2024-09-10T08:00:00+02:00", end: "2024-09-11T17:00:00+02:00", all_day: true, attendees: ["x@y.io", "z@y.io"], recurrence: null, location: "Lisbon" },
    ],
  },
  {
    name: "user-profile",
    keywords: ["type", "properties", "required", "additionalProperties", "format", "format:uuid", "format:email", "format:date", "pattern", "minimum", "maximum", "items", "maxItems", "enum", "maxLength"],
    schema: {
      type: "object",
      properties: {
        id: { type: "string", format: "uuid" },
        email: { type: "string", format: "email", maxLength: 50 },
        username: { type: "string", pattern: "^[a-z][a-z0-9_]{2,15}$" },
        display_name: { type: ["string", "null"], maxLength: 30 },
        age: { type: "integer", minimum: 13, maximum: 120 },
        birthday: { type: "string", format: "date" },
        roles: { type: "array", items: { enum: ["user", "moderator", "admin"] }, maxItems: 3 },
        verified: { type: "boolean" },
      },
      required: ["id", "email", "username", "roles"],
      additionalProperties: false,
    },
    valid: [
      { id: "123e4567-e89b-12d3-a456-426614174000", email: "kim@example.com", username: "kim_1", roles: ["user"] },
      { id: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", email: "o@p.q", username: "opq", display_name: null, age: 40, birthday: "1984-04-04", roles: [], verified: true },
    ],
  },
  {
    name: "order-with-payment-union",
    keywords: ["type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "oneOf", "const", "pattern", "minimum", "maximum", "format", "format:email", "$ref", "$defs"],
    schema: {
      type: "object",
      properties: {
        order_id: { type: "string", pattern: "^ORD-[0-9]{6}$" },
        lines: { type: "array", items: { $ref: "#/$defs/line" }, minItems: 1, maxItems: 4 },
        payment: {
          oneOf: [
            {
              type: "object",
              properties: {
                method: { const: "card" },
                last4: { type: "string", pattern: "^[0-9]{4}$" },
              },
              required: ["method", "last4"],
              additionalProperties: false,
            },
            {
              type: "object",
              properties: {
                method: { const: "paypal" },
                account: { type: "string", format: "email", maxLength: 40 },
              },
              required: ["method", "account"],
              additionalProperties: false,
            },
            {
              type: "object",
              properties: { method: { const: "invoice" } },
              required: ["method"],
              additionalProperties: false,
            },
          ],
        },
      },
      required: ["order_id", "lines", "payment"],
      additionalProperties: false,
      $defs: {
        line: {
          type: "object",
          properties: {
            product: { type: "string", pattern: "^[A-Z]{3}-\\d{4}$" },
            quantity: { type: "integer", minimum: 1, maximum: 99 },
          },
          required: ["product", "quantity"],
          additionalProperties: false,
        },
      },
    },
    valid: [
      { order_id: "ORD-000001", lines: [{ product: "ABC-1234", quantity: 2 }], payment: { method: "card", last4: "4242" } },
      { order_id: "ORD-123456", lines: [{ product: "XYZ-0001", quantity: 1 }], payment: { method: "invoice" } },
    ],
  },
  {
    name: "config-nullable-fields",
    keywords: ["type", "properties", "required", "additionalProperties", "minimum", "maximum", "exclusiveMinimum", "maxLength", "enum"],
    schema: {
      type: "object",
      properties: {
        timeout_s: { type: ["number", "null"], exclusiveMinimum: 0, maximum: 300 },
        retries: { type: ["integer", "null"], minimum: 0, maximum: 5 },
        proxy: { type: ["string", "null"], maxLength: 30 },
        log_level: { enum: ["debug", "info", "warn", "error", null] },
        features: { type: ["object", "null"], additionalProperties: { type: "boolean" } },
      },
      required: ["timeout_s", "retries", "proxy", "log_level"],
      additionalProperties: false,
    },
    valid: [
      { timeout_s: null, retries: null, proxy: null, log_level: null },
      { timeout_s: 2.5, retries: 3, proxy: "http://p:8080", log_level: "info", features: { beta: true } },
    ],
  },
  {
    name: "function-call-envelope",
    keywords: ["type", "properties", "required", "additionalProperties", "oneOf", "const", "$ref", "$defs", "maxLength", "enum", "items", "maxItems"],
    schema: {
      type: "object",
      properties: {
        thought: { type: "string", maxLength: 60 },
        call: {
          oneOf: [
            { $ref: "#/$defs/calculator" },
            { $ref: "#/$defs/lookup" },
          ],
        },
      },
      required: ["call"],
      additionalProperties: false,
      $defs: {
        calculator: {
          type: "object",
          properties: {
            name: { const: "calculator" },
            arguments: {
              type: "object",
              properties: {
                op: { enum: ["add", "sub", "mul", "div"] },
                operands: { type: "array", items: { type: "number" }, minItems: 2, maxItems: 2 },
              },
              required: ["op", "operands"],
              additionalProperties: false,
            },
          },
          required: ["name", "arguments"],
          additionalProperties: false,
        },
        lookup: {
          type: "object",
          properties: {
            name: { const: "lookup" },
            arguments: {
              type: "object",
              properties: { term: { type: "string", maxLength: 20 } },
              required: ["term"],
              additionalProperties: false,
            },
          },
          required: ["name", "arguments"],
          additionalProperties: false,
        },
      },
    },
    valid: [
      { call: { name: "calculator", arguments: { op: "add", operands: [1, 2] } } },
      { thought: "look it up", call: { name: "lookup", arguments: { term: "tokenizer" } } },
    ],
  },
  {
    name: "log-entry-tuple-and-time",
    keywords: ["type", "properties", "required", "additionalProperties", "prefixItems", "items", "minItems", "format", "format:date-time", "format:time", "enum", "maxLength"],
    schema: {
      type: "object",
      properties: {
        at: { type: "string", format: "date-time" },
        window: {
          type: "array",
          prefixItems: [
            { type: "string", format: "time" },
            { type: "string", format: "time" },
          ],
          items: false,
          minItems: 2,
        },
        level: { enum: ["INFO", "WARN", "ERROR"] },
        message: { type: "string", maxLength: 50 },
        context: { type: "object", additionalProperties: true },
      },
      required: ["at", "level", "message"],
      additionalProperties: false,
    },
    valid: [
      { at: "2024-03-10T02:30:00Z", level: "WARN", message: "disk 90% full" },
      { at: "2024-03-10T02:30:00.5-05:00", window: ["02:00:00Z", "03:00:00Z"], level: "INFO", message: "ok", context: { host: "a", n: 1 } },
    ],
  },

  // ---------------------------------------------------------------------------
  // The newer formats, number formats, lookaheads and propertyNames.
  // ---------------------------------------------------------------------------
  {
    // The newer formats alone: ajv-formats' own regexes (hostname without its trailing dot).
    name: "format-network",
    keywords: ["type", "properties", "required", "additionalProperties", "format", "maxLength", "format:uri", "format:hostname", "format:ipv4", "format:ipv6", "format:duration"],
    schema: {
      type: "object",
      properties: {
        link: { type: "string", format: "uri", maxLength: 60 },
        host: { type: "string", format: "hostname" },
        v4: { type: "string", format: "ipv4" },
        v6: { type: "string", format: "ipv6" },
        timeout: { type: "string", format: "duration" },
      },
      required: ["link", "host", "v4"],
      additionalProperties: false,
    },
    valid: [
      { link: "https://example.com/a?b=c#d", host: "api.example.com", v4: "10.0.0.1" },
      { link: "mailto:kim@example.com", host: "localhost", v4: "255.255.255.255", v6: "::1", timeout: "PT30S" },
    ],
  },
  {
    // Number formats (OpenAPI generators write them): int32 and int64 are integers, int32 within 32 bits.
    name: "number-formats",
    keywords: ["type", "properties", "required", "format", "minimum"],
    schema: {
      type: "object",
      properties: {
        count: { type: "integer", format: "int32", minimum: 0 },
        id: { type: "number", format: "int64" },
        ratio: { type: "number", format: "float" },
        total: { type: "number", format: "double" },
      },
      required: ["count", "id"],
    },
    valid: [{ count: 0, id: -5 }, { count: 2147483647, id: 123456789012, ratio: 0.5, total: -1e3 }],
  },
  {
    // Lookaheads become intersections with what follows them.
    name: "pattern-lookahead",
    keywords: ["type", "properties", "required", "pattern"],
    schema: {
      type: "object",
      properties: { password: { type: "string", pattern: "^(?=.*[0-9])(?!.*password)[a-zA-Z0-9]{8,16}$" } },
      required: ["password"],
    },
    valid: [{ password: "hunter22" }, { password: "Secret123456" }],
  },
  {
    // propertyNames beside declared properties: extra keys match it and never repeat a declared name.
    name: "property-names-with-declared",
    keywords: ["type", "properties", "required", "additionalProperties", "propertyNames", "pattern", "maxLength"],
    schema: {
      type: "object",
      properties: { version: { type: "integer" }, "x-note": { type: "string", maxLength: 10 } },
      required: ["version"],
      propertyNames: { pattern: "^[a-z][a-z0-9-]*$", maxLength: 12 },
      additionalProperties: { type: "string", maxLength: 8 },
    },
    valid: [{ version: 1 }, { version: 2, "x-note": "hi", alpha: "a", "b-2": "" }],
  },

  // ---------------------------------------------------------------------------
  // Schemas as client libraries write them, generated with the real generators (zod 4.6.7, ai 6.0.326,
  // @langchain/core 1.4.0, pydantic 2.13.4) and pasted unchanged: the call is in each comment. AI SDK and
  // zod-to-json-schema output is draft-07 ($schema says so, and ajv checks it in draft-07 mode).
  // ---------------------------------------------------------------------------
  {
    // zod v4: z.toJSONSchema(z.object({ id: z.uuid(), email: z.email(), homepage: z.url(), createdAt: z.iso.datetime() }))
    name: "zod4-string-formats",
    keywords: ["type", "properties", "required", "additionalProperties", "format", "pattern", "format:uuid", "format:email", "format:uri", "format:date-time"],
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"id": {"type": "string", "format": "uuid", "pattern": "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$"}, "email": {"type": "string", "format": "email", "pattern": "^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"}, "homepage": {"type": "string", "format": "uri"}, "createdAt": {"type": "string", "format": "date-time", "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$"}}, "required": ["id", "email", "homepage", "createdAt"], "additionalProperties": false},
    valid: [{"id": "123e4567-e89b-42d3-a456-426614174000", "email": "kim@example.com", "homepage": "https://example.com/a?b=1", "createdAt": "2024-02-28T12:30:00Z"}],
  },
  {
    // zod v4: z.toJSONSchema(z.object({ scores: z.record(z.string(), z.number()), flags: z.record(z.enum(["red", "green"]), z.boolean()), labels: z.record(z.string().regex(/^[a-z_]+$/), z.string().max(20)) }))
    name: "zod4-records",
    keywords: ["type", "properties", "required", "additionalProperties", "propertyNames", "enum", "pattern", "maxLength"],
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"scores": {"type": "object", "propertyNames": {"type": "string"}, "additionalProperties": {"type": "number"}}, "flags": {"type": "object", "propertyNames": {"type": "string", "enum": ["red", "green"]}, "additionalProperties": {"type": "boolean"}, "required": ["red", "green"]}, "labels": {"type": "object", "propertyNames": {"type": "string", "pattern": "^[a-z_]+$"}, "additionalProperties": {"type": "string", "maxLength": 20}}}, "required": ["scores", "flags", "labels"], "additionalProperties": false},
    valid: [{"scores": {}, "flags": {"red": true, "green": false}, "labels": {}}, {"scores": {"a b": 1.5, "": -2}, "flags": {"red": false, "green": true}, "labels": {"snake_case": "yes"}}],
  },
  {
    // zod v4: z.toJSONSchema(z.object({ point: z.tuple([z.number(), z.number()]), tagged: z.tuple([z.string()], z.int()) }))
    name: "zod4-tuples",
    keywords: ["type", "properties", "required", "additionalProperties", "prefixItems", "items", "minItems", "maxItems", "minimum", "maximum"],
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false, "minItems": 2, "maxItems": 2}, "tagged": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991}, "minItems": 1}}, "required": ["point", "tagged"], "additionalProperties": false},
    valid: [{"point": [1.5, -2], "tagged": ["a"]}, {"point": [0, 0], "tagged": ["b", 1, 2, 3]}],
  },
  {
    // zod v4: z.toJSONSchema(z.object({ name: z.string(), nickname: z.string().optional(), age: z.int().min(0).nullable(), note: z.string().nullish() }))
    name: "zod4-optional-nullable",
    keywords: ["type", "properties", "required", "additionalProperties", "anyOf", "minimum", "maximum"],
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"name": {"type": "string"}, "nickname": {"type": "string"}, "age": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9007199254740991}, {"type": "null"}]}, "note": {"type": ["string", "null"]}}, "required": ["name", "age"], "additionalProperties": false},
    valid: [{"name": "kim", "age": null}, {"name": "kim", "nickname": "k", "age": 41, "note": null}, {"name": "", "age": 0, "note": "n"}],
  },
  {
    // zod v4: z.toJSONSchema(z.object({ unit: z.enum(["celsius", "fahrenheit"]), level: z.union([z.literal("low"), z.literal("mid"), z.literal("high")]), code: z.literal(200) }))
    name: "zod4-enums-literals",
    keywords: ["type", "properties", "required", "additionalProperties", "enum", "anyOf", "const"],
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "level": {"anyOf": [{"type": "string", "const": "low"}, {"type": "string", "const": "mid"}, {"type": "string", "const": "high"}]}, "code": {"type": "number", "const": 200}}, "required": ["unit", "level", "code"], "additionalProperties": false},
    valid: [{"unit": "celsius", "level": "mid", "code": 200}],
  },
  {
    // zod v4: z.toJSONSchema(z.discriminatedUnion("type", [z.object({ type: z.literal("circle"), radius: z.number().positive() }), z.object({ type: z.literal("rect"), width: z.number(), height: z.number() })]))
    name: "zod4-discriminated-union",
    keywords: ["oneOf", "type", "properties", "required", "additionalProperties", "const", "exclusiveMinimum"],
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "oneOf": [{"type": "object", "properties": {"type": {"type": "string", "const": "circle"}, "radius": {"type": "number", "exclusiveMinimum": 0}}, "required": ["type", "radius"], "additionalProperties": false}, {"type": "object", "properties": {"type": {"type": "string", "const": "rect"}, "width": {"type": "number"}, "height": {"type": "number"}}, "required": ["type", "width", "height"], "additionalProperties": false}]},
    valid: [{"type": "circle", "radius": 2.5}, {"type": "rect", "width": 1, "height": -1}],
  },
  {
    // zod v4: z.toJSONSchema(z.object({ root: Category })), Category = z.object({ name: z.string(), get children() { return z.array(Category); } })
    name: "zod4-recursive",
    keywords: ["type", "properties", "required", "additionalProperties", "$ref", "$defs", "items"],
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"root": {"$ref": "#/$defs/__schema0"}}, "required": ["root"], "additionalProperties": false, "$defs": {"__schema0": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/__schema0"}}}, "required": ["name", "children"], "additionalProperties": false}}},
    valid: [{"root": {"name": "a", "children": []}}, {"root": {"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": []}]}]}}],
  },
  {
    // AI SDK 6 (zod v4, draft-07): zodSchema(z.object({ point: z.tuple([z.number(), z.number()]), tagged: z.tuple([z.string()], z.int()) })).jsonSchema
    name: "ai-sdk-zod4-tuples",
    keywords: ["type", "properties", "required", "additionalProperties", "items", "additionalItems", "minItems", "maxItems", "minimum", "maximum"],
    schema: {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}], "additionalItems": false, "minItems": 2, "maxItems": 2}, "tagged": {"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991}, "minItems": 1}}, "required": ["point", "tagged"], "additionalProperties": false},
    valid: [{"point": [1.5, -2], "tagged": ["a"]}, {"point": [0, 0], "tagged": ["b", 1, 2, 3]}],
  },
  {
    // AI SDK 6 (zod v4, draft-07): zodSchema(z.object({ scores: z.record(z.string(), z.number()), flags: z.record(z.enum(["red", "green"]), z.boolean()), labels: z.record(z.string().regex(/^[a-z_]+$/), z.string().max(20)) })).jsonSchema
    name: "ai-sdk-zod4-records",
    keywords: ["type", "properties", "required", "additionalProperties", "propertyNames", "enum", "pattern", "maxLength"],
    schema: {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"scores": {"type": "object", "propertyNames": {"type": "string"}, "additionalProperties": {"type": "number"}}, "flags": {"type": "object", "propertyNames": {"type": "string", "enum": ["red", "green"]}, "additionalProperties": {"type": "boolean"}, "required": ["red", "green"]}, "labels": {"type": "object", "propertyNames": {"type": "string", "pattern": "^[a-z_]+$"}, "additionalProperties": {"type": "string", "maxLength": 20}}}, "required": ["scores", "flags", "labels"], "additionalProperties": false},
    valid: [{"scores": {"x": 1}, "flags": {"red": true, "green": false}, "labels": {"a_b": "c"}}],
  },
  {
    // AI SDK 6 (zod v4, draft-07): zodSchema(z.object({ root: Category }), { useReferences: true }).jsonSchema (the same with or without useReferences: a cycle is always a reference)
    name: "ai-sdk-zod4-recursive",
    keywords: ["type", "properties", "required", "additionalProperties", "$ref", "items"],
    schema: {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"root": {"$ref": "#/definitions/__schema0"}}, "required": ["root"], "definitions": {"__schema0": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/definitions/__schema0"}}}, "required": ["name", "children"], "additionalProperties": false}}, "additionalProperties": false},
    valid: [{"root": {"name": "a", "children": [{"name": "b", "children": []}]}}],
  },
  {
    // AI SDK 6 (zod v3 through zod-to-json-schema, draft-07): zodSchema(z.object({ id: z.string().uuid(), email: z.string().email(), homepage: z.string().url(), createdAt: z.string().datetime() })).jsonSchema
    name: "ai-sdk-zod3-string-formats",
    keywords: ["type", "properties", "required", "additionalProperties", "format", "format:uuid", "format:email", "format:uri", "format:date-time"],
    schema: {"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}, "email": {"type": "string", "format": "email"}, "homepage": {"type": "string", "format": "uri"}, "createdAt": {"type": "string", "format": "date-time"}}, "required": ["id", "email", "homepage", "createdAt"], "additionalProperties": false, "$schema": "http://json-schema.org/draft-07/schema#"},
    valid: [{"id": "123e4567-e89b-12d3-a456-426614174000", "email": "kim@example.com", "homepage": "urn:isbn:0451450523", "createdAt": "2024-02-28T12:30:00.5+01:00"}],
  },
  {
    // AI SDK 6 (zod v3, draft-07): zodSchema(z.object({ scores: z.record(z.string(), z.number()), flags: z.record(z.enum(["red", "green"]), z.boolean()) })).jsonSchema
    name: "ai-sdk-zod3-records",
    keywords: ["type", "properties", "required", "additionalProperties", "propertyNames", "enum"],
    schema: {"type": "object", "properties": {"scores": {"type": "object", "additionalProperties": {"type": "number"}}, "flags": {"type": "object", "additionalProperties": {"type": "boolean"}, "propertyNames": {"enum": ["red", "green"]}}}, "required": ["scores", "flags"], "additionalProperties": false, "$schema": "http://json-schema.org/draft-07/schema#"},
    valid: [{"scores": {}, "flags": {}}, {"scores": {"a": 1}, "flags": {"green": true}}],
  },
  {
    // AI SDK 6 (zod v3, draft-07): zodSchema(z.object({ point: z.tuple([z.number(), z.number()]), tagged: z.tuple([z.string()]).rest(z.number().int()) })).jsonSchema
    name: "ai-sdk-zod3-tuples",
    keywords: ["type", "properties", "required", "additionalProperties", "items", "additionalItems", "minItems", "maxItems"],
    schema: {"type": "object", "properties": {"point": {"type": "array", "minItems": 2, "maxItems": 2, "items": [{"type": "number"}, {"type": "number"}]}, "tagged": {"type": "array", "minItems": 1, "items": [{"type": "string"}], "additionalItems": {"type": "integer"}}}, "required": ["point", "tagged"], "additionalProperties": false, "$schema": "http://json-schema.org/draft-07/schema#"},
    valid: [{"point": [1, 2], "tagged": ["x", 1]}],
  },
  {
    // AI SDK 6 (zod v3, draft-07): zodSchema(z.discriminatedUnion("type", [circle, rect])).jsonSchema (zod-to-json-schema writes anyOf)
    name: "ai-sdk-zod3-discriminated-union",
    keywords: ["anyOf", "type", "properties", "required", "additionalProperties", "const", "exclusiveMinimum"],
    schema: {"anyOf": [{"type": "object", "properties": {"type": {"type": "string", "const": "circle"}, "radius": {"type": "number", "exclusiveMinimum": 0}}, "required": ["type", "radius"], "additionalProperties": false}, {"type": "object", "properties": {"type": {"type": "string", "const": "rect"}, "width": {"type": "number"}, "height": {"type": "number"}}, "required": ["type", "width", "height"], "additionalProperties": false}], "$schema": "http://json-schema.org/draft-07/schema#"},
    valid: [{"type": "circle", "radius": 0.5}],
  },
  {
    // LangChain JS: toJsonSchema(z.object({ root: Category })) from @langchain/core/utils/json_schema, zod v3 with z.lazy (the AI SDK's zodSchema(..., { useReferences: true }) writes the same)
    name: "langchain-zod3-recursive",
    keywords: ["type", "properties", "required", "additionalProperties", "$ref", "items"],
    schema: {"type": "object", "properties": {"root": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/properties/root"}}}, "required": ["name", "children"], "additionalProperties": false}}, "required": ["root"], "additionalProperties": false, "$schema": "http://json-schema.org/draft-07/schema#"},
    valid: [{"root": {"name": "a", "children": [{"name": "b", "children": []}]}}],
  },
  {
    // LangChain JS: toJsonSchema(z.object({ name: z.string(), nickname: z.string().optional(), age: z.number().int().min(0).nullable() })), zod v3
    name: "langchain-zod3-optional-enums",
    keywords: ["type", "properties", "required", "additionalProperties", "anyOf", "minimum"],
    schema: {"type": "object", "properties": {"name": {"type": "string"}, "nickname": {"type": "string"}, "age": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}}, "required": ["name", "age"], "additionalProperties": false, "$schema": "http://json-schema.org/draft-07/schema#"},
    valid: [{"name": "kim", "age": null}, {"name": "kim", "nickname": "k", "age": 3}],
  },
  {
    // pydantic 2 (what LangChain Python's with_structured_output starts from): Profile.model_json_schema(), Profile with UUID, HttpUrl, datetime, dict[str, int], tuple[float, float], Optional[str], an Enum, a Literal, a discriminated union of Cat | Dog and a recursive Node
    name: "pydantic-profile",
    keywords: ["type", "properties", "required", "additionalProperties", "$ref", "$defs", "format", "format:uuid", "format:uri", "format:date-time", "minLength", "maxLength", "prefixItems", "minItems", "maxItems", "anyOf", "enum", "const", "oneOf", "items"],
    schema: {"$defs": {"Cat": {"properties": {"pet_type": {"const": "cat", "title": "Pet Type", "type": "string"}, "meows": {"title": "Meows", "type": "integer"}}, "required": ["pet_type", "meows"], "title": "Cat", "type": "object"}, "Color": {"enum": ["red", "green"], "title": "Color", "type": "string"}, "Dog": {"properties": {"pet_type": {"const": "dog", "title": "Pet Type", "type": "string"}, "barks": {"title": "Barks", "type": "number"}}, "required": ["pet_type", "barks"], "title": "Dog", "type": "object"}, "Node": {"properties": {"name": {"title": "Name", "type": "string"}, "children": {"default": [], "items": {"$ref": "#/$defs/Node"}, "title": "Children", "type": "array"}}, "required": ["name"], "title": "Node", "type": "object"}}, "properties": {"id": {"format": "uuid", "title": "Id", "type": "string"}, "homepage": {"format": "uri", "maxLength": 2083, "minLength": 1, "title": "Homepage", "type": "string"}, "created_at": {"format": "date-time", "title": "Created At", "type": "string"}, "scores": {"additionalProperties": {"type": "integer"}, "title": "Scores", "type": "object"}, "point": {"maxItems": 2, "minItems": 2, "prefixItems": [{"type": "number"}, {"type": "number"}], "title": "Point", "type": "array"}, "nickname": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": "Nickname"}, "color": {"$ref": "#/$defs/Color"}, "level": {"enum": ["low", "mid", "high"], "title": "Level", "type": "string"}, "pet": {"discriminator": {"mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}, "propertyName": "pet_type"}, "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "title": "Pet"}, "tree": {"$ref": "#/$defs/Node"}}, "required": ["id", "homepage", "created_at", "scores", "point", "color", "level", "pet", "tree"], "title": "Profile", "type": "object"},
    valid: [{"id": "123e4567-e89b-12d3-a456-426614174000", "homepage": "https://example.com/", "created_at": "2024-02-28T12:30:00Z", "scores": {"a": 1}, "point": [1.5, 2], "color": "red", "level": "low", "pet": {"pet_type": "cat", "meows": 3}, "tree": {"name": "root", "children": [{"name": "leaf"}]}}],
  },
  {
    // zod v4: z.toJSONSchema(z.object({ id: z.cuid(), key: z.nanoid(), blob: z.base64(), v4: z.ipv4(), v6: z.ipv6(), wait: z.iso.duration(), count: z.int32(), ratio: z.float32() }))
    // cuid, nanoid and base64 are no standard format: annotations, the pattern beside each is what is enforced.
    name: "zod4-more-string-formats",
    keywords: ["type", "properties", "required", "additionalProperties", "format", "pattern", "minimum", "maximum", "format:ipv4", "format:ipv6", "format:duration"],
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"id": {"type": "string", "format": "cuid", "pattern": "^[cC][0-9a-z]{6,}$"}, "key": {"type": "string", "format": "nanoid", "pattern": "^[a-zA-Z0-9_-]{21}$"}, "blob": {"type": "string", "format": "base64", "contentEncoding": "base64", "pattern": "^$|^(?:[0-9a-zA-Z+/]{4})*(?:(?:[0-9a-zA-Z+/]{2}==)|(?:[0-9a-zA-Z+/]{3}=))?$"}, "v4": {"type": "string", "format": "ipv4", "pattern": "^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])$"}, "v6": {"type": "string", "format": "ipv6", "pattern": "^(([0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}|([0-9a-fA-F]{1,4}:){1,7}:|([0-9a-fA-F]{1,4}:){1,6}:[0-9a-fA-F]{1,4}|([0-9a-fA-F]{1,4}:){1,5}(:[0-9a-fA-F]{1,4}){1,2}|([0-9a-fA-F]{1,4}:){1,4}(:[0-9a-fA-F]{1,4}){1,3}|([0-9a-fA-F]{1,4}:){1,3}(:[0-9a-fA-F]{1,4}){1,4}|([0-9a-fA-F]{1,4}:){1,2}(:[0-9a-fA-F]{1,4}){1,5}|[0-9a-fA-F]{1,4}:((:[0-9a-fA-F]{1,4}){1,6})|:((:[0-9a-fA-F]{1,4}){1,7}|:))$"}, "wait": {"type": "string", "format": "duration", "pattern": "^P(?:(\\d+W)|(?!.*W)(?=\\d|T\\d)(\\d+Y)?(\\d+M)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+([.,]\\d+)?S)?)?)$"}, "count": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}, "ratio": {"type": "number", "minimum": -3.4028234663852886e+38, "maximum": 3.4028234663852886e+38}}, "required": ["id", "key", "blob", "v4", "v6", "wait", "count", "ratio"], "additionalProperties": false},
    valid: [{"id": "cjld2cjxh0000qzrmn831i7rn", "key": "V1StGXR8_Z5jdHi6B-myT", "blob": "aGVsbG8=", "v4": "192.168.0.1", "v6": "2001:db8::1", "wait": "P1Y2M3DT4H5M6S", "count": -2147483648, "ratio": 1.5}],
  },
];

export const UNSUPPORTED_SCHEMAS: readonly UnsupportedSchema[] = [
  // Keywords the generator does not implement at all.
  {
    name: "not-at-root",
    schema: { type: "string", not: { const: "forbidden" } },
    keyword: "not",
    path: "/not",
  },
  {
    name: "not-in-defs",
    schema: {
      type: "object",
      properties: { code: { $ref: "#/$defs/code" } },
      $defs: { code: { type: "integer", not: { const: 0 } } },
    },
    keyword: "not",
    path: "/$defs/code/not",
  },
  {
    name: "if-then-else",
    schema: {
      type: "object",
      properties: { country: { enum: ["US", "CA"] }, postal: { type: "string", maxLength: 10 } },
      if: { properties: { country: { const: "US" } } },
      then: { properties: { postal: { pattern: "^[0-9]{5}$" } } },
      else: { properties: { postal: { pattern: "^[A-Z][0-9][A-Z] [0-9][A-Z][0-9]$" } } },
    },
    keyword: "if",
    path: "/if",
  },
  {
    name: "pattern-properties",
    schema: {
      type: "object",
      properties: { meta: { type: "object", patternProperties: { "^x-": { type: "string" } } } },
    },
    keyword: "patternProperties",
    path: "/properties/meta/patternProperties",
  },
  {
    // Only string keywords can be enforced on keys.
    name: "property-names-any-of",
    schema: { type: "object", propertyNames: { anyOf: [{ pattern: "^a" }, { pattern: "^b" }] }, additionalProperties: { type: "integer" } },
    keyword: "propertyNames",
    path: "/propertyNames",
  },
  {
    name: "dependent-required",
    schema: {
      type: "object",
      properties: { card: { type: "string" }, billing_address: { type: "string" } },
      dependentRequired: { card: ["billing_address"] },
    },
    keyword: "dependentRequired",
    path: "/dependentRequired",
  },
  {
    name: "dependent-schemas",
    schema: {
      type: "object",
      properties: {
        payment: {
          type: "object",
          properties: { card: { type: "string" } },
          dependentSchemas: { card: { required: ["cvv"], properties: { cvv: { type: "string" } } } },
        },
      },
    },
    keyword: "dependentSchemas",
    path: "/properties/payment/dependentSchemas",
  },
  {
    name: "min-properties",
    schema: { type: "object", additionalProperties: { type: "integer" }, minProperties: 1 },
    keyword: "minProperties",
    path: "/minProperties",
  },
  {
    name: "max-properties-nested-items",
    schema: {
      type: "array",
      items: { type: "object", additionalProperties: { type: "boolean" }, maxProperties: 3 },
      maxItems: 2,
    },
    keyword: "maxProperties",
    path: "/items/maxProperties",
  },
  {
    name: "unique-items-in-property",
    schema: {
      type: "object",
      properties: { tags: { type: "array", items: { type: "string" }, uniqueItems: true } },
    },
    keyword: "uniqueItems",
    path: "/properties/tags/uniqueItems",
  },
  {
    name: "contains-in-items",
    schema: {
      type: "array",
      items: { type: "array", items: { type: "integer" }, contains: { const: 0 } },
    },
    keyword: "contains",
    path: "/items/contains",
  },
  {
    name: "unevaluated-properties",
    schema: {
      type: "object",
      allOf: [{ properties: { a: { type: "integer" } } }],
      unevaluatedProperties: false,
    },
    keyword: "unevaluatedProperties",
    path: "/unevaluatedProperties",
  },
  {
    name: "unevaluated-items",
    schema: {
      type: "object",
      properties: {
        pair: { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }], unevaluatedItems: false },
      },
    },
    keyword: "unevaluatedItems",
    path: "/properties/pair/unevaluatedItems",
  },

  // Supported keywords used in ways the generator cannot honour.
  {
    name: "multiple-of-on-number",
    schema: { type: "object", properties: { price: { type: "number", multipleOf: 0.01 } } },
    keyword: "multipleOf",
    path: "/properties/price/multipleOf",
  },
  {
    name: "multiple-of-number-in-anyof",
    schema: { anyOf: [{ type: "string", maxLength: 4 }, { type: "number", minimum: 0, multipleOf: 0.5 }] },
    keyword: "multipleOf",
    path: "/anyOf/1/multipleOf",
  },
  {
    // A format validators check but that is not enforced: refused, not ignored.
    name: "format-iri",
    schema: { type: "object", properties: { link: { type: "string", format: "iri" } }, required: ["link"] },
    keyword: "format=iri",
    path: "/properties/link/format",
  },
  {
    name: "format-uri-reference-in-defs",
    schema: {
      type: "array",
      items: { $ref: "#/$defs/link" },
      $defs: { link: { type: "string", format: "uri-reference" } },
    },
    keyword: "format=uri-reference",
    path: "/$defs/link/format",
  },
  {
    name: "ref-external-document",
    schema: {
      type: "object",
      properties: { address: { $ref: "https://example.com/x.json" } },
    },
    keyword: "$ref",
    path: "/properties/address/$ref",
  },
  {
    name: "ref-relative-document",
    schema: { type: "array", items: { $ref: "other.json#/$defs/item" } },
    keyword: "$ref",
    path: "/items/$ref",
  },
  {
    // zod v4: z.toJSONSchema(z.object({ host: z.hostname() })): its pattern's lookahead bounds the length of labels
    // that it also counts, a product past the DFA state limit. (format: "hostname" alone is enforced.)
    name: "zod4-hostname-pattern",
    schema: {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"host": {"type": "string", "format": "hostname", "pattern": "^(?=.{1,253}\\.?$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[-0-9a-zA-Z]{0,61}[0-9a-zA-Z])?)*\\.?$"}}, "required": ["host"], "additionalProperties": false},
    keyword: "pattern",
    path: "/properties/host/pattern",
  },
  {
    name: "pattern-lookbehind",
    schema: {
      type: "object",
      properties: { price: { type: "string", pattern: "^(?<=\\$)\\d+$" } },
    },
    keyword: "pattern",
    path: "/properties/price/pattern",
  },
  {
    name: "pattern-backreference",
    schema: { type: "string", pattern: "^([a-z])\\1$" },
    keyword: "pattern",
    path: "/pattern",
  },
  {
    name: "pattern-word-boundary",
    schema: { type: "array", items: { type: "string", pattern: "\\bcat\\b" } },
    keyword: "pattern",
    path: "/items/pattern",
  },
  {
    // Both branches accept {}: not provably disjoint.
    name: "oneof-overlapping-objects",
    schema: {
      type: "object",
      properties: {
        shape: {
          oneOf: [
            { type: "object", properties: { radius: { type: "number" } } },
            { type: "object", properties: { side: { type: "number" } } },
          ],
        },
      },
    },
    keyword: "oneOf",
    path: "/properties/shape/oneOf",
  },
  {
    // integer is a subset of number: overlapping types.
    name: "oneof-integer-number",
    schema: { oneOf: [{ type: "integer" }, { type: "number" }] },
    keyword: "oneOf",
    path: "/oneOf",
  },
  {
    name: "allof-conflicting-types",
    schema: { allOf: [{ type: "string" }, { type: "integer" }] },
    keyword: "allOf",
    path: "/allOf",
  },
  {
    name: "allof-conflicting-property-in-defs",
    schema: {
      $ref: "#/$defs/thing",
      $defs: {
        thing: {
          allOf: [
            { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
            { type: "object", properties: { id: { type: "boolean" } }, required: ["id"] },
          ],
        },
      },
    },
    keyword: "allOf",
    path: "/$defs/thing/allOf",
  },
];
