// The grammar that constrained decoding follows: rules of alternatives of symbol sequences, whose terminals are
// lexemes (literals, JSON strings and numbers with their bounds, whitespace, free text). Built by the schema and
// answer compilers, matched byte by byte by the GrammarAutomaton.
import type { Lexeme } from "./lexemes/lexeme.js";
import { LiteralLexeme } from "./lexemes/literal.js";

/** A terminal (lexeme) or a reference to a rule. */
export type GrammarSymbol = { lexeme: Lexeme } | { rule: number };

/** A context-free grammar over lexemes. Rule `start` derives the whole output. */
export interface Grammar {
  readonly rules: ReadonlyArray<ReadonlyArray<readonly GrammarSymbol[]>>;
  readonly names: readonly string[];
  readonly start: number;
}

/** Builds a grammar rule by rule; rules may be declared first and defined later (recursion). */
export class GrammarBuilder {
  private readonly rules: Array<GrammarSymbol[][] | undefined> = [];
  private readonly names: string[] = [];
  private readonly literals = new Map<string, GrammarSymbol>();
  /** One reference symbol per rule: symbols are immutable, and large schemas refer to rules hundreds of thousands of times. */
  private readonly refs: GrammarSymbol[] = [];

  /** A new rule, to be defined later with {@link define}. */
  declare(name: string): number {
    this.rules.push(undefined);
    this.names.push(name);
    return this.rules.length - 1;
  }

  /** Sets a declared rule's alternatives (an empty sequence is the empty alternative). */
  define(rule: number, alternatives: GrammarSymbol[][]): number {
    if (this.rules[rule] !== undefined) throw new Error(`rule ${this.names[rule]} is defined twice`);
    this.rules[rule] = alternatives;
    return rule;
  }

  /** Declares and defines a rule at once. */
  rule(name: string, alternatives: GrammarSymbol[][]): number {
    return this.define(this.declare(name), alternatives);
  }

  /** A reference to rule `rule`. */
  ref(rule: number): GrammarSymbol {
    return (this.refs[rule] ??= { rule });
  }

  /** A literal terminal (one lexeme per distinct text, shared). */
  literal(text: string): GrammarSymbol {
    let symbol = this.literals.get(text);
    if (!symbol) {
      symbol = { lexeme: new LiteralLexeme(text) };
      this.literals.set(text, symbol);
    }
    return symbol;
  }

  /** A terminal matched by `lexeme`. */
  lexeme(lexeme: Lexeme): GrammarSymbol {
    return { lexeme };
  }

  /** `symbols` or nothing, as a rule. */
  optional(name: string, symbols: GrammarSymbol[]): GrammarSymbol {
    return this.ref(this.rule(name, [[], symbols]));
  }

  /** The finished grammar, starting at `start`. */
  build(start: number): Grammar {
    const undefinedRule = this.rules.findIndex((alternatives) => alternatives === undefined);
    if (undefinedRule >= 0) throw new Error(`rule ${this.names[undefinedRule]} is declared but never defined`);
    return { rules: this.rules as GrammarSymbol[][][], names: [...this.names], start };
  }
}

/** The grammar as text, one rule per line (for errors and debugging). */
export function formatGrammar(grammar: Grammar): string {
  return grammar.rules.map((alternatives, rule) => `${grammar.names[rule]}#${rule} ::= ${alternatives.map((sequence) =>
    sequence.length === 0 ? "ε" : sequence.map((symbol) => "rule" in symbol ? `${grammar.names[symbol.rule]}#${symbol.rule}` : symbol.lexeme.label).join(" ")).join(" | ")}`).join("\n");
}
