// Matches a Grammar byte by byte, as a lazily built deterministic automaton: a state is the set of parse threads
// (a lexeme in progress and the stack of rule positions to return to), interned so that equal states are one object.
// Transitions are cached per state and byte, and so are token masks (TokenMasks), so a schema's common states cost a
// lookup after their first visit, across requests.
import type { Grammar, GrammarSymbol } from "./grammar.js";
import type { Lexeme } from "./lexemes/lexeme.js";

/** The grammar admits no output at all (every alternative of the start rule needs an unsatisfiable lexeme). */
export class EmptyGrammarError extends Error {
  override readonly name = "EmptyGrammarError";
}

/** Rule positions to return to, innermost first; interned (one object per distinct stack). */
class Stack {
  readonly pushes = new Map<number, Stack>();
  /** Threads on this stack, by position then lexeme state. */
  readonly threads = new Map<number, Map<number, Thread>>();
  constructor(readonly id: number, readonly returnTo: number, readonly parent: Stack | null) {}
}

/** A lexeme in progress at a grammar position, on a stack. */
interface Thread {
  readonly id: number;
  readonly position: number;
  readonly lexeme: Lexeme;
  readonly lexemeState: number;
  readonly stack: Stack;
}

/** One state of the automaton: where every live parse can be after the bytes so far. */
export class MatchState {
  /** Next states by byte (null: the byte is not allowed), filled as they are asked for. */
  readonly transitions: Array<MatchState | null | undefined> = new Array(256);
  /** This state's token mask, once a TokenMasks computed it (keyed by the masks' vocabulary). */
  mask: Uint32Array | undefined;
  constructor(
    readonly id: number,
    readonly threads: readonly Thread[],
    /** The whole output may end here. */
    readonly accepting: boolean,
  ) {}

  /** Nothing may follow: the output is complete and no byte can extend it. */
  get finished(): boolean {
    return this.threads.length === 0;
  }
}

const END = -1;

/** The automaton of one grammar: build once (per schema), share across requests. */
export class GrammarAutomaton {
  /** Symbol at each position; END closes an alternative. */
  private readonly symbols: Array<GrammarSymbol | typeof END> = [];
  /** First position of each alternative of each rule (productive alternatives only). */
  private readonly alternatives: number[][] = [];
  private readonly root = new Stack(0, END, null);
  private stackCount = 1;
  private threadCount = 0;
  private readonly states = new Map<string, MatchState>();
  readonly initial: MatchState;
  /** The vocabulary whose token masks are cached on this automaton's states (set by TokenMasks). */
  vocabulary: object | undefined;

  constructor(readonly grammar: Grammar) {
    const productive = productiveRules(grammar);
    if (!productive[grammar.start]) throw new EmptyGrammarError(`the grammar admits no output (rule ${grammar.names[grammar.start]} cannot be completed)`);
    for (const alternatives of grammar.rules) {
      const starts: number[] = [];
      for (const sequence of alternatives) {
        if (!sequence.every((symbol) => symbolProductive(symbol, productive))) continue;
        starts.push(this.symbols.length);
        this.symbols.push(...sequence, END);
      }
      this.alternatives.push(starts);
    }
    const threads = new Set<Thread>();
    const accepting = this.closeRule(grammar.start, this.root, threads, new Set());
    this.initial = this.state(threads, accepting);
    // Lexemes promise never to enter a state they cannot complete; one whose first byte is refused everywhere broke
    // that promise (or claimed to be satisfiable when it is not): refuse now rather than mask every token later.
    if (!accepting && !Array.from({ length: 256 }, (_, byte) => this.step(this.initial, byte)).some((next) => next !== null)) {
      throw new EmptyGrammarError(`the grammar admits no output (no first byte is allowed by rule ${grammar.names[grammar.start]})`);
    }
  }

  /** Distinct states built so far (for tests and cache statistics). */
  get stateCount(): number {
    return this.states.size;
  }

  /** The state after `byte`, or null when the byte is not allowed. */
  step(state: MatchState, byte: number): MatchState | null {
    const cached = state.transitions[byte];
    if (cached !== undefined) return cached;
    const threads = new Set<Thread>();
    const visited = new Set<string>();
    let accepting = false;
    for (const thread of state.threads) {
      const next = thread.lexeme.step(thread.lexemeState, byte);
      if (next < 0) continue;
      if (thread.lexeme.canContinue(next)) threads.add(this.thread(thread.position, next, thread.stack));
      if (thread.lexeme.accepts(next) && this.close(thread.position + 1, thread.stack, threads, visited)) accepting = true;
    }
    const result = threads.size === 0 && !accepting ? null : this.state(threads, accepting);
    state.transitions[byte] = result;
    return result;
  }

  /** The state after all of `bytes`, or null at the first byte not allowed. */
  stepBytes(state: MatchState, bytes: Uint8Array): MatchState | null {
    let current: MatchState | null = state;
    for (let i = 0; i < bytes.length && current; i++) current = this.step(current, bytes[i]!);
    return current;
  }

  /** Expands position `position` on `stack` into threads (at lexemes); true when the whole grammar can end. */
  private close(position: number, stack: Stack, out: Set<Thread>, visited: Set<string>): boolean {
    const key = `${position},${stack.id}`;
    if (visited.has(key)) return false;
    visited.add(key);
    const symbol = this.symbols[position]!;
    if (symbol === END) return stack.parent === null ? true : this.close(stack.returnTo, stack.parent, out, visited);
    if ("lexeme" in symbol) {
      out.add(this.thread(position, symbol.lexeme.start, stack));
      return false;
    }
    // A rule at the end of an alternative returns where this alternative would: no push (keeps repetition by right
    // recursion at a constant stack depth, so its states repeat and their masks are reused).
    const returnTo = position + 1;
    const inner = this.symbols[returnTo] === END ? stack : this.push(stack, returnTo);
    return this.closeRule(symbol.rule, inner, out, visited);
  }

  private closeRule(rule: number, stack: Stack, out: Set<Thread>, visited: Set<string>): boolean {
    let accepting = false;
    for (const start of this.alternatives[rule]!) if (this.close(start, stack, out, visited)) accepting = true;
    return accepting;
  }

  private push(stack: Stack, returnTo: number): Stack {
    let pushed = stack.pushes.get(returnTo);
    if (!pushed) {
      pushed = new Stack(this.stackCount++, returnTo, stack);
      stack.pushes.set(returnTo, pushed);
    }
    return pushed;
  }

  private thread(position: number, lexemeState: number, stack: Stack): Thread {
    let byState = stack.threads.get(position);
    if (!byState) {
      byState = new Map();
      stack.threads.set(position, byState);
    }
    let thread = byState.get(lexemeState);
    if (!thread) {
      const symbol = this.symbols[position] as { lexeme: Lexeme };
      thread = { id: this.threadCount++, position, lexeme: symbol.lexeme, lexemeState, stack };
      byState.set(lexemeState, thread);
    }
    return thread;
  }

  private state(threads: Set<Thread>, accepting: boolean): MatchState {
    const sorted = [...threads].sort((a, b) => a.id - b.id);
    const key = `${accepting ? "A" : ""}${sorted.map((thread) => thread.id).join(",")}`;
    let state = this.states.get(key);
    if (!state) {
      state = new MatchState(this.states.size, sorted, accepting);
      this.states.set(key, state);
    }
    return state;
  }
}

function symbolProductive(symbol: GrammarSymbol, productive: boolean[]): boolean {
  return "rule" in symbol ? productive[symbol.rule]! : lexemeSatisfiable(symbol.lexeme);
}

/** satisfiable() once per lexeme: a lexeme shared by thousands of positions (a number's bounds) may take a while. */
const satisfiableLexemes = new WeakMap<Lexeme, boolean>();
function lexemeSatisfiable(lexeme: Lexeme): boolean {
  if (!lexeme.satisfiable) return true;
  let satisfiable = satisfiableLexemes.get(lexeme);
  if (satisfiable === undefined) satisfiableLexemes.set(lexeme, (satisfiable = lexeme.satisfiable()));
  return satisfiable;
}

/**
 * Rules that derive some complete output (least fixed point), by a worklist: each alternative counts the rules it still
 * waits on, and a rule found productive wakes only the alternatives that use it, so the work is linear in the grammar
 * (iterating to a fixed point over all rules was quadratic on a long chain such as an object's members).
 */
function productiveRules(grammar: Grammar): boolean[] {
  const productive = grammar.rules.map(() => false);
  const waiting: number[] = []; // per alternative: rule references not yet known productive
  const owner: number[] = []; // per alternative: its rule
  const users: number[][] = grammar.rules.map(() => []); // per rule: alternatives referring to it, once per reference
  const ready: number[] = [];
  grammar.rules.forEach((alternatives, rule) => {
    for (const sequence of alternatives) {
      const alternative = owner.length;
      owner.push(rule);
      let count = 0;
      let impossible = false;
      for (const symbol of sequence) {
        if ("rule" in symbol) {
          users[symbol.rule]!.push(alternative);
          count++;
        } else if (!symbolProductive(symbol, productive)) impossible = true;
      }
      // A lexeme that admits nothing: the alternative never completes, whatever its rules do.
      waiting.push(impossible ? Infinity : count);
      if (count === 0 && !impossible) ready.push(rule);
    }
  });
  while (ready.length > 0) {
    const rule = ready.pop()!;
    if (productive[rule]) continue;
    productive[rule] = true;
    for (const alternative of users[rule]!) if (--waiting[alternative]! === 0) ready.push(owner[alternative]!);
  }
  return productive;
}
