// Tool calls in Mistral's format as a grammar. Calls follow the `[TOOL_CALLS]` token, in one of two layouts:
//   json (v3 / Nemo):          [TOOL_CALLS][{"name": "NAME", "arguments": {...}}, {...}]
//   args (tekken v11+):        [TOOL_CALLS]NAME[ARGS]{...}[TOOL_CALLS]NAME[ARGS]{...}
// The model's end-of-generation token follows the calls. As for tagged calls, "auto" allows text (never containing
// `[TOOL_CALLS]`) before optional calls.
import type { GrammarBuilder, GrammarSymbol } from "./grammar.js";
import { FreeTextLexeme } from "./lexemes/free-text.js";
import type { SchemaCompiler } from "./schema/compile.js";
import { SchemaError, pointer, quoted } from "./schema/errors.js";
import { objectRule } from "./schema/object.js";

/** Opens Mistral tool calls. */
const TOOL_CALLS = "[TOOL_CALLS]";
/** Between a call's name and its arguments (layout "args"). */
const ARGS = "[ARGS]";

/** The calls a Mistral model may write. */
export interface MistralCalls {
  layout: "json" | "args";
  tools: Array<{ name: string; parameters: unknown }>;
  /** "auto": text, then optional calls; "none": text without calls; "required": calls only; `{name}`: one call of it. */
  choice: "auto" | "none" | "required" | { name: string };
  /** false: at most one call (default: one or more). */
  parallel?: boolean;
}

/**
 * The alternatives of a Mistral answer with calls; `otherwise`, with "auto" or "none", is the JSON answer the model
 * gives instead of text when it calls nothing.
 */
export function mistralCalls(format: MistralCalls, b: GrammarBuilder, schemas: SchemaCompiler, otherwise?: GrammarSymbol[][]): GrammarSymbol[][] {
  const { tools, choice, layout } = format;
  const text = () => b.lexeme(new FreeTextLexeme(TOOL_CALLS, false));
  if (choice === "none") return otherwise ?? [[], [text()]];
  const named = typeof choice === "object" ? choice.name : undefined;
  if (named !== undefined && !tools.some((tool) => tool.name === named)) throw new SchemaError("tool_choice", "", `tool_choice names ${quoted(named)}, which is not among the tools`);
  // In the JSON list, the arguments are a member of a call object inside the list: two levels down.
  const argsLevel = layout === "json" ? 2 : 0;
  const bodies: GrammarSymbol[][] = [];
  tools.forEach((tool, index) => {
    if (named !== undefined && tool.name !== named) return;
    let args: GrammarSymbol;
    try {
      args = schemas.compile(tool.parameters ?? { type: "object" }, `tool:${tool.name}`, argsLevel);
    } catch (error) {
      if (error instanceof SchemaError) throw error.under(pointer(`/tools/${index}`, "parameters"));
      throw error;
    }
    if (layout === "args") {
      bodies.push([b.literal(`${TOOL_CALLS}${tool.name}${ARGS}`), args]);
    } else {
      const members = [schemas.member("name", b.literal(JSON.stringify(tool.name))), schemas.member("arguments", args)];
      bodies.push([objectRule(b, `tool:${tool.name}/mistral-call`, members, undefined, schemas.layout.gaps(2))]);
    }
  });
  if (bodies.length === 0) throw new SchemaError("tools", "", "no tool to call");
  const call = b.rule("mistral-call", bodies);
  const several = named === undefined && format.parallel !== false;
  let calls: GrammarSymbol[];
  if (layout === "args") {
    calls = [b.ref(call)];
    if (several) {
      const more = b.declare("more-mistral-calls");
      b.define(more, [[], [b.ref(call), b.ref(more)]]);
      calls.push(b.ref(more));
    }
  } else {
    const gaps = schemas.layout.gaps(1);
    const items: GrammarSymbol[] = [b.ref(call)];
    if (several) {
      const more = b.declare("more-mistral-calls");
      b.define(more, [[], [b.literal(","), ...gaps.comma, b.ref(call), b.ref(more)]]);
      items.push(b.ref(more));
    }
    calls = [b.literal(`${TOOL_CALLS}[`), ...gaps.open, ...items, ...gaps.close, b.literal("]")];
  }
  if (choice !== "auto") return [calls];
  if (otherwise) return [...otherwise, calls];
  const prose = text();
  return [[], [prose], [prose, ...calls], calls];
}
