// Compaction with real chat templates and tokenizers (SmolLM2's ChatML, Qwen3's): at token level, each new turn of a
// growing agentic conversation reuses the previous chain (prompt plus the reply) but one pruned span, the budget
// holds, and emptying a tool result instead of keeping its clean tail would lose the section hit on Qwen3.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../chat/messages.js";
import { renderChatTemplate } from "../chat/template.js";
import { tokenizerFromHuggingFace } from "../tokenizer/huggingface.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import type { Tokenizer } from "../tokenizer/tokenizer.js";
import { type CompactionResult, compactConversation } from "./index.js";
import { agenticConversation, agenticStep, sectionSplit } from "./test-conversations.js";

const TOOLS = [
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Reads a file of the repository.",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
];

const loaded = new Map<string, Tokenizer>();
/** Loads each tokenizer once for the whole file (Qwen3's takes most of a second). */
function loadTokenizer(directory: string): Tokenizer {
  let tokenizer = loaded.get(directory);
  if (!tokenizer) {
    tokenizer = tokenizerFromHuggingFace(directory);
    loaded.set(directory, tokenizer);
  }
  return tokenizer;
}

interface Model {
  name: string;
  directory: string;
  template: (directory: string) => string;
  tools?: unknown[];
}

const MODELS: Model[] = [
  {
    name: "SmolLM2 (ChatML, no reasoning or tool calls rendered)",
    directory: FIXTURES.smollm2Directory,
    template: (directory) => readFileSync(join(directory, "chat_template.jinja"), "utf8"),
  },
  {
    name: "Qwen3 (reasoning, tool calls, grouped tool responses)",
    directory: FIXTURES.qwen3Directory,
    template: (directory) => (JSON.parse(readFileSync(join(directory, "tokenizer_config.json"), "utf8")) as { chat_template: string }).chat_template,
    tools: TOOLS,
  },
];

for (const model of MODELS) {
  const reason = missingFixtureReason(model.directory);
  describe.skipIf(skipOutsideCi(reason))(titled(`compaction with ${model.name}`, reason), () => {
    let tokenizer: Tokenizer;
    let template: string;
    beforeAll(() => {
      failIfMissing(reason);
      tokenizer = loadTokenizer(model.directory);
      template = model.template(model.directory);
    });
    const tokens = (messages: readonly ChatMessage[], addGenerationPrompt: boolean): number[] =>
      tokenizer.encode(renderChatTemplate(template, messages, { addGenerationPrompt, tools: model.tools }), { parseSpecial: true });
    const countTokens = (messages: readonly ChatMessage[]): number => tokens(messages, true).length;
    const countText = (text: string): number => tokenizer.encode(text, { parseSpecial: true }).length;

    it("each agentic turn reuses the previous chain but for one pruned span", () => {
      let previous: CompactionResult | undefined;
      for (let steps = 1; steps <= 8; steps++) {
        const result = compactConversation(agenticConversation(steps), { budgetTokens: Infinity }, countTokens, countText);
        expect(result.tokensAfter).toBe(countTokens(result.messages));
        if (previous) {
          // The cached chain: the previous prompt and the reply generated for it (the new step's assistant message).
          const reply = result.messages[previous.messages.length]!;
          const chain = tokens([...previous.messages, reply], false);
          const input = tokens(result.messages, true);
          const split = sectionSplit(chain, input);
          expect(split.prefix + split.pruned + split.suffix).toBe(chain.length);
          if (steps >= 3) {
            expect(split.pruned).toBeGreaterThan(0);
            expect(split.suffix).toBeGreaterThan(8);
          } else {
            expect(split.pruned).toBe(0);
          }
        }
        previous = result;
      }
    });

    it("fits the budget, prunes monotonically and drops turns rarely", () => {
      const budget = countTokens(agenticConversation(6));
      let previous: CompactionResult | undefined;
      let drops = 0;
      for (let steps = 1; steps <= 24; steps++) {
        const result = compactConversation(agenticConversation(steps), { budgetTokens: budget }, countTokens, countText);
        expect(result.overBudget).toBe(false);
        expect(result.tokensAfter).toBeLessThanOrEqual(budget);
        expect(result.tokensAfter).toBe(countTokens(result.messages));
        if (previous) {
          for (const part of previous.pruned) {
            const now = result.pruned.find((candidate) => candidate.kind === part.kind)?.messageIndices ?? [];
            for (const index of part.messageIndices) expect(now).toContain(index);
          }
          const dropped = (r: CompactionResult) => r.pruned.find((part) => part.kind === "turns")?.messageIndices.length ?? 0;
          if (dropped(result) > dropped(previous)) drops++;
        }
        previous = result;
      }
      expect(drops).toBeGreaterThan(0);
      expect(drops).toBeLessThanOrEqual(8);
    });
  });
}

const qwenReason = missingFixtureReason(FIXTURES.qwen3Directory);
describe.skipIf(skipOutsideCi(qwenReason))(titled("compaction with Qwen3: why rules (a) and (b) prune the way they do", qwenReason), () => {
  let tokenizer: Tokenizer;
  let template: string;
  beforeAll(() => {
    failIfMissing(qwenReason);
    tokenizer = loadTokenizer(FIXTURES.qwen3Directory);
    template = MODELS[1]!.template(FIXTURES.qwen3Directory);
  });
  const tokens = (messages: readonly ChatMessage[], addGenerationPrompt: boolean): number[] =>
    tokenizer.encode(renderChatTemplate(template, messages, { addGenerationPrompt, tools: TOOLS }), { parseSpecial: true });
  const countTokens = (messages: readonly ChatMessage[]): number => tokens(messages, true).length;

  it("dropping the reasoning of the turn before a new user message is one pruned span", () => {
    const first: ChatMessage[] = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "What is 2+2?" },
    ];
    const reply: ChatMessage = { role: "assistant", content: "It is 4.", reasoning_content: "Two plus two makes four." };
    const result = compactConversation([...first, reply, { role: "user", content: "And 3+3?" }], { budgetTokens: Infinity }, countTokens);
    expect(result.pruned.map((part) => part.kind)).toEqual(["reasoning"]);
    const split = sectionSplit(tokens([...first, reply], false), tokens(result.messages, true));
    expect(split.pruned).toBeGreaterThan(0);
    expect(split.suffix).toBeGreaterThan(3);
    expect(split.prefix + split.pruned + split.suffix).toBe(tokens([...first, reply], false).length);
  });

  it("an emptied tool result would replace tokens, not delete them: the kept tail is what keeps the section hit", () => {
    const before = compactConversation(agenticConversation(3), { budgetTokens: Infinity }, countTokens);
    const chain = tokens([...before.messages, agenticStep(4)[0]!], false);
    const compacted = compactConversation(agenticConversation(4), { budgetTokens: Infinity }, countTokens);
    expect(compacted.messages[5]!.content).toBe("}");
    expect(sectionSplit(chain, tokens(compacted.messages, true)).suffix).toBeGreaterThan(8);
    const emptied = compacted.messages.map((message, index) => (index === 5 ? { ...message, content: "" } : message));
    expect(sectionSplit(chain, tokens(emptied, true)).suffix).toBe(0);
  });
});
