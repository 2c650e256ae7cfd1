// What a constrained answer looks like, as a grammar: a JSON object (JSON mode), a document of a JSON Schema, or tool
// calls in the chat template's tagged format (`<tool_call>{"name": ..., "arguments": ...}</tool_call>`), with free
// text before the calls when the model may choose, and free reasoning before all of it when thinking is on; or a whole
// harmony reply (gpt-oss: harmony.ts), whose reasoning and calls are messages of its own syntax; or calls in Mistral's
// `[TOOL_CALLS]` format (mistral.ts).
import { type Grammar, GrammarBuilder, type GrammarSymbol } from "./grammar.js";
import { harmonyReply } from "./harmony.js";
import { gemma4Calls } from "./gemma4.js";
import { mistralCalls } from "./mistral.js";
import { FreeTextLexeme } from "./lexemes/free-text.js";
import { hasLoneSurrogate } from "./lexemes/utf8.js";
import { WhitespaceLexeme } from "./lexemes/whitespace.js";
import { SchemaCompiler } from "./schema/compile.js";
import { SchemaError, pointer, quoted } from "./schema/errors.js";
import type { JsonWhitespace } from "./schema/layout.js";
import { objectRule } from "./schema/object.js";

/** A tool the model may call, with the JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  parameters: unknown;
}

/** The shape of the answer. */
export type AnswerFormat =
  /** Any JSON object (OpenAI `response_format: {type: "json_object"}`). */
  | { type: "json_object" }
  /** A JSON document valid against `schema`. */
  | { type: "json_schema"; schema: unknown }
  /**
   * Tool calls between `tags`: "auto" lets the model write text and then, optionally, calls; "none" allows text that
   * never opens a call; "required" demands one or more calls and no text; `{name}` demands exactly one call of that
   * tool.
   */
  | {
      type: "tool_calls";
      tools: ToolSpec[];
      choice: "auto" | "none" | "required" | { name: string };
      tags: { open: string; close: string };
      /** false: at most one call (default: one or more). */
      parallel?: boolean;
      /** With "auto": instead of free text, an answer in this JSON format when the model calls no tool. */
      otherwise?: JsonFormat;
    }
  /**
   * Tool calls in Mistral's format after `[TOOL_CALLS]` (mistral.ts): one JSON list (`layout` "json") or
   * `NAME[ARGS]{...}` per call ("args"); `choice`, `parallel` and `otherwise` as for tool_calls.
   */
  | {
      type: "mistral_calls";
      layout: "json" | "args";
      tools: ToolSpec[];
      choice: "auto" | "none" | "required" | { name: string };
      parallel?: boolean;
      otherwise?: JsonFormat;
    }
  /**
   * Tool calls in Gemma 4's format, `<|tool_call>call:NAME{...}<tool_call|>` each (gemma4.ts); `choice`, `parallel`
   * and `otherwise` as for tool_calls.
   */
  | {
      type: "gemma4_calls";
      tools: ToolSpec[];
      choice: "auto" | "none" | "required" | { name: string };
      parallel?: boolean;
      otherwise?: JsonFormat;
    }
  /**
   * A reply in OpenAI's harmony format (gpt-oss), reasoning included (see harmony.ts): analysis and commentary
   * messages, then the final message (free text, or the `answer` JSON format) or one call of a tool as `choice` says
   * (as for tool_calls; with no tools, "none").
   */
  | {
      type: "harmony";
      tools: ToolSpec[];
      choice: "auto" | "none" | "required" | { name: string };
      answer?: JsonFormat;
    };

/** The JSON answer formats (OpenAI `response_format`). */
export type JsonFormat = Extract<AnswerFormat, { type: "json_object" | "json_schema" }>;

/** A constraint on generated output: the answer's format, after free reasoning when `thinking` is set. */
export interface ConstraintSpec {
  format: AnswerFormat;
  /**
   * Whitespace inside JSON (default "compact": one optional space after `:` and `,`, nothing else; "pretty" also
   * allows a line break indented to the nesting level). See {@link JsonWhitespace}.
   */
  whitespace?: JsonWhitespace;
  /**
   * Reasoning comes first, as free text up to and including `close` (e.g. "</think>"); the format applies after it.
   * With `open`, the output starts with that tag (the prompt did not open the reasoning itself); with `optional` too,
   * the model may skip the reasoning and answer at once (Gemma 4's thought channel, as llama.cpp's grammar has it).
   */
  thinking?: { open?: string; close: string; optional?: boolean };
}

/** Blank lines between the reasoning's close tag and the answer. */
const AFTER_REASONING = new WhitespaceLexeme(32, 4);
/** Between a tool-call tag and its JSON, and between calls: a line break as chat templates write it, or a space. */
const TAG_GAP = new WhitespaceLexeme(2, 1);

/**
 * The grammar of outputs that satisfy `spec`.
 * @throws SchemaError naming the keyword and path of anything a schema asks for that is not supported (paths of tool
 * schemas start at `/tools/<index>`).
 */
export function constraintGrammar(spec: ConstraintSpec): Grammar {
  checkTags(spec);
  const b = new GrammarBuilder();
  const schemas = new SchemaCompiler(b, spec.whitespace ?? "compact");
  const answer = answerSymbols(spec.format, b, schemas);
  let root: GrammarSymbol[][] = answer;
  if (spec.thinking) {
    const reasoning = b.lexeme(new FreeTextLexeme(spec.thinking.close, true));
    const gap = b.optional("after-reasoning", [b.lexeme(AFTER_REASONING)]);
    const rest = b.rule("answer", answer);
    const open = spec.thinking.open ? [b.literal(spec.thinking.open)] : [];
    root = [[...open, reasoning, gap, b.ref(rest)]];
    // Only a reasoning block the output opens itself can be left out.
    if (spec.thinking.optional && spec.thinking.open) root.push([b.ref(rest)]);
  }
  return b.build(b.rule("output", root));
}

/** Tags are written as UTF-8 bytes: one holding a lone surrogate has no bytes to write (TextEncoder would substitute). */
function checkTags(spec: ConstraintSpec): void {
  const tags: Array<[string, string | undefined]> = [["thinking", spec.thinking?.open], ["thinking", spec.thinking?.close]];
  if (spec.format.type === "tool_calls") tags.push(["tags", spec.format.tags.open], ["tags", spec.format.tags.close]);
  for (const [keyword, tag] of tags) {
    if (tag !== undefined && hasLoneSurrogate(tag)) throw new SchemaError(keyword, "", `the tag ${quoted(tag)} holds a lone surrogate, which UTF-8 cannot encode`);
  }
}

function answerSymbols(format: AnswerFormat, b: GrammarBuilder, schemas: SchemaCompiler): GrammarSymbol[][] {
  switch (format.type) {
    case "json_object":
      // Any members: a bare {type: "object"} writes no property (absent additionalProperties adds none, which still
      // validates), so JSON mode could only ever produce "{}".
      return [[schemas.compile({ type: "object", additionalProperties: true }, "json-object")]];
    case "json_schema":
      return [[schemas.compile(format.schema, "schema")]];
    case "tool_calls":
      return toolCalls(format, b, schemas);
    case "mistral_calls": {
      const { otherwise, ...calls } = format;
      return mistralCalls(calls, b, schemas, otherwise ? answerSymbols(otherwise, b, schemas) : undefined);
    }
    case "gemma4_calls": {
      const { otherwise, ...calls } = format;
      return gemma4Calls(calls, b, schemas, otherwise ? answerSymbols(otherwise, b, schemas) : undefined);
    }
    case "harmony": {
      const answer = format.answer ? b.ref(b.rule("harmony-answer", answerSymbols(format.answer, b, schemas))) : undefined;
      return harmonyReply({ tools: format.tools, choice: format.choice, ...(answer ? { answer } : {}) }, b, schemas);
    }
  }
}

function toolCalls(format: Extract<AnswerFormat, { type: "tool_calls" }>, b: GrammarBuilder, schemas: SchemaCompiler): GrammarSymbol[][] {
  const { tools, choice, tags } = format;
  if (choice === "none") return format.otherwise ? answerSymbols(format.otherwise, b, schemas) : [[], [b.lexeme(new FreeTextLexeme(tags.open, false))]];
  const gap = b.optional("tag-gap", [b.lexeme(TAG_GAP)]);
  const named = typeof choice === "object" ? choice.name : undefined;
  if (named !== undefined && !tools.some((tool) => tool.name === named)) throw new SchemaError("tool_choice", "", `tool_choice names ${quoted(named)}, which is not among the tools`);
  const bodies: GrammarSymbol[][] = [];
  tools.forEach((tool, index) => {
    if (named !== undefined && tool.name !== named) return;
    let args: GrammarSymbol;
    try {
      // The arguments are the value of a member of the call object: one level down.
      args = schemas.compile(tool.parameters ?? { type: "object" }, `tool:${tool.name}`, 1);
    } catch (error) {
      if (error instanceof SchemaError) throw error.under(pointer(`/tools/${index}`, "parameters"));
      throw error;
    }
    // {"name": "<tool>", "arguments": {...}}, laid out like any JSON (JSON.stringify escapes the name as needed).
    const members = [schemas.member("name", b.literal(JSON.stringify(tool.name))), schemas.member("arguments", args)];
    bodies.push([objectRule(b, `tool:${tool.name}/call`, members, undefined, schemas.layout.gaps(1))]);
  });
  if (bodies.length === 0) throw new SchemaError("tools", "", "no tool to call");
  const call = b.rule("tool-call", bodies.map((body) => [b.literal(tags.open), gap, ...body, gap, b.literal(tags.close)]));
  let calls: GrammarSymbol[] = [b.ref(call)];
  if (named === undefined && format.parallel !== false) {
    const more = b.declare("more-tool-calls");
    b.define(more, [[], [gap, b.ref(call), b.ref(more)]]);
    calls = [b.ref(call), b.ref(more)];
  }
  if (choice !== "auto") return [calls];
  // auto with a JSON format: that document, or calls.
  if (format.otherwise) return [...answerSymbols(format.otherwise, b, schemas), calls];
  // auto: text that never contains the open tag, then optionally calls; or calls at once; or nothing.
  const text = b.lexeme(new FreeTextLexeme(tags.open, false));
  return [[], [text], [text, ...calls], calls];
}
