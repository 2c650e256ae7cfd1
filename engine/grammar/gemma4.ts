// Tool calls in Gemma 4's format as a grammar (engine/chat/gemma4.ts):
//   <|tool_call>call:NAME{key:VALUE,...}<tool_call|>
// VALUE in Gemma's notation: a string between `<|"|>` marks, a number, true, false, null, a list `[VALUE,...]` or an
// object `{key:VALUE,...}` with bare keys. The call's name is one of the tools' and its arguments are an object in
// that notation. Where the tool's schema lists `properties`, its keys are those, in the order the template's dictsort
// writes them (case-insensitive), the `required` ones present, and a property of type string (with or without `enum`),
// integer, number or boolean takes values of that type; deeper values are any value in the notation (llama.cpp's
// Gemma 4 grammar constrains none of this: any bare key, any value). A bare key is text without ':' or '}', as
// llama.cpp reads one; a property whose name cannot be written so is refused. The model's
// end-of-generation token (`<|tool_response>`, which opens the results in its template) follows the calls. "auto"
// allows text (never containing `<|tool_call>`) before optional calls.
import { dictsortKeys } from "../chat/dictsort.js";
import { GEMMA4_QUOTE, GEMMA4_TOOL_CALL_CLOSE, GEMMA4_TOOL_CALL_OPEN } from "../chat/gemma4.js";
import type { GrammarBuilder, GrammarSymbol } from "./grammar.js";
import { BytesExceptLexeme } from "./lexemes/bytes-except.js";
import { FreeTextLexeme } from "./lexemes/free-text.js";
import type { SchemaCompiler } from "./schema/compile.js";
import { SchemaError, pointer, quoted } from "./schema/errors.js";

/** The calls a Gemma 4 model may write. */
export interface Gemma4Calls {
  tools: Array<{ name: string; parameters: unknown }>;
  /** "auto": text, then optional calls; "none": text without calls; "required": calls only; `{name}`: one call of it. */
  choice: "auto" | "none" | "required" | { name: string };
  /** false: at most one call (default: one or more). */
  parallel?: boolean;
}

/**
 * The alternatives of a Gemma 4 answer with calls; `otherwise`, with "auto" or "none", is the JSON answer the model
 * gives instead of text when it calls nothing.
 */
export function gemma4Calls(format: Gemma4Calls, b: GrammarBuilder, schemas: SchemaCompiler, otherwise?: GrammarSymbol[][]): GrammarSymbol[][] {
  const { tools, choice } = format;
  const text = () => b.lexeme(new FreeTextLexeme(GEMMA4_TOOL_CALL_OPEN, false));
  if (choice === "none") return otherwise ?? [[], [text()]];
  const named = typeof choice === "object" ? choice.name : undefined;
  if (named !== undefined && !tools.some((tool) => tool.name === named)) throw new SchemaError("tool_choice", "", `tool_choice names ${quoted(named)}, which is not among the tools`);
  const value = gemma4ValueRule(b, schemas);
  const bodies: GrammarSymbol[][] = [];
  for (const [index, tool] of tools.entries()) {
    if (named !== undefined && tool.name !== named) continue;
    const properties = propertiesOf(tool.parameters, pointer(`/tools/${index}`, "parameters"));
    const args = properties.length > 0 ? propertyObject(b, schemas, `gemma4-args:${tool.name}`, properties, value) : gemma4Object(b, `gemma4-args:${tool.name}`, anyKey(b), value);
    bodies.push([b.literal(`${GEMMA4_TOOL_CALL_OPEN}call:${tool.name}`), args, b.literal(GEMMA4_TOOL_CALL_CLOSE)]);
  }
  if (bodies.length === 0) throw new SchemaError("tools", "", "no tool to call");
  const call = b.rule("gemma4-call", bodies);
  const calls: GrammarSymbol[] = [b.ref(call)];
  if (named === undefined && format.parallel !== false) {
    const more = b.declare("more-gemma4-calls");
    b.define(more, [[], [b.ref(call), b.ref(more)]]);
    calls.push(b.ref(more));
  }
  if (choice !== "auto") return [calls];
  if (otherwise) return [...otherwise, calls];
  const prose = text();
  return [[], [prose], [prose, ...calls], calls];
}

interface Property {
  name: string;
  schema: unknown;
  required: boolean;
}

/**
 * A schema's `properties` in the order the template's `dictsort` writes them (engine/chat/dictsort.ts), with their
 * `required` flags.
 * @throws SchemaError at `path` (the schema's) for a name the notation cannot write as a bare key.
 */
function propertiesOf(schema: unknown, path: string): Property[] {
  if (typeof schema !== "object" || schema === null) return [];
  const { properties, required } = schema as { properties?: unknown; required?: unknown };
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return [];
  const needed = new Set(Array.isArray(required) ? required : []);
  const names = Object.keys(properties);
  for (const name of names) {
    // A key is the text up to its colon after any whitespace (llama.cpp's [^:}]+): a name that is empty, holds ':' or
    // '}', or starts with whitespace would not be read back as written.
    if (name === "" || /[:}]/.test(name) || /^\s/.test(name)) {
      throw new SchemaError("properties", path, `the property name ${quoted(name)} cannot be a key in Gemma 4's call notation (empty, holding ':' or '}', or starting with whitespace)`);
    }
  }
  return dictsortKeys(names).map((name) => ({ name, schema: (properties as Record<string, unknown>)[name], required: needed.has(name) }));
}

/**
 * `{...}` with `properties` in order, each optional unless required, commas between those written: rule i "first"
 * (nothing written yet) and "later" (a comma goes before the next member).
 */
function propertyObject(b: GrammarBuilder, schemas: SchemaCompiler, name: string, properties: Property[], value: GrammarSymbol): GrammarSymbol {
  let first: GrammarSymbol[][] = [[]];
  let later: GrammarSymbol[][] = [[]];
  for (let i = properties.length - 1; i >= 0; i--) {
    const property = properties[i]!;
    const member = b.rule(`${name}/${property.name}`, [[b.literal(`${property.name}:`), typedValue(b, schemas, `${name}/${property.name}`, property.schema, value)]]);
    const nextFirst = b.ref(b.rule(`${name}/${i}/first`, first));
    const nextLater = b.ref(b.rule(`${name}/${i}/later`, later));
    const newFirst: GrammarSymbol[][] = [[b.ref(member), nextLater]];
    const newLater: GrammarSymbol[][] = [[b.literal(","), b.ref(member), nextLater]];
    if (!property.required) {
      newFirst.push([nextFirst]);
      newLater.push([nextLater]);
    }
    first = newFirst;
    later = newLater;
  }
  return b.ref(b.rule(name, [[b.literal("{"), b.ref(b.rule(`${name}/members`, first)), b.literal("}")]]));
}

/** A value as a property's schema types it (string, enum of strings, integer, number, boolean); any value otherwise. */
function typedValue(b: GrammarBuilder, schemas: SchemaCompiler, name: string, schema: unknown, any: GrammarSymbol): GrammarSymbol {
  if (typeof schema !== "object" || schema === null) return any;
  const { type, enum: choices } = schema as { type?: unknown; enum?: unknown };
  if (Array.isArray(choices) && choices.length > 0 && choices.every((choice) => typeof choice === "string" && !choice.includes(GEMMA4_QUOTE))) {
    return b.ref(b.rule(`${name}/enum`, (choices as string[]).map((choice) => [b.literal(`${GEMMA4_QUOTE}${choice}${GEMMA4_QUOTE}`)])));
  }
  switch (type) {
    case "string":
      return b.ref(b.rule(`${name}/string`, [[b.literal(GEMMA4_QUOTE), b.lexeme(new FreeTextLexeme(GEMMA4_QUOTE, true))]]));
    case "integer":
    case "number":
      return schemas.compile({ type }, `${name}/${type}`);
    case "boolean":
      return b.ref(b.rule(`${name}/boolean`, [[b.literal("true")], [b.literal("false")]]));
    default:
      return any;
  }
}

/** A bare key: text without ':' or '}' (llama.cpp's [^:}]+; the colon follows as a literal). */
function anyKey(b: GrammarBuilder): GrammarSymbol {
  return b.lexeme(new BytesExceptLexeme(":}"));
}

/** `{}` or `{KEY:VALUE,...}`. */
function gemma4Object(b: GrammarBuilder, name: string, key: GrammarSymbol, value: GrammarSymbol): GrammarSymbol {
  const member = b.rule(`${name}/member`, [[key, b.literal(":"), value]]);
  const more = b.declare(`${name}/more`);
  b.define(more, [[], [b.literal(","), b.ref(member), b.ref(more)]]);
  return b.ref(b.rule(name, [[b.literal("{"), b.literal("}")], [b.literal("{"), b.ref(member), b.ref(more), b.literal("}")]]));
}

/** Any value in Gemma's notation (one rule, shared by every tool). */
function gemma4ValueRule(b: GrammarBuilder, schemas: SchemaCompiler): GrammarSymbol {
  const value = b.declare("gemma4-value");
  const item = b.ref(value);
  const more = b.declare("gemma4-list/more");
  b.define(more, [[], [b.literal(","), item, b.ref(more)]]);
  const list = b.rule("gemma4-list", [[b.literal("["), b.literal("]")], [b.literal("["), item, b.ref(more), b.literal("]")]]);
  b.define(value, [
    // The string's text runs to the closing mark, the mark included.
    [b.literal(GEMMA4_QUOTE), b.lexeme(new FreeTextLexeme(GEMMA4_QUOTE, true))],
    [gemma4Object(b, "gemma4-object", anyKey(b), item)],
    [b.ref(list)],
    [schemas.compile({ type: "number" }, "gemma4-number")],
    [b.literal("true")],
    [b.literal("false")],
    [b.literal("null")],
  ]);
  return item;
}
