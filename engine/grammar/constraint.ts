// One request's constraint: follows the tokens it generates through the grammar automaton and tells the sampler which
// tokens may come next. The automaton and its cached masks are shared by every request with the same spec.
import type { Tokenizer } from "../tokenizer/tokenizer.js";
import { type ConstraintSpec, constraintGrammar } from "./answer.js";
import { GrammarAutomaton, type MatchState } from "./automaton.js";
import { type TokenMask, TokenMasks, maskHas } from "./token-masks.js";
import { tokenTrie } from "./token-trie.js";

/** A token the constraint did not allow was given to {@link TokenConstraint.accept}. */
export class ConstraintViolationError extends Error {
  override readonly name = "ConstraintViolationError";
}

/** A compiled constraint for one vocabulary: create a {@link TokenConstraint} per request with {@link start}. */
export class CompiledConstraint {
  readonly automaton: GrammarAutomaton;
  readonly masks: TokenMasks;

  /**
   * @param vocabularySize the width of the model's logits (may exceed the tokenizer's vocabulary).
   * @throws SchemaError for a schema outside the supported subset; EmptyGrammarError when nothing satisfies it.
   */
  constructor(readonly spec: ConstraintSpec, readonly tokenizer: Tokenizer, vocabularySize = tokenizer.vocabSize) {
    this.automaton = new GrammarAutomaton(constraintGrammar(spec));
    const endTokens = [...tokenizer.endOfGenerationIds].filter((id) => id < vocabularySize);
    this.masks = new TokenMasks(this.automaton, tokenTrie(tokenizer, vocabularySize), endTokens);
  }

  /** A fresh constraint at the start of the output. */
  start(): TokenConstraint {
    return new TokenConstraint(this);
  }
}

/** Where one generation is in its grammar. */
export class TokenConstraint {
  private state: MatchState;
  /** An end-of-generation token was accepted. */
  private ended = false;

  constructor(private readonly compiled: CompiledConstraint) {
    this.state = compiled.automaton.initial;
  }

  /** The tokens allowed next (never empty: some token is allowed until the output is finished). */
  allowed(): TokenMask {
    return this.compiled.masks.mask(this.state);
  }

  /**
   * Advances past `token`.
   * @throws ConstraintViolationError if the grammar does not allow it here.
   */
  accept(token: number): void {
    if (this.ended) throw new ConstraintViolationError(`token ${token} after the end of generation`);
    const { tokenizer } = this.compiled;
    if (tokenizer.isEndOfGeneration(token)) {
      if (!this.state.accepting) throw new ConstraintViolationError("end of generation before the constrained output is complete");
      this.ended = true;
      return;
    }
    const next = this.compiled.automaton.stepBytes(this.state, tokenizer.tokenBytes(token));
    if (!next || tokenizer.isSpecial(token)) {
      throw new ConstraintViolationError(`token ${token} (${JSON.stringify(tokenizer.decode([token]))}) does not continue the constrained output`);
    }
    this.state = next;
  }

  /** Whether `token` may come next. */
  allows(token: number): boolean {
    return maskHas(this.allowed(), token);
  }

  /** The output so far is a whole answer (it may end here). */
  get complete(): boolean {
    return this.state.accepting;
  }

  /** The output is complete and nothing may follow: generation should stop now. */
  get finished(): boolean {
    return this.ended || this.state.finished;
  }
}
