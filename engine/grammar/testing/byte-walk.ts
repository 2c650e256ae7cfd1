// Random documents from a grammar automaton without a model: a seeded walk over allowed bytes that leans towards
// closing what is open, so that most walks finish. Tests use it to check that every state has a way on (no dead
// ends) and that finished documents validate.
import type { GrammarAutomaton, MatchState } from "../automaton.js";

/** Bytes that close or separate JSON values: preferred half of the time, so strings and containers end. */
const CLOSERS = new Set([0x22, 0x7d, 0x5d, 0x2c, 0x30, 0x31, 0x39, 0x74, 0x66, 0x6e]);

/** The result of one walk: its bytes, and whether it ended complete or ran out of steps. */
export interface Walk {
  bytes: Uint8Array;
  complete: boolean;
  /** A state with no allowed byte that could not end: a dead end (must never happen). */
  deadEnd: boolean;
}

/** One walk of at most `maxBytes` bytes, choosing with `random` (uniform in [0, 1)). */
export function randomWalk(automaton: GrammarAutomaton, random: () => number, maxBytes = 400): Walk {
  const out: number[] = [];
  let state: MatchState = automaton.initial;
  for (;;) {
    if (state.accepting && (state.finished || random() < 0.25)) return { bytes: Uint8Array.from(out), complete: true, deadEnd: false };
    if (out.length >= maxBytes) return { bytes: Uint8Array.from(out), complete: false, deadEnd: false };
    const allowed: number[] = [];
    for (let byte = 0; byte < 256; byte++) if (automaton.step(state, byte)) allowed.push(byte);
    if (allowed.length === 0) return { bytes: Uint8Array.from(out), complete: false, deadEnd: !state.accepting };
    const closers = allowed.filter((byte) => CLOSERS.has(byte));
    const pool = closers.length > 0 && random() < 0.6 ? closers : allowed;
    const byte = pool[Math.floor(random() * pool.length)]!;
    out.push(byte);
    state = automaton.step(state, byte)!;
  }
}
