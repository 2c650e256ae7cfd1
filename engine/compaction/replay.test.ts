// The incremental replay of turn dropping against a from-scratch reference, on random conversations and sizes; and
// the clean-tail rule for tool results.

import { describe, expect, it } from "vitest";
import type { ChatMessage, ChatRole } from "../chat/messages.js";
import type { MessageVariant, SizeEstimate } from "./estimate.js";
import { resolveCompactionOptions } from "./options.js";
import { type ConversationPlan, droppableUnits, planConversation, unitEnd } from "./plan.js";
import { replayTurnDropping } from "./replay.js";
import { random } from "../../kernels/case.js";
import { EMPTY_WITHOUT_CLEAN_CUT_CHARS, prunedToolContent } from "./tool-content.js";

function randomConversation(next: () => number): ChatMessage[] {
  const roles: ChatRole[] = ["user", "assistant", "assistant", "tool", "tool", "system"];
  const messages: ChatMessage[] = next() < 0.7 ? [{ role: "system", content: "S" }] : [];
  const length = 1 + Math.floor(next() * 40);
  for (let index = 0; index < length; index++) {
    const role = roles[Math.floor(next() * roles.length)]!;
    const content = role === "tool" ? `result ${index}\nline two\nlast line` : `text ${index}`;
    const message: ChatMessage = { role, content };
    if (role === "assistant" && next() < 0.6) message.reasoning_content = `thinking ${index}`;
    messages.push(message);
  }
  return messages;
}

/** The replay's definition, evaluated from scratch at every request: O(n^2), obviously following the rules. */
function referenceReplay(plan: ConversationPlan, sizes: SizeEstimate, budget: number, target: number, keepRecent: number): { units: number; estimatedTokens: number } {
  let units = 0;
  let estimate = 0;
  const ends = [...plan.requestEnds, plan.length];
  for (const prefix of ends) {
    let pinned = -1;
    for (let index = 0; index < prefix; index++) if (plan.isUser[index]) pinned = index;
    const total = (dropped: number): number => {
      let sum = sizes.constant;
      for (let index = 0; index < prefix; index++) {
        if (index !== pinned && plan.unitOf[index]! >= 0 && plan.unitOf[index]! < dropped) continue;
        let variant: MessageVariant = "full";
        if (plan.reasoningPrunedFrom[index]! <= prefix) variant = "without-reasoning";
        if (plan.toolPrunedFrom[index]! <= prefix) variant = "pruned-tool";
        sum += sizes.size(index, variant);
      }
      return sum;
    };
    if (total(units) > budget) {
      const droppable = droppableUnits(plan, prefix, keepRecent);
      while (total(units) > target && units < droppable) units++;
    }
    estimate = total(units);
  }
  return { units, estimatedTokens: estimate };
}

describe("replayTurnDropping", () => {
  it("matches the from-scratch definition on random conversations", () => {
    const next = random(1234);
    let dropping = 0;
    for (let trial = 0; trial < 400; trial++) {
      const messages = randomConversation(next);
      const options = resolveCompactionOptions({
        budgetTokens: 20 + Math.floor(next() * 400),
        toolResultWindow: Math.floor(next() * 3),
        keepRecentMessages: 1 + Math.floor(next() * 5),
        targetRatio: next() < 0.3 ? 1 : 0.5 + next() * 0.5,
      });
      const plan = planConversation(messages, options.toolResultWindow);
      const full = messages.map(() => 1 + Math.floor(next() * 40));
      const sizes: SizeEstimate = {
        constant: Math.floor(next() * 10),
        size: (index, variant) => (variant === "full" ? full[index]! : Math.floor(full[index]! / 3)),
      };
      const actual = replayTurnDropping(plan, sizes, options);
      expect(actual).toEqual(referenceReplay(plan, sizes, options.budgetTokens, options.targetRatio * options.budgetTokens, options.keepRecentMessages));
      if (actual.units > 0) dropping++;
    }
    expect(dropping).toBeGreaterThan(50);
  });

  it("plans units that start at a user message or at an assistant step after tool results", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "S" },
      { role: "user", content: "task" },
      { role: "assistant", content: "", tool_calls: [] },
      { role: "tool", content: "r1" },
      { role: "assistant", content: "a" },
      { role: "assistant", content: "b" },
      { role: "tool", content: "r2" },
      { role: "tool", content: "r3" },
      { role: "assistant", content: "c" },
      { role: "user", content: "more" },
      { role: "assistant", content: "d" },
    ];
    const plan = planConversation(messages, 2);
    expect(plan.unitStarts).toEqual([4, 8, 9]);
    expect([0, 1, 2].map((unit) => [plan.unitStarts[unit], unitEnd(plan, unit)])).toEqual([[4, 8], [8, 9], [9, 11]]);
    expect(Array.from(plan.unitOf)).toEqual([-1, -1, -1, -1, 0, 0, 0, 0, 1, 2, 2]);
    expect(plan.requestEnds).toEqual([2, 4, 5, 8, 10]);
    expect(plan.lastUser).toBe(9);
  });
});

describe("prunedToolContent", () => {
  it("keeps the shortest tail that starts at a clean token boundary", () => {
    expect(prunedToolContent("export const a = 1;\nfunction f() {\n  return a;\n}")).toBe("}");
    expect(prunedToolContent('{"a":1,"b":"xyz"}')).toBe('"}');
    expect(prunedToolContent("build ok\nexit code: 0")).toBe(": 0");
    expect(prunedToolContent("line one\n\nline two")).toBe("line two");
    expect(prunedToolContent("first\r\nsecond")).toBe("second");
    expect(prunedToolContent("hello brave world")).toBe(" world");
    expect(prunedToolContent("caf\u00e9.")).toBe(".");
  });

  it("leaves short content without a clean cut as it is, and empties long content without one", () => {
    expect(prunedToolContent("")).toBeUndefined();
    expect(prunedToolContent("singleword")).toBeUndefined();
    expect(prunedToolContent("  indented output\nmore")).toBeUndefined();
    expect(prunedToolContent("\u{1F600}.")).toBeUndefined();
    expect(prunedToolContent("x".repeat(EMPTY_WITHOUT_CLEAN_CUT_CHARS))).toBe("");
    expect(prunedToolContent(` ${"y ".repeat(EMPTY_WITHOUT_CLEAN_CUT_CHARS)}`)).toBe("");
    expect(prunedToolContent(42 as unknown as string)).toBeUndefined();
  });
});
