// usage.reasoningTokens: the generated tokens of the reasoning, its tags included, counted from what each engine text
// event says it completes (a held-back partial character counts with the event that carries it).
import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../../engine/request.js";
import { replay } from "../testing/scripted-engine.js";
import type { InternalEvent, InternalRequest } from "./internal.js";
import { internalEvents } from "./run.js";

const request = (thinking: boolean): InternalRequest => ({
  format: "openai", model: "m", messages: [{ role: "user", content: "hi" }], sampling: {}, stop: [], stream: true, includeUsage: false,
  thinking: { enabled: thinking }, autoCompaction: true,
});

/** Engine events for text pieces, each completing the given number of tokens. */
function events(pieces: Array<[string, number]>): EngineEvent[] {
  const completion = pieces.reduce((sum, [, tokens]) => sum + tokens, 0);
  return [
    { type: "start", requestId: "r", promptTokens: 5 },
    { type: "admitted", requestId: "r", promptTokens: 5, reusedPrefixTokens: 0, reusedSuffixTokens: 0 },
    ...pieces.map(([text, tokens]): EngineEvent => ({ type: "text", requestId: "r", text, tokens })),
    { type: "finish", requestId: "r", reason: "stop", usage: { promptTokens: 5, reusedPrefixTokens: 0, reusedSuffixTokens: 0, completionTokens: completion } },
  ] as EngineEvent[];
}

async function finishUsage(thinking: boolean, pieces: Array<[string, number]>) {
  const out: InternalEvent[] = [];
  for await (const event of internalEvents(replay(events(pieces)), request(thinking))) out.push(event);
  const finish = out.at(-1)!;
  if (finish.type !== "finish") throw new Error(`ended with ${finish.type}`);
  return finish.usage;
}

describe("reasoning tokens", () => {
  it("counts the tokens from the open tag through the close tag, and none of the answer's", async () => {
    const usage = await finishUsage(true, [["<think>", 1], ["\nLet", 1], [" me", 1], [" see é", 3], ["</think>", 1], ["\n\nHi", 1], ["!", 1]]);
    expect(usage).toMatchObject({ completionTokens: 9, reasoningTokens: 7 });
  });

  it("is 0 when the model answers without reasoning, and absent when thinking is off", async () => {
    expect(await finishUsage(true, [["Hi", 1], ["!", 1]])).toMatchObject({ completionTokens: 2, reasoningTokens: 0 });
    expect((await finishUsage(false, [["<think>", 1], ["x", 1]])).reasoningTokens).toBeUndefined();
  });

  it("counts reasoning cut off by the limit, never more than the completion", async () => {
    expect(await finishUsage(true, [["<think>", 1], ["a", 1], ["b", 1]])).toMatchObject({ completionTokens: 3, reasoningTokens: 3 });
  });
});
