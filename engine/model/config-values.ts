// Checks of single configuration values read from a model file, each error naming the file and the field.
import { ModelFileError } from "./errors.js";

/** `value` when it is a positive safe integer; otherwise a ModelFileError naming `field`. */
export function positiveInteger(path: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new ModelFileError(path, `${field} must be a positive integer, found ${JSON.stringify(value)}`);
  }
  return value;
}

/** `value` when it is a positive finite number; otherwise a ModelFileError naming `field`. */
export function positiveNumber(path: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new ModelFileError(path, `${field} must be a positive number, found ${JSON.stringify(value)}`);
  }
  return value;
}
