// The zod schemas the client-library tests ask for, grouped by the JSON Schema each construct becomes, so that a
// construct the grammar cannot compile yet fails its own test and not the others. Strings and numbers are bounded
// where the construct allows it: a random-weight model only stops a free string when it happens to pick the quote.
import { z } from "zod";
import AjvModule from "ajv";
import { newValidator } from "../../engine/grammar/testing/validator.js";
import addFormatsModule from "ajv-formats";

/**
 * String formats: zod writes `format` and, for all but z.url(), a `pattern` beside it. The email and the URL have a
 * maximum length as well: their formats bound them only loosely (a URL not at all), and a random-weight model can
 * write one until max_tokens.
 */
export const Contact = z.object({
  id: z.uuid(),
  email: z.email().max(40),
  homepage: z.url().max(40),
  updatedAt: z.iso.datetime(),
});

/**
 * Contact for clients that move `pattern` and `maxLength` into the description and leave the server only the formats
 * (the Anthropic SDK's zodOutputFormat, the AI SDK's Anthropic output_config, LangChain's ChatAnthropic jsonSchema).
 * z.uuid() and z.iso.datetime() check more than their formats (a version digit, no UTC offset): a real model writing
 * UUIDs and times meets that, random weights need not; z.guid() and `offset: true` check exactly the formats. No URL:
 * with its maximum length gone, nothing bounds it.
 */
export const FormatOnlyContact = z.object({ id: z.guid(), email: z.email(), updatedAt: z.iso.datetime({ offset: true }) });

/** A record (`additionalProperties` with `propertyNames`) and a tuple (prefixItems, or draft-07 array `items`). */
export const Measurements = z.object({
  scores: z.record(z.string().max(8), z.number().int().min(0).max(100)),
  point: z.tuple([z.number().int().min(-99).max(99), z.number().int().min(-99).max(99)]),
});

/** Optional and nullable members, an enum, a union of literals and a discriminated union. */
export const Order = z.object({
  note: z.string().max(16).optional(),
  quantity: z.number().int().min(1).max(9).nullable(),
  color: z.enum(["red", "green", "blue"]),
  size: z.union([z.literal("s"), z.literal("m"), z.literal("l")]),
  shape: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("circle"), radius: z.number().int().min(1).max(9) }),
    z.object({ kind: z.literal("square"), side: z.number().int().min(1).max(9) }),
  ]),
});

/** The same without `.optional()`: OpenAI's strict conversion (zodResponseFormat, zodFunction) refuses it. */
export const StrictOrder = Order.omit({ note: true }).extend({ note: z.string().max(16).nullable() });

/**
 * A recursive schema (a getter): a `$ref` to a definition that refers to itself. A chain through a nullable member,
 * not a tree: a greedy random-weight model may open array after array until max_tokens, while it closes a chain.
 */
export interface Category {
  name: string;
  parent: Category | null;
}
export const Category: z.ZodType<Category> = z.object({
  name: z.string().max(8),
  get parent() {
    return Category.nullable();
  },
});
/** The recursive schema under a property, as most answers nest it. */
export const Catalog = z.object({ root: Category });

/**
 * Only closed constructs (an enum, literal unions, booleans, nullable, optional, a discriminated union): nothing that
 * the Anthropic SDK's schema transform (zodOutputFormat) and the AI SDK's Anthropic output_config move from the schema
 * into its description (lengths, ranges, patterns), so zod checks exactly what the server was asked to enforce.
 */
export const Ticket = z.object({
  status: z.enum(["open", "closed"]),
  priority: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  urgent: z.boolean().nullable(),
  label: z.enum(["bug", "feature"]).optional(),
  owner: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("user"), admin: z.boolean() }),
    z.object({ kind: z.literal("team"), size: z.enum(["small", "large"]) }),
  ]),
});

/**
 * A recursive schema of closed constructs only (see Ticket), with z.lazy: a linked list, since a tree's arrays have
 * no bound left once a transform drops maxItems, and a greedy random-weight model may nest them until max_tokens.
 */
export interface Stop {
  city: "oslo" | "rome" | "lima";
  next: Stop | null;
}
export const Stop: z.ZodType<Stop> = z.lazy(() => z.object({ city: z.enum(["oslo", "rome", "lima"]), next: Stop.nullable() }));
export const Route = z.object({ start: Stop });

/**
 * Booleans, nullable, optional and nesting: what survives ChatAnthropic's jsonSchema method, whose @anthropic-ai/sdk
 * 0.122 transform moves `enum` and `const` into descriptions as well as bounds and patterns. (No recursion: with no
 * enum left to end on, a greedy random-weight model nests it until max_tokens.)
 */
export const Panel = z.object({
  on: z.boolean(),
  dimmed: z.boolean().nullable(),
  locked: z.boolean().optional(),
  owner: z.object({ admin: z.boolean(), deputy: z.object({ admin: z.boolean() }).nullable() }),
});

/** Tool input for the multi-step tool tests. */
export const WeatherInput = z.object({
  city: z.string().min(1).max(12),
  unit: z.enum(["c", "f"]),
  days: z.number().int().min(1).max(7).optional(),
});

// Both ajv packages are CommonJS; `.default` when present works for either import shape (as in validator.ts).
type AjvClass = typeof AjvModule.default;
type AddFormats = typeof addFormatsModule.default;
const Ajv07: AjvClass = (AjvModule as unknown as { default?: AjvClass }).default ?? (AjvModule as unknown as AjvClass);
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);
const draft07 = new Ajv07({ strict: false, allErrors: true });
addFormats(draft07);
const draft2020 = newValidator();

/**
 * Why `value` does not validate against the JSON Schema a client sent (ajv with formats, for the draft the schema
 * names: the AI SDK and OpenAI's helpers write draft-07, zod's default is 2020-12), or undefined when it does.
 */
export function jsonSchemaErrors(schema: object, value: unknown): string | undefined {
  const dialect = (schema as { $schema?: unknown }).$schema;
  const ajv = typeof dialect === "string" && dialect.includes("draft-07") ? draft07 : draft2020;
  const { $schema: _, ...rest } = schema as Record<string, unknown>;
  const validate = ajv.compile(rest);
  return validate(value) ? undefined : `${JSON.stringify(value)}: ${JSON.stringify(validate.errors)}`;
}
