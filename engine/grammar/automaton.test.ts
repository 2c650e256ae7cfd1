// The grammar automaton on its own: a grammar that admits nothing is refused when the automaton is built, whether no
// rule can complete or no first byte is allowed.
import { describe, expect, it } from "vitest";
import { EmptyGrammarError, GrammarAutomaton } from "./automaton.js";
import { GrammarBuilder } from "./grammar.js";
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
