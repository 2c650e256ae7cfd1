// Every benchmark's command line, against the build (npx tsc -p tsconfig.json): `--help` prints its usage and exits 0
// before loading anything, an unknown option is one line naming it plus the usage on stderr, exit 2, no stack trace.
// The benches are found by listing bench/, so a new one is covered without being named here.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BenchArgumentError, BenchHelpRequest, parseBenchOptions } from "./bench-args.js";

const BENCH_DIR = fileURLToPath(new URL(".", import.meta.url));
const DIST_DIR = join(BENCH_DIR, "..", "dist", "bench");
const RAW_PARSE_ARGS = /import\s*\{[^}]*\bparseArgs\b[^}]*\}\s*from\s*"node:(util)"/;

const sources = readdirSync(BENCH_DIR)
  .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && file !== "bench-args.ts")
  .map((file) => ({ name: file.slice(0, -3), text: readFileSync(join(BENCH_DIR, file), "utf8") }));

/** A bench with a command line: it reads arguments, or its header names its own `node dist/bench/<name>.js`. */
const clis = sources.filter(({ name, text }) => text.includes("new BenchCli(") || RAW_PARSE_ARGS.test(text) || text.includes(`node dist/bench/${name}.js`)).map(({ name }) => name);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBench(name: string, args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(DIST_DIR, `${name}.js`), ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_NO_WARNINGS: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => { stderr += chunk; });
    // --help must answer before any model or server: far less than this on any machine.
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("bench command lines", () => {
  it("finds the benches and none parses arguments around bench-args", () => {
    expect(clis.length).toBeGreaterThanOrEqual(25);
    expect(clis).toContain("decode-profile");
    expect(sources.filter(({ text }) => RAW_PARSE_ARGS.test(text)).map(({ name }) => name)).toEqual([]);
    const missing = clis.filter((name) => !existsSync(join(DIST_DIR, `${name}.js`)));
    expect(missing, "build first: npx tsc -p tsconfig.json").toEqual([]);
  });

  it("--help prints the usage and exits 0; an unknown option prints one line and the usage and exits 2", async () => {
    // All at once: each is a node start and the bench's imports, nothing more.
    const outcomes = await Promise.all(clis.map(async (name) => ({ name, help: await runBench(name, ["--help"]), unknown: await runBench(name, ["--no-such-option"]) })));
    for (const { name, help, unknown } of outcomes) {
      expect({ name, code: help.code, stderr: help.stderr }).toEqual({ name, code: 0, stderr: "" });
      expect(help.stdout, name).toMatch(new RegExp(`^Usage: node dist/bench/${name}\\.js`));
      expect({ name, code: unknown.code, stdout: unknown.stdout }).toEqual({ name, code: 2, stdout: "" });
      // One line naming the option, then exactly the usage --help prints: no stack trace, no Error.
      expect(unknown.stderr, name).toBe(`${name}: unknown option --no-such-option\n${help.stdout}`);
    }
  });

  it("-h is --help too, and a missing value or a stray argument is an error naming it", async () => {
    const [short, missing, stray] = await Promise.all([runBench("usage-rollup", ["-h"]), runBench("usage-rollup", ["--rounds"]), runBench("usage-rollup", ["300"])]);
    expect(short.code).toBe(0);
    expect(short.stdout).toMatch(/^Usage: node dist\/bench\/usage-rollup\.js/);
    expect([missing.code, missing.stderr.split("\n")[0]]).toEqual([2, "usage-rollup: --rounds needs a value"]);
    expect([stray.code, stray.stderr.split("\n")[0]]).toEqual([2, "usage-rollup: unexpected argument '300'"]);
  });
});

describe("parseBenchOptions", () => {
  const options = { threads: { type: "string", default: "2" }, levels: { type: "string" }, quick: { type: "boolean" } } as const;

  it("reads options with their defaults", () => {
    expect(parseBenchOptions(options, [])).toEqual({ threads: "2" });
    expect(parseBenchOptions(options, ["--threads", "4", "--levels=1,2", "--quick"])).toEqual({ threads: "4", levels: "1,2", quick: true });
    expect(parseBenchOptions(options, ["--levels=-1"])).toEqual({ threads: "2", levels: "-1" });
  });

  it("answers --help and -h before any other check", () => {
    expect(() => parseBenchOptions(options, ["--bogus", "--help"])).toThrow(BenchHelpRequest);
    expect(() => parseBenchOptions(options, ["-h"])).toThrow(BenchHelpRequest);
  });

  it("refuses unknown options, missing values, values of switches and positional arguments, naming them", () => {
    const refusal = (args: string[]) => {
      try {
        parseBenchOptions(options, args);
      } catch (error) {
        expect(error).toBeInstanceOf(BenchArgumentError);
        return (error as Error).message;
      }
      throw new Error(`${args.join(" ")} was accepted`);
    };
    expect(refusal(["--bogus"])).toBe("unknown option --bogus");
    expect(refusal(["-x"])).toBe("unknown option -x");
    expect(refusal(["--threads"])).toBe("--threads needs a value");
    expect(refusal(["--threads", "--quick"])).toBe("--threads needs a value");
    expect(refusal(["--quick=yes"])).toBe("--quick takes no value, got 'yes'");
    expect(refusal(["4"])).toBe("unexpected argument '4'");
    expect(refusal(["--", "--threads"])).toBe("unexpected argument '--threads'");
  });
});
