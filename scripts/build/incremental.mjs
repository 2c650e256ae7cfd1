// Incremental build steps: a step runs only when the hash of its inputs differs from the one stamped by its last
// successful run, or when one of its outputs is missing. Used by scripts/build.mjs (`npm run build`); plain Node ESM,
// so it runs before anything is built (it reads tsconfig.json with the TypeScript package that npm install put there).
//
// A step is { name, inputs, extra?, outputs, run }:
//   inputs()   relative paths (POSIX separators) of the files the step reads; a missing one hashes as absent
//   extra      strings that also change the result (tool versions, the command), hashed with the inputs
//   outputs()  relative paths that must exist for the step to count as done
//   run()      does the work; throws (or rejects) on failure
// The stamp, <stampDir>/<name>.json, holds the inputs' hash. It is removed before a step runs and written only after
// it succeeds, with the hash taken before the run: a failed step, or a source edited while its step ran, runs again.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, posix, relative, sep } from "node:path";

/** Folders no walk enters: installed packages' folders, besides dot folders (.git, .cache). */
const SKIPPED_DIRS = new Set(["node_modules", "bower_components", "jspm_packages"]);

/** Every file under `dir` (relative to `root`, POSIX separators, sorted) for which `keep(path)` holds. */
export function listFiles(root, dir, keep = () => true) {
  const found = [];
  const walk = (rel) => {
    let entries;
    try {
      entries = readdirSync(join(root, rel), { withFileTypes: true });
    } catch (error) {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return;
      throw error;
    }
    for (const entry of entries) {
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        const stats = statSync(join(root, path), { throwIfNoEntry: false });
        isDir = stats?.isDirectory() ?? false;
        isFile = stats?.isFile() ?? false;
      }
      if (isDir) {
        if (!entry.name.startsWith(".") && !SKIPPED_DIRS.has(entry.name)) walk(path);
      } else if (isFile && keep(path)) {
        found.push(path);
      }
    }
  };
  const start = posix.normalize(dir.replace(/\\/g, "/") || ".").replace(/\/+$/, "");
  if (start !== "." && statSync(join(root, start), { throwIfNoEntry: false })?.isFile()) return keep(start) ? [start] : [];
  walk(start === "." ? "" : start);
  return found.sort();
}

/**
 * The hash of `files`' paths and contents (relative to `root`) and the `extra` strings. Content, not modification
 * times: a checkout or `touch` that leaves a file's bytes alone does not rebuild (hashing all sources takes tens of
 * milliseconds).
 */
export function hashInputs(root, files, extra = []) {
  const hash = createHash("sha256");
  for (const value of extra) hash.update(`extra\0${value}\0`);
  for (const file of [...new Set(files)].sort()) {
    let bytes;
    try {
      bytes = readFileSync(join(root, file));
    } catch (error) {
      if (error.code !== "ENOENT") throw error;
    }
    hash.update(bytes === undefined ? `file\0${file}\0absent\0` : `file\0${file}\0${bytes.length}\0`);
    if (bytes !== undefined) hash.update(bytes);
  }
  return hash.digest("hex");
}

/** The version in node_modules/<name>/package.json, or "missing". */
export function packageVersion(root, name) {
  try {
    return `${name}@${JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version}`;
  } catch {
    return `${name}@missing`;
  }
}

/**
 * The source files a tsconfig.json compiles (relative to `root`, POSIX separators, sorted) and where each one's
 * JavaScript lands. The file list is tsc's own (TypeScript's config reader: include, exclude, files, extends), so the
 * inputs hashed are exactly what tsc compiles.
 */
export function tsconfigProgram(root, configPath) {
  const ts = createRequire(import.meta.url)("typescript");
  const path = join(root, configPath);
  const read = ts.readConfigFile(path, ts.sys.readFile);
  const parsed = read.error ? undefined : ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(path), undefined, path);
  const errors = read.error ? [read.error] : parsed.errors;
  if (errors.length > 0) throw new Error(`${configPath}: ${errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, " ")).join("; ")}`);
  const rel = (file) => relative(root, file).split(sep).join("/");
  const sources = parsed.fileNames.map(rel).sort();
  const outDir = parsed.options.outDir === undefined ? undefined : rel(parsed.options.outDir);
  const rootDir = rel(parsed.options.rootDir ?? dirname(path));
  /** Where tsc writes the JavaScript of `source` (declaration files have none). */
  const outputOf = (source) => {
    if (/\.d\.[cm]?ts$/.test(source) || outDir === undefined) return undefined;
    const inRoot = posix.relative(rootDir, source);
    return posix.join(outDir, inRoot.replace(/\.(?:tsx?|jsx?)$/, ".js").replace(/\.[cm]ts$/, (ext) => `.${ext[1]}js`));
  };
  return { sources, outputs: sources.map(outputOf).filter((output) => output !== undefined) };
}

/** Formats seconds as "12.3 s". */
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Runs `steps` in order, each only when it is out of date (or all with `force`); stops at the first that fails,
 * rethrowing its error. Prints one line per step through `log`. Resolves to the names of the steps that ran.
 */
export async function runSteps(steps, { root, stampDir, force = false, log = (line) => console.log(line) }) {
  mkdirSync(stampDir, { recursive: true });
  const ran = [];
  for (const step of steps) {
    const stampPath = join(stampDir, `${step.name}.json`);
    const hash = hashInputs(root, step.inputs(), step.extra ?? []);
    let stamp;
    try {
      stamp = JSON.parse(readFileSync(stampPath, "utf8"));
    } catch {
      stamp = undefined;
    }
    const missing = step.outputs().find((path) => !existsSync(join(root, path)));
    if (!force && stamp?.hash === hash && missing === undefined) {
      log(`build: ${step.name} up to date (skipped)`);
      continue;
    }
    rmSync(stampPath, { force: true });
    const started = performance.now();
    try {
      await step.run();
    } catch (error) {
      log(`build: ${step.name} failed after ${seconds(performance.now() - started)}`);
      throw error;
    }
    const notMade = step.outputs().find((path) => !existsSync(join(root, path)));
    if (notMade !== undefined) {
      log(`build: ${step.name} failed after ${seconds(performance.now() - started)}`);
      throw new Error(`build: ${step.name} succeeded but did not write ${notMade}`);
    }
    const partial = `${stampPath}.partial-${process.pid}`;
    writeFileSync(partial, `${JSON.stringify({ hash, built: new Date().toISOString() })}\n`);
    renameSync(partial, stampPath);
    ran.push(step.name);
    log(`build: ${step.name} (${seconds(performance.now() - started)})`);
  }
  return ran;
}
