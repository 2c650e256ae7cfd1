// The conformance harnesses' error measure.

/** Normalised mean squared error of `actual` against `expected` (absolute when expected is all zero). */
export function nmse(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let error = 0;
  let norm = 0;
  for (let i = 0; i < expected.length; i++) {
    const difference = actual[i] - expected[i];
    error += difference * difference;
    norm += expected[i] * expected[i];
  }
  return norm > 0 ? error / norm : error;
}
