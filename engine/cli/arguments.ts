// Command-line argument checks that name the flag at fault.

/** A command-line mistake: printed with the usage text, exit status 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Parses a finite number flag, or returns the default when absent. */
export function parseNumber(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number)) throw new UsageError(`${flag} must be a number, got '${value}'`);
  return number;
}

/** Parses an integer flag at least `minimum`, or returns the default when absent. */
export function parseInteger(flag: string, value: string | undefined, fallback: number, minimum: number): number {
  const number = parseNumber(flag, value, fallback);
  if (!Number.isSafeInteger(number) || number < minimum) throw new UsageError(`${flag} must be an integer >= ${minimum}, got '${value}'`);
  return number;
}

/** Parses --backend: wasm, webgpu or auto (the default: WebGPU when a hardware GPU adapter is present). */
export function parseBackend(value: string | undefined): "wasm" | "webgpu" | "auto" {
  if (value === undefined) return "auto";
  if (value === "wasm" || value === "webgpu" || value === "auto") return value;
  throw new UsageError(`--backend must be wasm, webgpu or auto, got '${value}'`);
}

/** The --simd flag: which build of the WebAssembly kernels runs (default auto). */
export function parseSimd(value: string | undefined): "auto" | "relaxed" | "plain" {
  if (value === undefined) return "auto";
  if (value === "auto" || value === "relaxed" || value === "plain") return value;
  throw new UsageError(`--simd must be auto, relaxed or plain, got '${value}'`);
}

