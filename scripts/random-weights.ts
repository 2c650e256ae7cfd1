// The seeded random number stream behind every generated weight: fast, deterministic, one stream per tensor.
// NOTE: changing anything here changes every generated model; bump GENERATOR_VERSION in generate-model.ts.

/** A 32-bit PRNG state (mulberry32): one per tensor, advanced as values are drawn. */
export interface RandomStream {
  state: number;
}

/** FNV-1a over the UTF-16 code units of a string, as an unsigned 32-bit integer. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The stream for one tensor of one model: it depends only on the seed and the tensor's Hugging Face name,
 * so every format and dtype draws the same values, whatever order the tensors are written in.
 */
export function tensorStream(seed: number, tensorName: string): RandomStream {
  return { state: fnv1a(`${seed >>> 0}:${tensorName}`) };
}

/**
 * Fills `out` with values drawn uniformly from [center - halfWidth, center + halfWidth), continuing `stream`.
 * Uniform (not Gaussian) because it is one multiply per value; a uniform of half-width a has std a/sqrt(3).
 */
export function fillUniform(out: Float32Array, stream: RandomStream, center: number, halfWidth: number): void {
  let a = stream.state | 0;
  const scale = (2 * halfWidth) / 4294967296;
  const offset = center - halfWidth;
  for (let i = 0; i < out.length; i++) {
    // mulberry32
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out[i] = offset + ((t ^ (t >>> 14)) >>> 0) * scale;
  }
  stream.state = a;
}

/** Advances `stream` past `count` values without drawing them (mulberry32's state steps by a constant per value). */
export function skipStream(stream: RandomStream, count: number): void {
  // Math.imul wraps count * step mod 2^32, which is what `count` single steps add up to.
  stream.state = (stream.state + Math.imul(count, 0x6d2b79f5)) | 0;
}
