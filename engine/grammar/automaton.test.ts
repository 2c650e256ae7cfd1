// The grammar automaton on its own: a grammar that admits nothing is refused when the automaton is built, whether no
// rule can complete or no first byte is allowed; and building it is linear in the grammar.
import { describe, expect, it } from "vitest";
import { EmptyGrammarError, GrammarAutomaton } from "./automaton.js";
import { type Grammar, GrammarBuilder } from "./grammar.js";
import type { Lexeme } from "./lexemes/lexeme.js";

/** A lexeme that claims to be satisfiable but refuses every byte: what a lexeme with a wrong satisfiable() looks like. */
const REFUSES_EVERYTHING: Lexeme = {
  label: "nothing",
  start: 0,
  step: () => -1,
  accepts: () => false,
  canContinue: () => true,
};

describe("GrammarAutomaton", () => {
  it("refuses a grammar whose start rule cannot complete", () => {
    const b = new GrammarBuilder();
    const loop = b.declare("loop");
    b.define(loop, [[b.literal("a"), b.ref(loop)]]);
    expect(() => new GrammarAutomaton(b.build(loop))).toThrow(EmptyGrammarError);
  });

  it("refuses a grammar whose first byte is allowed nowhere, instead of masking every token later", () => {
    const b = new GrammarBuilder();
    const start = b.rule("start", [[b.lexeme(REFUSES_EVERYTHING)], [b.lexeme(REFUSES_EVERYTHING), b.literal("x")]]);
    expect(() => new GrammarAutomaton(b.build(start))).toThrow(EmptyGrammarError);
    // An empty output is an output: the same lexeme beside an empty alternative is fine.
    const c = new GrammarBuilder();
    const optional = c.rule("start", [[], [c.lexeme(REFUSES_EVERYTHING)]]);
    expect(new GrammarAutomaton(c.build(optional)).initial.accepting).toBe(true);
  });
});

describe("building the automaton is linear in the grammar", () => {
  it("finds the productive rules of a long chain looking at each rule a few times (a fixed point over all rules was quadratic)", () => {
    // rule i ::= "x" rule i+1 | ... and only the last rule ends: each pass of a fixed point would settle one rule.
    const n = 300;
    const b = new GrammarBuilder();
    const rules = Array.from({ length: n }, (_, i) => b.declare(`r${i}`));
    rules.forEach((rule, i) => b.define(rule, i === n - 1 ? [[b.literal("x")]] : [[b.literal("x"), b.ref(rules[i + 1]!)]]));
    const grammar = b.build(rules[0]!);
    let reads = 0;
    const counted = new Proxy(grammar.rules as Array<unknown>, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const automaton = new GrammarAutomaton({ ...grammar, rules: counted } as Grammar);
    expect(automaton.stepBytes(automaton.initial, new TextEncoder().encode("x".repeat(n)))?.accepting).toBe(true);
    expect(reads).toBeLessThan(5 * n);
  });

  it("asks a lexeme shared by many positions whether it is satisfiable once", () => {
    let calls = 0;
    const digit: Lexeme = {
      label: "digit",
      start: 0,
      step: (state, byte) => (state === 0 && byte >= 0x30 && byte <= 0x39 ? 1 : -1),
      accepts: (state) => state === 1,
      canContinue: (state) => state === 0,
      satisfiable: () => {
        calls++;
        return true;
      },
    };
    const b = new GrammarBuilder();
    const start = b.rule("start", Array.from({ length: 500 }, (_, i) => [b.literal(`k${i}=`), b.lexeme(digit)]));
    new GrammarAutomaton(b.build(start));
    expect(calls).toBe(1);
  });
});
