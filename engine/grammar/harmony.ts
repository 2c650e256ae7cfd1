// A reply in OpenAI's harmony format (gpt-oss) as a grammar. The prompt ends with `<|start|>assistant`; the reply is
// any number of analysis (reasoning) and commentary (preamble) messages, each ended by `<|end|>` and followed by the
// next `<|start|>assistant`, then either the final message (free text, or a JSON document) or one tool call:
//   <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{arguments}
// (the recipient may also stand in the header before the channel, as chat templates render past calls). `<|return|>`
// and `<|call|>` end generation: they are end-of-generation tokens, allowed where the reply is complete.
import type { GrammarBuilder, GrammarSymbol } from "./grammar.js";
import { FreeTextLexeme } from "./lexemes/free-text.js";
import type { SchemaCompiler } from "./schema/compile.js";
import { SchemaError, pointer, quoted } from "./schema/errors.js";

/** A tool the model may call, with the JSON Schema of its arguments. */
interface HarmonyTool {
  name: string;
  parameters: unknown;
}

/** What a harmony reply may end with. */
export interface HarmonyReply {
  tools: HarmonyTool[];
  /** As for tagged tool calls: "auto" final or a call, "none" final, "required" a call, `{name}` a call of that tool. */
  choice: "auto" | "none" | "required" | { name: string };
  /**
   * The final message's body as a compiled JSON document (a response format); absent, free text. Compiled by the
   * caller so that it shares the schema compiler.
   */
  answer?: GrammarSymbol;
}

/** Closes an analysis or commentary message. */
const END = "<|end|>";
/** Opens the next message. */
const NEXT = "<|start|>assistant";
/** The content types a call's header may name, as gpt-oss writes them. */
const CONTENT_TYPES = ["", " <|constrain|>json", "<|constrain|>json", " json"];

/** The alternatives of a harmony reply's grammar. */
export function harmonyReply(reply: HarmonyReply, b: GrammarBuilder, schemas: SchemaCompiler): GrammarSymbol[][] {
  const { tools, choice } = reply;
  const named = typeof choice === "object" ? choice.name : undefined;
  if (named !== undefined && !tools.some((tool) => tool.name === named)) throw new SchemaError("tool_choice", "", `tool_choice names ${quoted(named)}, which is not among the tools`);
  // Reasoning and preambles: free text through the message's end, then the next message's header.
  const through = b.lexeme(new FreeTextLexeme(END, true));
  const before = b.declare("harmony-messages");
  b.define(before, [
    [],
    [b.literal("<|channel|>analysis<|message|>"), through, b.literal(NEXT), b.ref(before)],
    [b.literal("<|channel|>commentary<|message|>"), through, b.literal(NEXT), b.ref(before)],
  ]);
  const final = b.rule("harmony-final", reply.answer
    ? [[b.literal("<|channel|>final<|message|>"), reply.answer]]
    : [[b.literal("<|channel|>final<|message|>")], [b.literal("<|channel|>final<|message|>"), b.lexeme(new FreeTextLexeme(END, false))]]);
  const calls: GrammarSymbol[][] = [];
  if (choice !== "none") {
    const contentType = b.rule("harmony-content-type", CONTENT_TYPES.map((type) => (type === "" ? [] : [b.literal(type)])));
    tools.forEach((tool, index) => {
      if (named !== undefined && tool.name !== named) return;
      let args: GrammarSymbol;
      try {
        args = schemas.compile(tool.parameters ?? { type: "object" }, `tool:${tool.name}`, 0);
      } catch (error) {
        if (error instanceof SchemaError) throw error.under(pointer(`/tools/${index}`, "parameters"));
        throw error;
      }
      const recipient = ` to=functions.${tool.name}`;
      const header = b.rule(`harmony-call:${tool.name}`, ["commentary", "analysis"].flatMap((channel) => [
        [b.literal(`<|channel|>${channel}${recipient}`)],
        [b.literal(`${recipient}<|channel|>${channel}`)],
      ]));
      calls.push([b.ref(header), b.ref(contentType), b.literal("<|message|>"), args]);
    });
    if (calls.length === 0) throw new SchemaError("tools", "", "no tool to call");
  }
  const endings = choice === "none" ? [[b.ref(final)]] : choice === "auto" ? [[b.ref(final)], ...calls] : calls;
  return [[b.ref(before), b.ref(b.rule("harmony-ending", endings))]];
}
