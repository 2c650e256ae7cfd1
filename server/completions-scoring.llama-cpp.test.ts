// lm-evaluation-harness's scoring request against llama.cpp: the loglikelihood of a continuation given a context, sent
// as `local-completions` sends it (token ids, echo, max_tokens 0, logprobs 1) and summed from `token_logprobs` as the
// harness sums it, equals the same sum computed by hand from llama.cpp's logits (node-llama-cpp) within 1e-3, and
// `is_greedy` (every continuation token the top one) agrees.
import { describe, expect, it } from "vitest";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { referenceLogSoftmax } from "../engine/testing/llama-cpp.js";
import { ensureTestModel } from "../scripts/test-models.js";
import { startModelServer } from "./testing/model-server.js";

const TOLERANCE = 1e-3;

/** llama.cpp's loglikelihood of tokens[contextLength..] given the tokens before each, and whether each was its argmax. */
async function referenceScore(path: string, tokens: number[], contextLength: number): Promise<{ sum: number; greedy: boolean }> {
  // Row i predicts tokens[i + 1]: the last token predicts nothing asked for.
  const rows = await referenceLogSoftmax(path, tokens.slice(0, -1));
  let sum = 0;
  let greedy = true;
  for (let i = contextLength; i < tokens.length; i++) {
    const row = rows[i - 1]!;
    sum += row[tokens[i]!]!;
    let best = 0;
    for (let t = 1; t < row.length; t++) if (row[t]! > row[best]!) best = t;
    if (best !== tokens[i]) greedy = false;
  }
  return { sum, greedy };
}

/** Scores `continuation` after `context` over HTTP as lm-evaluation-harness does, and by hand from llama.cpp. */
async function compare(path: string, contextText: string, continuationText: string): Promise<void> {
  const server = await startModelServer({ modelPath: path, contextSize: 256, threads: 1 });
  try {
    const post = async (route: string, body: unknown) => (await fetch(`${server.base}${route}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${server.key}` }, body: JSON.stringify(body) })).json() as Promise<any>;
    // The harness tokenizes the context and the continuation apart and sends their ids joined.
    const context: number[] = (await post("/tokenize", { content: contextText, add_special: true })).tokens;
    const continuation: number[] = (await post("/tokenize", { content: continuationText })).tokens;
    const tokens = [...context, ...continuation];
    const completion = await server.openai().completions.create({ model: server.chatModel, prompt: tokens, echo: true, max_tokens: 0, logprobs: 1, temperature: 0 });
    const logprobs = completion.choices[0]!.logprobs!;
    expect(logprobs.token_logprobs).toHaveLength(tokens.length);
    // As lm_eval's parse_logprobs reads it: the continuation's logprobs summed, greedy when each is its position's top.
    let sum = 0;
    let greedy = true;
    for (let i = context.length; i < tokens.length; i++) {
      sum += logprobs.token_logprobs![i]!;
      const top = Object.entries(logprobs.top_logprobs![i]!).sort((a, b) => b[1] - a[1])[0]![0];
      if (top !== logprobs.tokens![i]) greedy = false;
    }
    const reference = await referenceScore(path, tokens, context.length);
    console.log(`${path.split("/").pop()}: loglikelihood ${sum.toFixed(6)}, llama.cpp ${reference.sum.toFixed(6)}, |diff| ${Math.abs(sum - reference.sum).toExponential(2)}`);
    expect(Math.abs(sum - reference.sum)).toBeLessThan(TOLERANCE);
    expect(greedy).toBe(reference.greedy);
  } finally {
    await server.close();
  }
}

describe("lm-evaluation-harness scoring against llama.cpp", () => {
  it("tiny-qwen3 f32: the continuation's loglikelihood within 1e-3", async () => {
    await compare(await ensureTestModel("tiny-qwen3", "gguf", "f32"), "The quick brown fox jumps over", " the lazy dog and runs away");
  }, 120_000);

  const stories = FIXTURES.stories260kGguf;
  const reason = missingFixtureReason(stories);
  it.skipIf(skipOutsideCi(reason))(titled("stories260K: the continuation's loglikelihood within 1e-3", reason), async () => {
    failIfMissing(reason);
    await compare(stories, "Once upon a time, there was a little girl named Lily.", " She loved to play outside");
  }, 120_000);
});
