// A small seeded PRNG (xoshiro128**) so that a seed reproduces a run exactly, and a source of fresh seeds.

import { randomFillSync } from "node:crypto";

/**
 * xoshiro128** (Blackman & Vigna): 128 bits of state, 32-bit outputs, period 2^128 - 1.
 * The state is derived from a seed with splitmix32, so nearby seeds give unrelated streams.
 */
export class SeededRandom {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;

  /** @param seed any safe integer (negative seeds are taken as their 64-bit two's complement). */
  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
    const bits = BigInt.asUintN(64, BigInt(seed));
    let mix = Number(bits & 0xffffffffn) ^ Math.imul(Number(bits >> 32n), 0x9e3779b9);
    const next = (): number => {
      mix = (mix + 0x9e3779b9) | 0;
      let z = mix ^ (mix >>> 16);
      z = Math.imul(z, 0x21f0aaad);
      z ^= z >>> 15;
      z = Math.imul(z, 0x735a2d97);
      return (z ^ (z >>> 15)) >>> 0;
    };
    this.setState(next(), next(), next(), next());
  }

  /** Builds a generator from an explicit state (for tests against published vectors). */
  static fromState(s0: number, s1: number, s2: number, s3: number): SeededRandom {
    const random = new SeededRandom(0);
    random.setState(s0, s1, s2, s3);
    return random;
  }

  /** The next 32-bit unsigned integer. */
  nextUint32(): number {
    const s1 = this.s1;
    const result = Math.imul(rotateLeft(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotateLeft(this.s3, 11);
    return result;
  }

  /** A uniform number in [0, 1) with 32 bits of resolution. */
  nextFloat(): number {
    return this.nextUint32() / 4294967296;
  }

  private setState(s0: number, s1: number, s2: number, s3: number): void {
    // NOTE: xoshiro must never have an all-zero state.
    if ((s0 | s1 | s2 | s3) === 0) s0 = 1;
    this.s0 = s0 | 0;
    this.s1 = s1 | 0;
    this.s2 = s2 | 0;
    this.s3 = s3 | 0;
  }
}

/** A fresh random seed in [0, 2^32) from the OS, for runs that did not ask for one. */
export function randomSeed(): number {
  const word = new Uint32Array(1);
  randomFillSync(word);
  return word[0];
}

function rotateLeft(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
