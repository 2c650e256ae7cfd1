// The incremental build's bookkeeping (scripts/build/incremental.mjs): which steps run, which skip, and tsc's file list.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";
import { hashInputs, listFiles, runSteps, tsconfigProgram } from "./incremental.mjs";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "loom-build-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** Two steps like the real ones: each turns its sources into one output, counting its runs; `fail` makes one throw. */
function project() {
  write("a/one.txt", "one");
  write("a/two.txt", "two");
  write("b/three.txt", "three");
  const runs: string[] = [];
  const fail = new Set<string>();
  const step = (name: string, dir: string, output: string) => ({
    name,
    inputs: () => listFiles(root, dir),
    extra: [`${name} v1`],
    outputs: () => [output],
    run: async () => {
      runs.push(name);
      if (fail.has(name)) throw new Error(`${name} broke`);
      write(output, name);
    },
  });
  const steps = [step("alpha", "a", "out/alpha"), step("beta", "b", "out/beta")];
  const lines: string[] = [];
  const build = async (force = false) => {
    runs.length = 0;
    lines.length = 0;
    await runSteps(steps, { root, stampDir: join(root, ".cache", "stamps"), force, log: (line: string) => lines.push(line) });
    return [...runs];
  };
  return { steps, runs, fail, lines, build };
}

describe("runSteps", () => {
  it("runs every step the first time and none when nothing changed, one line each", async () => {
    const { build, lines } = project();
    expect(await build()).toEqual(["alpha", "beta"]);
    expect(lines).toEqual([expect.stringMatching(/^build: alpha \(\d+\.\d s\)$/), expect.stringMatching(/^build: beta \(\d+\.\d s\)$/)]);
    expect(await build()).toEqual([]);
    expect(lines).toEqual(["build: alpha up to date (skipped)", "build: beta up to date (skipped)"]);
  });

  it("reruns only the step whose source changed, was added or removed; a touch that keeps the bytes does not", async () => {
    const { build } = project();
    await build();
    write("b/three.txt", "THREE");
    expect(await build()).toEqual(["beta"]);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, "a/one.txt"), later, later);
    expect(await build()).toEqual([]);
    write("a/new.txt", "new");
    expect(await build()).toEqual(["alpha"]);
    rmSync(join(root, "a/two.txt"));
    expect(await build()).toEqual(["alpha"]);
    expect(await build()).toEqual([]);
  });

  it("reruns a step whose output is gone", async () => {
    const { build } = project();
    await build();
    rmSync(join(root, "out/alpha"));
    expect(await build()).toEqual(["alpha"]);
    expect(existsSync(join(root, "out/alpha"))).toBe(true);
  });

  it("stops at a failed step, stamps nothing for it, and runs it again next time", async () => {
    const { build, fail, lines } = project();
    await build();
    write("a/one.txt", "changed");
    write("b/three.txt", "changed");
    fail.add("alpha");
    await expect(build()).rejects.toThrow("alpha broke");
    expect(lines).toEqual([expect.stringMatching(/^build: alpha failed after \d+\.\d s$/)]);
    // A failure on a later build, even with the sources as they were at the last success, still runs again.
    await expect(build()).rejects.toThrow("alpha broke");
    fail.clear();
    expect(await build()).toEqual(["alpha", "beta"]);
    expect(await build()).toEqual([]);
  });

  it("fails a step that succeeds without writing its outputs", async () => {
    const { build, steps, runs } = project();
    const real = steps[1].run;
    steps[1].run = async () => {
      runs.push("beta");
    };
    await expect(build()).rejects.toThrow("build: beta succeeded but did not write out/beta");
    steps[1].run = real;
    expect(await build()).toEqual(["beta"]);
    expect(await build()).toEqual([]);
  });

  it("rebuilds everything with force", async () => {
    const { build } = project();
    await build();
    expect(await build(true)).toEqual(["alpha", "beta"]);
  });

  it("reruns a step when its extra strings (tool versions, command) change", async () => {
    const { build, steps } = project();
    await build();
    steps[0].extra = ["alpha v2"];
    expect(await build()).toEqual(["alpha"]);
  });
});

describe("hashInputs", () => {
  it("tells an absent file from an empty one and depends on paths, contents and extras", () => {
    write("x", "");
    const empty = hashInputs(root, ["x"]);
    expect(hashInputs(root, ["y"])).not.toBe(empty);
    expect(hashInputs(root, ["x"], ["tool@1"])).not.toBe(empty);
    expect(hashInputs(root, ["x", "x"])).toBe(empty);
    write("x", "1");
    expect(hashInputs(root, ["x"])).not.toBe(empty);
  });
});

/** The files TypeScript itself takes from a tsconfig.json, relative to `base`. */
function typescriptFileNames(base: string, configPath: string): string[] {
  const config = ts.readConfigFile(join(base, configPath), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(join(base, configPath)));
  return parsed.fileNames.map((file) => relative(base, file).split("\\").join("/")).sort();
}

describe("tsconfigProgram", () => {
  it("lists exactly the files tsc compiles from the repository's tsconfig.json, and their dist/ outputs", () => {
    const program = tsconfigProgram(REPOSITORY_ROOT, "tsconfig.json");
    expect(program.sources).toEqual(typescriptFileNames(REPOSITORY_ROOT, "tsconfig.json"));
    expect(program.sources).toContain("server/cli/main.ts");
    expect(program.outputs).toContain("dist/server/cli/main.js");
    expect(program.sources.some((file: string) => file.endsWith(".test.ts") || file.endsWith(".as.ts") || file.endsWith(".mjs"))).toBe(false);
  });

  it("follows include, exclude, files, allowJs, wildcards and comments as tsc does", () => {
    write("tsconfig.json", `{
      // comments and trailing commas, as tsc accepts them
      "compilerOptions": { "allowJs": true, "outDir": "out", "rootDir": "." /* here */, },
      "include": ["src", "lib/*.ts", "deep/**/keep-*.ts"],
      "exclude": ["src/skip", "**/*.spec.ts", "out"],
      "files": ["extra/one.ts"],
    }`);
    for (const file of [
      "src/a.ts", "src/b.tsx", "src/c.js", "src/d.d.ts", "src/e.json", "src/f.mts", "src/skip/x.ts", "src/y.spec.ts",
      "src/.hidden/z.ts", "src/.dot.ts", "src/node_modules/m.ts", "lib/l.ts", "lib/nested/n.ts", "deep/a/b/keep-1.ts",
      "deep/drop.ts", "extra/one.ts", "extra/two.ts", "out/src/a.js", "readme.md",
    ]) write(file, "export {};\n");
    const program = tsconfigProgram(root, "tsconfig.json");
    expect(program.sources).toEqual(typescriptFileNames(root, "tsconfig.json"));
    expect(program.sources).toEqual([
      "deep/a/b/keep-1.ts", "extra/one.ts", "lib/l.ts", "src/a.ts", "src/b.tsx", "src/c.js", "src/d.d.ts", "src/f.mts",
    ]);
    expect(program.outputs).toEqual(["out/deep/a/b/keep-1.js", "out/extra/one.js", "out/lib/l.js", "out/src/a.js", "out/src/b.js", "out/src/c.js", "out/src/f.mjs"]);
  });

  it("follows extends as tsc does, and names what is wrong with a config it cannot read", () => {
    write("base.json", `{ "compilerOptions": { "outDir": "out" }, "include": ["src"] }`);
    write("tsconfig.json", `{ "extends": "./base.json" }`);
    write("src/a.ts", "export {};\n");
    write("other/b.ts", "export {};\n");
    expect(tsconfigProgram(root, "tsconfig.json")).toEqual({ sources: ["src/a.ts"], outputs: ["out/src/a.js"] });
    write("tsconfig.json", `{ "extends": "./missing.json" }`);
    expect(() => tsconfigProgram(root, "tsconfig.json")).toThrow(/^tsconfig\.json: .*missing\.json/);
  });
});

describe("scripts/build.mjs", () => {
  it("explains its options and refuses unknown ones", () => {
    const script = join(REPOSITORY_ROOT, "scripts", "build.mjs");
    expect(execFileSync(process.execPath, [script, "--help"], { encoding: "utf8" })).toMatch(/^Usage: node scripts\/build\.mjs \[--force\]\n/);
    expect(() => execFileSync(process.execPath, [script, "--frobnicate"], { stdio: "pipe" })).toThrow(/Usage: node scripts\/build\.mjs \[--force\]/);
  });
});
