// Incremental build steps: a step runs only when the hash of its inputs differs from the one stamped by its last
// successful run, or when one of its outputs is missing. Used by scripts/build.mjs (`npm run build`); plain Node ESM
// with no dependencies, so it runs before anything is built.
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
import { join, posix } from "node:path";

/** Folders no walk enters, as TypeScript's wildcards skip them, besides dot folders (.git, .cache). */
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

/** JSON with comments and trailing commas (tsconfig.json's dialect) parsed; strings are left alone. */
export function parseJsonc(text) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else {
      out += c;
    }
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, "$1"));
}

/** A tsconfig include/exclude glob as a RegExp over relative POSIX paths (`*`, `?` within a name, `**` across). */
function globRegExp(spec, mode) {
  const normal = posix.normalize(spec.replace(/\\/g, "/")).replace(/^\.\//, "").replace(/\/$/, "");
  const parts = normal === "." ? [] : normal.split("/");
  const last = parts[parts.length - 1] ?? "";
  // A path with no wildcard in its last part and no extension names a folder: everything below it.
  if (mode === "include" && !/[*?]/.test(last) && !/\.\w+$/.test(last)) parts.push("**", "*");
  let source = "";
  parts.forEach((part, index) => {
    const end = index === parts.length - 1;
    if (part === "**") {
      source += end ? ".*" : "(?:[^/]+/)*";
      return;
    }
    // In includes, wildcards do not match names starting with a dot (TypeScript's rule).
    const lead = mode === "include" && /^[*?]/.test(part) ? "(?!\\.)" : "";
    source += lead + part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]") + (end ? "" : "/");
  });
  // An exclude matches the path itself and everything below it.
  return new RegExp(`^${source}${mode === "exclude" ? "(?:$|/)" : "$"}`);
}

const TS_EXTENSIONS = [".d.ts", ".d.cts", ".d.mts", ".ts", ".tsx", ".cts", ".mts"];
const JS_EXTENSIONS = [".js", ".jsx", ".cjs", ".mjs"];

/**
 * The source files a tsconfig.json compiles (relative to `root`), read from its include/exclude/files the way tsc
 * reads them, and where each one's JavaScript lands. `extends` and `references` are not followed: such a config throws.
 */
export function tsconfigProgram(root, configPath) {
  const config = parseJsonc(readFileSync(join(root, configPath), "utf8"));
  if (config.extends !== undefined || config.references !== undefined) {
    throw new Error(`${configPath}: "extends" and "references" are not supported by scripts/build/incremental.mjs`);
  }
  const options = config.compilerOptions ?? {};
  const base = posix.dirname(configPath.replace(/\\/g, "/"));
  const rel = (spec) => posix.normalize(posix.join(base, spec.replace(/\\/g, "/")));
  const extensions = options.allowJs ? [...TS_EXTENSIONS, ...JS_EXTENSIONS] : TS_EXTENSIONS;
  const includes = (config.include ?? (config.files ? [] : ["**/*"])).map((spec) => globRegExp(rel(spec), "include"));
  const excludes = (config.exclude ?? ["node_modules", "bower_components", "jspm_packages", ...(options.outDir ? [options.outDir] : [])])
    .map((spec) => globRegExp(rel(spec), "exclude"));
  const keep = (path) =>
    extensions.some((ext) => path.endsWith(ext)) && includes.some((re) => re.test(path)) && !excludes.some((re) => re.test(path));
  // Walk only the folders the includes start from (their parts before the first wildcard).
  const starts = new Set((config.include ?? (config.files ? [] : ["**/*"])).map((spec) => {
    const parts = rel(spec).split("/");
    const wild = parts.findIndex((part) => /[*?]/.test(part));
    const fixed = wild < 0 ? parts : parts.slice(0, wild);
    return fixed.join("/") === "." ? "" : fixed.join("/");
  }));
  const matched = [...starts].flatMap((start) => listFiles(root, start, keep));
  const sources = [...new Set([...matched, ...(config.files ?? []).map(rel)])].sort();
  const outDir = options.outDir === undefined ? undefined : rel(options.outDir);
  const rootDir = rel(options.rootDir ?? ".");
  /** Where tsc writes the JavaScript of `source` (declaration files have none). */
  const outputOf = (source) => {
    if (/\.d\.[cm]?ts$/.test(source) || outDir === undefined) return undefined;
    const inRoot = posix.relative(rootDir, source);
    return posix.join(outDir, inRoot.replace(/\.(?:tsx?|jsx?)$/, ".js").replace(/\.[cm]ts$/, (ext) => `.${ext[1]}js`));
  };
  return { sources, outputs: sources.map(outputOf).filter((path) => path !== undefined), options };
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
