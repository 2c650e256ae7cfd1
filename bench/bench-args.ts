// The command line of every benchmark: options parsed with node:util parseArgs, `--help`/`-h` answered with the
// bench's usage, and a bad command line (unknown option, missing value, stray argument, bad value) reported as one
// line naming the option plus the usage, exit status 2, instead of a stack trace.
import { writeSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";

/** The options of a parseArgs call (the type node:util does not export). */
export type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/** A command line a bench cannot run with; the message says what is wrong, naming the option. */
export class BenchArgumentError extends RangeError {
  override name = "BenchArgumentError";
}

/** Thrown by {@link parseBenchOptions} when the command line asks for help (`--help` or `-h`). */
export class BenchHelpRequest extends Error {
  override name = "BenchHelpRequest";
}

/** The parsed values of `options`, typed as node:util parseArgs types them in strict mode. */
export type BenchValues<O extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>>["values"];

const HELP: ParseArgsOptionsConfig = { help: { type: "boolean", short: "h" } };

/**
 * Parses `args` (the command line without node and the script) against `options`, strictly: no positional argument,
 * no unknown option, a value for every string option (one that starts with `-` only as `--name=-x`), none for a
 * boolean one. Defaults apply as in parseArgs.
 * @throws BenchHelpRequest when `--help` or `-h` is given (before any other check), BenchArgumentError on a bad
 * command line.
 */
export function parseBenchOptions<const O extends ParseArgsOptionsConfig>(options: O, args: readonly string[]): BenchValues<O> {
  if ("help" in options) throw new TypeError("a bench's options cannot define --help: bench-args answers it");
  // Not strict: parseArgs' own errors are long and name no bench; the tokens are checked here instead.
  const { values, tokens } = parseArgs({ args: [...args], options: { ...options, ...HELP }, strict: false, allowPositionals: true, tokens: true });
  if (tokens.some((token) => token.kind === "option" && token.name === "help")) throw new BenchHelpRequest("help requested");
  for (const token of tokens) {
    if (token.kind === "positional") throw new BenchArgumentError(`unexpected argument '${token.value}'`);
    if (token.kind !== "option") continue;
    const type = Object.hasOwn(options, token.name) ? options[token.name]!.type : undefined;
    if (type === undefined) throw new BenchArgumentError(`unknown option ${token.rawName}`);
    if (type === "string" && (token.value === undefined || (!token.inlineValue && token.value.startsWith("-")))) {
      throw new BenchArgumentError(`${token.rawName} needs a value`);
    }
    if (type === "boolean" && token.value !== undefined) throw new BenchArgumentError(`${token.rawName} takes no value, got '${token.value}'`);
  }
  return values as BenchValues<O>;
}

/**
 * One bench's command line: its name (as in `dist/bench/<name>.js`) and usage, which `--help` prints to stdout
 * (exit 0) and a bad command line prints to stderr after `<name>: <what is wrong>` (exit 2). The value checks name
 * the option and the value they refuse. Use them only while reading arguments, before anything is started: they
 * end the process.
 */
export class BenchCli {
  /**
   * @param name the bench's name, e.g. `decode-profile`.
   * @param usage the command and its options, e.g. `node dist/bench/decode-profile.js [--threads 2]`; lines after
   *   the first are indented to line up after `Usage: `.
   */
  constructor(readonly name: string, readonly usage: string) {}

  /** Parses the command line (process.argv without node and the script unless `args`), answering help and errors. */
  parse<const O extends ParseArgsOptionsConfig>(options: O, args: readonly string[] = process.argv.slice(2)): BenchValues<O> {
    return this.check(() => parseBenchOptions(options, args));
  }

  /**
   * Runs `read`, code that only reads the command line (e.g. a bench's own parser of a spec), and reports an error
   * it throws as a bad command line; a BenchHelpRequest prints the usage and exits 0.
   */
  check<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof BenchHelpRequest) {
        writeSync(1, `Usage: ${this.usage}\n`);
        process.exit(0);
      }
      if (error instanceof Error) this.fail(error.message);
      throw error;
    }
  }

  /** Reports `problem` (what is wrong with the command line, naming the option) and the usage on stderr; exit 2. */
  fail(problem: string): never {
    // writeSync: process.stderr may be asynchronous (a pipe on macOS) and the process exits at once.
    writeSync(2, `${this.name}: ${problem}\nUsage: ${this.usage}\n`);
    process.exit(2);
  }

  /** `value` (an option's text, or a number derived from options) as an integer from `min` to `max`, else fail. */
  integer(option: string, value: string | number, min = 1, max = Number.POSITIVE_INFINITY): number {
    const number = typeof value === "number" ? value : value.trim() === "" ? Number.NaN : Number(value);
    if (!Number.isInteger(number) || number < min || number > max) this.fail(`--${option} must be ${integerRange(min, max)}, got ${value}`);
    return number;
  }

  /** A comma-separated list of integers from `min` to `max` (at least one), else fail naming the list. */
  integers(option: string, text: string, min = 1, max = Number.POSITIVE_INFINITY): number[] {
    const numbers = text.split(",").map((item) => (item.trim() === "" ? Number.NaN : Number(item)));
    if (numbers.some((n) => !Number.isInteger(n) || n < min || n > max)) this.fail(`--${option} must be a comma-separated list of ${integerRange(min, max, true)}, got ${text}`);
    return numbers;
  }

  /** `value` if it is one of `allowed`, else fail listing them. */
  oneOf<const T extends string>(option: string, value: string, allowed: readonly T[]): T {
    if (!(allowed as readonly string[]).includes(value)) this.fail(`--${option} must be ${allowed.join(", ")}; got ${value}`);
    return value as T;
  }

  /** A comma-separated list, each item one of `allowed`, else fail naming the item. */
  someOf<const T extends string>(option: string, text: string, allowed: readonly T[]): T[] {
    const items = text.split(",");
    for (const item of items) if (!(allowed as readonly string[]).includes(item)) this.fail(`--${option} takes some of ${allowed.join(", ")}; got ${item}`);
    return items as T[];
  }
}

function integerRange(min: number, max: number, plural = false): string {
  const s = plural ? "s" : "";
  if (min === Number.NEGATIVE_INFINITY && max === Number.POSITIVE_INFINITY) return `${plural ? "" : "an "}integer${s}`;
  if (max === Number.POSITIVE_INFINITY) return min === 1 ? `${plural ? "" : "a "}positive integer${s}` : `${plural ? "" : "an "}integer${s} of at least ${min}`;
  return `${plural ? "" : "an "}integer${s} from ${min} to ${max}`;
}
