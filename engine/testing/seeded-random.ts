// A small seeded generator (mulberry32) for workloads and fuzz tests, so every run and every failure reproduces.

/** Uniform numbers in [0, 1) from a 32-bit seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` deterministic token ids from the ordinary vocabulary (300..20299, clear of special tokens), the same for
 * the same seed: prompts for engine tests.
 */
export function deterministicTokens(seed: number, count: number): number[] {
  let state = seed * 2654435761;
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return 300 + (state % 20000);
  });
}
