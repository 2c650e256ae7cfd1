// Compiled constraints by spec, so that requests with the same schema or tools share one automaton and its cached
// token masks. Least recently used specs are dropped past `capacity`, and so is an automaton that grew past
// `maxStates` (its requests in flight keep it; the next request starts a fresh one).
import type { Tokenizer } from "../tokenizer/tokenizer.js";
import type { ConstraintSpec } from "./answer.js";
import { CompiledConstraint } from "./constraint.js";

/** An LRU cache of compiled constraints for one model's vocabulary. */
export class ConstraintCache {
  private readonly entries = new Map<string, CompiledConstraint>();

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly vocabularySize: number,
    private readonly capacity = 32,
    private readonly maxStates = 50_000,
  ) {}

  /**
   * The compiled constraint of `spec`, compiled now if it is not cached.
   * @throws SchemaError or EmptyGrammarError from compilation.
   */
  get(spec: ConstraintSpec): CompiledConstraint {
    const key = JSON.stringify(spec);
    let entry = this.entries.get(key);
    if (entry && entry.automaton.stateCount > this.maxStates) entry = undefined;
    if (entry) this.entries.delete(key); // re-inserted below as the most recent
    else entry = new CompiledConstraint(spec, this.tokenizer, this.vocabularySize);
    this.entries.set(key, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }

  get size(): number {
    return this.entries.size;
  }
}
