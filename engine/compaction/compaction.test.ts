// Scripted conversations through compactConversation with a one-character-per-token template: exact decisions,
// option checks, monotonicity as a conversation grows, and the single pruned span the section cache needs.

import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../chat/messages.js";
import {
  type CompactionResult,
  compactConversation,
  DEFAULT_COMPACTION_OPTIONS,
  describeCompaction,
  type PrunedKind,
} from "./index.js";
import {
  agenticConversation,
  agenticStep,
  chatConversation,
  countPlain,
  fileContent,
  renderPlain,
  sectionSplit,
} from "./test-conversations.js";

const UNLIMITED = { budgetTokens: Infinity };

function indicesOf(result: CompactionResult, kind: PrunedKind): number[] {
  return result.pruned.find((part) => part.kind === kind)?.messageIndices ?? [];
}

/** Indices (in the input) of the messages the result kept. */
function keptIndices(input: readonly ChatMessage[], result: CompactionResult): number[] {
  const dropped = new Set(indicesOf(result, "turns"));
  return input.map((_, index) => index).filter((index) => !dropped.has(index));
}

describe("compactConversation: nothing to prune", () => {
  it("returns the conversation unchanged, with nothing pruned and no tokens saved", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "S" },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
      { role: "user", content: "Bye" },
    ];
    const result = compactConversation(messages, { budgetTokens: 1000 }, countPlain);
    expect(result.messages).toEqual(messages);
    expect(result.messages).not.toBe(messages);
    expect(result).toMatchObject({ pruned: [], tokensBefore: countPlain(messages), tokensAfter: countPlain(messages), tokensSaved: 0, overBudget: false });
    expect(describeCompaction(result)).toBe(`auto compaction: nothing pruned (${countPlain(messages)} tokens)`);
  });

  it("uses the documented defaults", () => {
    expect(DEFAULT_COMPACTION_OPTIONS).toEqual({ toolResultWindow: 2, keepRecentMessages: 4, targetRatio: 0.75 });
  });
});

describe("compactConversation: (a) reasoning", () => {
  it("drops the reasoning of turns before the last user message and keeps the current turn's", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "S" },
      { role: "user", content: "Q1" },
      { role: "assistant", content: "A1", reasoning_content: "think one" },
      { role: "user", content: "Q2" },
      {
        role: "assistant",
        content: "",
        reasoning_content: "think two",
        tool_calls: [{ id: "c1", type: "function", function: { name: "look", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "found it" },
    ];
    const result = compactConversation(messages, UNLIMITED, countPlain);
    expect(result.pruned).toEqual([{ kind: "reasoning", messageIndices: [2], tokensSaved: "<think>think one</think>".length }]);
    expect(result.messages[2]).toEqual({ role: "assistant", content: "A1" });
    expect("reasoning_content" in result.messages[2]!).toBe(false);
    expect(result.messages[4]).toBe(messages[4]);
    expect(result.tokensSaved).toBe("<think>think one</think>".length);
  });
});

describe("compactConversation: (b) tool results", () => {
  const messages = agenticConversation(5); // tool results at 3, 5, 7, 9, 11
  const cut = (step: number): number => fileContent(step).length - "}".length;

  it("cuts answered tool results outside the window to their clean tail and keeps the window", () => {
    const result = compactConversation(messages, UNLIMITED, countPlain);
    expect(result.pruned).toEqual([{ kind: "tool_result", messageIndices: [3, 5, 7], tokensSaved: cut(1) + cut(2) + cut(3) }]);
    for (const index of [3, 5, 7]) expect(result.messages[index]).toEqual({ ...messages[index], content: "}" });
    for (const index of [9, 11]) expect(result.messages[index]).toBe(messages[index]);
  });

  it("respects the window size, and never cuts a result the model has not answered yet", () => {
    expect(indicesOf(compactConversation(messages, { ...UNLIMITED, toolResultWindow: 0 }, countPlain), "tool_result")).toEqual([3, 5, 7, 9]);
    expect(indicesOf(compactConversation(messages, { ...UNLIMITED, toolResultWindow: 4 }, countPlain), "tool_result")).toEqual([3]);
    expect(compactConversation(messages, { ...UNLIMITED, toolResultWindow: 5 }, countPlain).pruned).toEqual([]);
  });

  it("rejects invalid options with a RangeError naming the option", () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ budgetTokens: 0 }, /budgetTokens/],
      [{ budgetTokens: -5 }, /budgetTokens/],
      [{ budgetTokens: 1.5 }, /budgetTokens/],
      [{ budgetTokens: Number.NaN }, /budgetTokens/],
      [{ budgetTokens: "100" }, /budgetTokens/],
      [{ budgetTokens: 100, toolResultWindow: -1 }, /toolResultWindow/],
      [{ budgetTokens: 100, toolResultWindow: 1.5 }, /toolResultWindow/],
      [{ budgetTokens: 100, keepRecentMessages: 0 }, /keepRecentMessages/],
      [{ budgetTokens: 100, targetRatio: 0 }, /targetRatio/],
      [{ budgetTokens: 100, targetRatio: 1.1 }, /targetRatio/],
    ];
    for (const [options, field] of bad) {
      const run = () => compactConversation(messages, options as never, countPlain);
      expect(run).toThrow(RangeError);
      expect(run).toThrow(field);
    }
    expect(() => compactConversation([null as never], UNLIMITED, countPlain)).toThrow("messages[0] is not an object");
  });
});

describe("compactConversation: (c) turns", () => {
  // 16 messages: system (10 tokens), then 7 turns of a 57-token question and an 82-token answer, then a question:
  // 1040 tokens. Units: [3,5) [5,7) [7,9) [9,11) [11,13) [13,15) [15]; with the last 4 messages kept, 4 can go.
  const messages = chatConversation(7);

  it("drops the fewest oldest middle turns with targetRatio 1, keeping the system prompt, first exchange and recent turns", () => {
    expect(countPlain(messages)).toBe(1040);
    const result = compactConversation(messages, { budgetTokens: 800, targetRatio: 1 }, countPlain);
    expect(result.pruned).toEqual([{ kind: "turns", messageIndices: [3, 4, 5, 6], tokensSaved: 278 }]);
    expect(result).toMatchObject({ tokensBefore: 1040, tokensAfter: 762, tokensSaved: 278, overBudget: false });
    expect(result.messages).toEqual(messages.filter((_, index) => index < 3 || index > 6));
    expect(describeCompaction(result)).toBe("auto compaction: 1040 -> 762 tokens (saved 278): turns [3-6] -278");
  });

  it("drops down to targetRatio * budget, so the following turns fit without dropping again", () => {
    // The request before the last answer (901 tokens) was the first over 800: it dropped to at most 600 (3 turns).
    // This one then fits at 623 without dropping more.
    const result = compactConversation(messages, { budgetTokens: 800 }, countPlain);
    expect(indicesOf(result, "turns")).toEqual([3, 4, 5, 6, 7, 8]);
    expect(result.tokensAfter).toBe(623);
    const next = compactConversation([...messages, { role: "assistant", content: "a".repeat(70) }, { role: "user", content: "q".repeat(50) }], { budgetTokens: 800 }, countPlain);
    expect(indicesOf(next, "turns")).toEqual([3, 4, 5, 6, 7, 8]);
    expect(next.tokensAfter).toBe(762);
  });

  it("reports overBudget when even dropping every droppable turn does not fit", () => {
    const result = compactConversation(messages, { budgetTokens: 100 }, countPlain);
    expect(indicesOf(result, "turns")).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    expect(keptIndices(messages, result)).toEqual([0, 1, 2, 11, 12, 13, 14, 15]);
    expect(result).toMatchObject({ tokensAfter: 484, overBudget: true });
    expect(describeCompaction(result)).toMatch(/; still over budget$/);
  });

  it("drops whole agentic steps: a tool call is never separated from its result", () => {
    const conversation = agenticConversation(12);
    const budget = 1500;
    for (const targetRatio of [1, 0.75]) {
      const result = compactConversation(conversation, { budgetTokens: budget, targetRatio }, countPlain);
      const kept = keptIndices(conversation, result);
      expect(indicesOf(result, "turns").length).toBeGreaterThan(0);
      expect(result.tokensAfter).toBeLessThanOrEqual(budget);
      expect(result.tokensAfter).toBe(countPlain(result.messages));
      // System prompt, the task and its first step, and the last 4 messages stay.
      expect(kept.slice(0, 4)).toEqual([0, 1, 2, 3]);
      expect(kept.slice(-4)).toEqual([22, 23, 24, 25]);
      const callIds = new Set(result.messages.flatMap((message) => message.tool_calls?.map((call) => call.id) ?? []));
      const resultIds = new Set(result.messages.filter((message) => message.role === "tool").map((message) => message.tool_call_id));
      expect([...callIds].sort()).toEqual([...resultIds].sort());
    }
  });

  it("never drops the last user message, even inside the oldest droppable turn", () => {
    const conversation: ChatMessage[] = [
      ...agenticConversation(2),
      { role: "assistant", content: "Done with the first task." },
      { role: "user", content: "Now also update the changelog." },
      ...[3, 4, 5, 6, 7, 8, 9].flatMap(agenticStep),
    ];
    const lastUser = 7;
    expect(conversation[lastUser]!.role).toBe("user");
    const result = compactConversation(conversation, { budgetTokens: 1200 }, countPlain);
    const dropped = indicesOf(result, "turns");
    expect(dropped).toContain(lastUser + 1);
    expect(dropped).not.toContain(lastUser);
    expect(result.messages).toContain(conversation[lastUser]);
    expect(result.overBudget).toBe(false);
  });
});

describe("compactConversation: monotone decisions and one pruned span per turn", () => {
  const prunedSets = (result: CompactionResult) => ({
    reasoning: indicesOf(result, "reasoning"),
    tool_result: indicesOf(result, "tool_result"),
    turns: indicesOf(result, "turns"),
  });

  function expectSuperset(previous: CompactionResult, next: CompactionResult): void {
    const before = prunedSets(previous);
    const after = prunedSets(next);
    for (const kind of ["reasoning", "tool_result", "turns"] as const) {
      for (const index of before[kind]) expect(after[kind]).toContain(index);
    }
  }

  it("an agentic conversation growing step by step prunes a superset each turn, one contiguous span more", () => {
    let previous: CompactionResult | undefined;
    let previousLength = 0;
    for (let steps = 1; steps <= 8; steps++) {
      const conversation = agenticConversation(steps);
      const result = compactConversation(conversation, UNLIMITED, countPlain);
      expect(result.messages.length).toBe(conversation.length);
      if (previous) {
        expectSuperset(previous, result);
        // The earlier messages render as before, minus one contiguous span; the new step is appended after them.
        const before = renderPlain(previous.messages);
        const appended = renderPlain(result.messages.slice(previousLength));
        const after = renderPlain(result.messages);
        expect(after.endsWith(appended)).toBe(true);
        const head = after.slice(0, after.length - appended.length);
        const split = sectionSplit(before, head);
        expect(split.prefix + split.suffix).toBe(head.length);
        expect(split.prefix + split.pruned + split.suffix).toBe(before.length);
        // From the third step on, the tool result two steps back leaves the window: exactly its content minus "}".
        expect(split.pruned).toBe(steps >= 3 ? fileContent(steps - 2).length - 1 : 0);
        if (split.pruned > 0) expect(split.suffix).toBeGreaterThan(8);
      }
      previous = result;
      previousLength = conversation.length;
    }
  });

  it("turn dropping only grows as the conversation grows, and drops rarely thanks to the target ratio", () => {
    let previous: CompactionResult | undefined;
    let growths = 0;
    for (let steps = 1; steps <= 30; steps++) {
      const result = compactConversation(agenticConversation(steps), { budgetTokens: 1500 }, countPlain);
      expect(result.tokensAfter).toBeLessThanOrEqual(1500);
      if (previous) {
        expectSuperset(previous, result);
        if (indicesOf(result, "turns").length > indicesOf(previous, "turns").length) growths++;
      }
      previous = result;
    }
    expect(growths).toBeGreaterThan(0);
    expect(growths).toBeLessThanOrEqual(8);
  });

  it("keeps dropped turns dropped when a new user message makes the conversation shrink", () => {
    const longReasoning = "r".repeat(600);
    const turn: ChatMessage[] = [...chatConversation(4)];
    for (const id of ["s1", "s2"]) {
      turn.push(
        { role: "assistant", content: "", reasoning_content: longReasoning, tool_calls: [{ id, type: "function", function: { name: "run", arguments: "{}" } }] },
        { role: "tool", tool_call_id: id, content: "ok" },
      );
    }
    const options = { budgetTokens: 1500 };
    const first = compactConversation(turn, options, countPlain);
    expect(indicesOf(first, "turns").length).toBeGreaterThan(0);
    const grown = [...turn, { role: "assistant" as const, content: "Done." }, { role: "user" as const, content: "Thanks." }];
    const second = compactConversation(grown, options, countPlain);
    expectSuperset(first, second);
    // Without the replay, nothing would need dropping now: the reasoning is gone and everything fits.
    expect(compactConversation(grown, UNLIMITED, countPlain).tokensAfter).toBeLessThanOrEqual(1500);
    expect(indicesOf(second, "turns")).toEqual(indicesOf(first, "turns"));
  });
});

describe("compactConversation: inputs and token counters", () => {
  it("never modifies its input", () => {
    const conversation: ChatMessage[] = [
      ...chatConversation(3).slice(0, -1),
      { role: "assistant", content: "x", reasoning_content: "old thoughts" },
      { role: "user", content: "go" },
      ...[1, 2, 3, 4, 5, 6].flatMap(agenticStep),
    ];
    const snapshot = structuredClone(conversation);
    const frozen = conversation.map((message) => Object.freeze({ ...message }));
    const result = compactConversation(frozen, { budgetTokens: 900 }, countPlain);
    expect(result.pruned.map((part) => part.kind)).toEqual(["reasoning", "tool_result", "turns"]);
    compactConversation(conversation, { budgetTokens: 900 }, countPlain);
    expect(conversation).toEqual(snapshot);
  });

  it("returns a list it counted, so an engine can reuse that rendering", () => {
    for (const [conversation, budget] of [[chatConversation(2), 5000], [agenticConversation(4), Infinity], [chatConversation(7), 800], [chatConversation(7), 100]] as const) {
      const seen = new WeakMap<readonly ChatMessage[], number>();
      const remember = (messages: readonly ChatMessage[]): number => {
        const count = countPlain(messages);
        seen.set(messages, count);
        return count;
      };
      const result = compactConversation(conversation, { budgetTokens: budget }, remember);
      expect(seen.get(result.messages)).toBe(result.tokensAfter);
    }
  });

  it("decides the same with a text counter as with template probes alone", () => {
    for (const steps of [6, 12, 20]) {
      const conversation = agenticConversation(steps);
      const options = { budgetTokens: 1400 };
      const viaProbes = compactConversation(conversation, options, countPlain);
      const viaText = compactConversation(conversation, options, countPlain, (text) => text.length);
      expect(viaText).toEqual(viaProbes);
    }
  });

  it("still fits the budget when the template rejects the estimate's probe conversations", () => {
    const strict = (messages: readonly ChatMessage[]): number => {
      if (messages[0]?.role !== "system") throw new Error("the first message must be the system prompt");
      return countPlain(messages);
    };
    const conversation = agenticConversation(20);
    const result = compactConversation(conversation, { budgetTokens: 1500 }, strict);
    expect(result.tokensAfter).toBeLessThanOrEqual(1500);
    expect(result.tokensAfter).toBe(countPlain(result.messages));
    expect(compactConversation(conversation, { budgetTokens: 1500 }, strict)).toEqual(result);
  });
});
