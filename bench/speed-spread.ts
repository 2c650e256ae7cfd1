// Repeated speed measurements as a median with its min-max spread, and the ratio of two series measured in the same
// rounds: on two shared cores single runs vary by 30% or more, so no figure goes out without its spread.
import { median } from "./bench-models.js";

/** The median of repeated measurements with the smallest and largest. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** The median, min and max of `values` (NaN for none). */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/**
 * `numerator` against `denominator`, measured in the same rounds: the ratio of the medians, with the smallest and
 * largest ratio of one round's pair (drift on the machine moves both members of a pair alike).
 */
export function pairedRatio(numerator: readonly number[], denominator: readonly number[]): Spread {
  const rounds = Math.min(numerator.length, denominator.length);
  const ratios = Array.from({ length: rounds }, (_, round) => numerator[round] / denominator[round]);
  if (rounds === 0) return spread([]);
  return { median: median(numerator) / median(denominator), min: Math.min(...ratios), max: Math.max(...ratios) };
}

/** "66.2 (60.1-70.3)"; one value alone when there is no spread to show. */
export function formatSpread(value: Spread, digits = 1): string {
  if (Number.isNaN(value.median)) return "-";
  if (value.min === value.max) return value.median.toFixed(digits);
  return `${value.median.toFixed(digits)} (${value.min.toFixed(digits)}-${value.max.toFixed(digits)})`;
}

/** "0.36x (0.33-0.40)". */
export function formatRatio(value: Spread): string {
  if (Number.isNaN(value.median)) return "-";
  if (value.min === value.max) return `${value.median.toFixed(2)}x`;
  return `${value.median.toFixed(2)}x (${value.min.toFixed(2)}-${value.max.toFixed(2)})`;
}
