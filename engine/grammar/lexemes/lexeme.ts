// A lexeme is a terminal of the grammar with its own byte automaton: a literal, a JSON string or number under its
// schema's bounds, a whitespace run, free text up to a delimiter. The matcher asks it one byte at a time; states are
// small integers the lexeme interns, so that matcher states (and their cached token masks) compare by identity.

/** A terminal matched byte by byte. State ids are the lexeme's own; `start` is the state before any byte. */
export interface Lexeme {
  /** Shown in debugging output and grammar dumps, e.g. `"name"` or `string{0,64}`. */
  readonly label: string;
  readonly start: number;
  /**
   * The state after `byte`, or -1 when the byte cannot extend the lexeme. A lexeme must never return a state from
   * which it cannot still be completed: that is what keeps generation free of dead ends.
   */
  step(state: number, byte: number): number;
  /** The bytes so far form a whole lexeme (the grammar may move on). */
  accepts(state: number): boolean;
  /** Some byte may still extend the lexeme. */
  canContinue(state: number): boolean;
  /** Whether any byte string is a whole lexeme (absent: yes). Grammar alternatives with one that is not are dropped. */
  satisfiable?(): boolean;
  /**
   * Inside string content: how many more characters of plain content (whole UTF-8 characters other than `"`, `\` and
   * control characters) this state takes, any of them, each keeping the lexeme live (Infinity: no limit). Undefined
   * where the bytes themselves matter (a pattern, an escape, an excluded name): token masks then walk every token.
   */
  plainRoom?(state: number): number | undefined;
}

/** Interns state descriptions (strings) to dense ids, keeping the description for the lexeme to decode. */
export class StateTable<T> {
  private readonly ids = new Map<string, number>();
  readonly states: T[] = [];

  /** The id of the state keyed `key`, made from `make()` the first time. */
  intern(key: string, make: () => T): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.states.length;
      this.states.push(make());
      this.ids.set(key, id);
    }
    return id;
  }

  get(id: number): T {
    return this.states[id]!;
  }
}
