// The CPU builds of llama.cpp in node-llama-cpp's prebuilt package (one libggml-cpu-<name>.so each: x64, haswell,
// icelake, sapphirerapids, zen4, ...), and running any one of them in a fresh child process.
//
// Why a copy of the package: ggml's backend registry dlopens every libggml-cpu-*.so beside llama-addon.node, asks each
// for its score on this processor and keeps the best; neither node-llama-cpp nor ggml has an option or environment
// variable that picks another. So a build is pinned by a copy of the package under .cache/ (hard links where the file
// system allows) that holds only that build's library, and a child process whose import of the package is answered
// with the copy (llama-cpp-build-hooks.js). The child reads /proc/self/maps, so every run says which library it mapped.
import { fork } from "node:child_process";
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { REFERENCE_CONTEXT_OPTIONS, REFERENCE_LLAMA_OPTIONS } from "../engine/testing/llama-cpp.js";
import { REPOSITORY_ROOT } from "../engine/testing/fixtures.js";

/** The build name that runs the package as installed, where ggml picks the library. */
export const DEFAULT_BUILD = "default";

const CPU_LIBRARY = /^libggml-cpu-(.+)\.so$/;

/** node-llama-cpp's package of prebuilt CPU binaries for this platform, as installed. */
export interface PrebuiltPackage {
  /** The package name node-llama-cpp imports, e.g. `@node-llama-cpp/linux-x64`. */
  name: string;
  version: string;
  /** The package's folder (real path). */
  directory: string;
  /** The folder holding llama-addon.node and the libraries, relative to `directory` (e.g. `bins/linux-x64`). */
  binsFolder: string;
  /** The llama.cpp release the binaries were built from, per their build metadata. */
  llamaCppRelease: string;
}

/** A llama.cpp build or the package could not be run, or ran something other than what was asked for. */
export class LlamaCppBuildError extends Error {
  override name = "LlamaCppBuildError";
}

/**
 * The installed prebuilt CPU package of node-llama-cpp for this machine, or undefined where there is none to pin
 * (not Linux: the check of what ran reads /proc/self/maps; or the package is not installed).
 */
export function prebuiltPackage(): PrebuiltPackage | undefined {
  if (process.platform !== "linux") return undefined;
  const name = `@node-llama-cpp/linux-${process.arch}`;
  try {
    // Resolved from node-llama-cpp's own location, as its import of the package is.
    const fromNodeLlamaCpp = createRequire(createRequire(import.meta.url).resolve("node-llama-cpp"));
    const directory = realpathSync(dirname(dirname(fromNodeLlamaCpp.resolve(name)))); // <package>/dist/index.js
    const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as { name: string; version: string };
    if (manifest.name !== name) return undefined;
    const bins = readdirSync(join(directory, "bins"));
    const folder = bins.find((entry) => existsSync(join(directory, "bins", entry, "llama-addon.node")));
    if (folder === undefined) return undefined;
    const binsFolder = join("bins", folder);
    const metadata = JSON.parse(readFileSync(join(directory, binsFolder, "_nlcBuildMetadata.json"), "utf8")) as { buildOptions?: { llamaCpp?: { release?: string } } };
    return { name, version: manifest.version, directory, binsFolder, llamaCppRelease: metadata.buildOptions?.llamaCpp?.release ?? "unknown" };
  } catch {
    return undefined;
  }
}

/** Why pinned llama.cpp builds cannot run on this machine (a test's skip reason), or undefined when they can. */
export function missingBuildsReason(pkg = prebuiltPackage()): string | undefined {
  if (process.platform !== "linux") return "pinning llama.cpp CPU builds needs Linux (/proc/self/maps)";
  if (pkg === undefined) return `node-llama-cpp's prebuilt package @node-llama-cpp/linux-${process.arch} is not installed`;
  if (availableBuilds(pkg).length === 0) return `${pkg.name} has no libggml-cpu-*.so in ${pkg.binsFolder}`;
  return undefined;
}

/** The names of the CPU libraries in a package folder (`libggml-cpu-icelake.so` is `icelake`), sorted. */
export function cpuBuildsIn(packageDirectory: string, pkg: PrebuiltPackage): string[] {
  const folder = join(packageDirectory, pkg.binsFolder);
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((file) => CPU_LIBRARY.exec(file)?.[1] ?? []).sort();
}

/** The CPU builds the installed package ships, sorted; none where there is no package. */
export function availableBuilds(pkg = prebuiltPackage()): string[] {
  return pkg === undefined ? [] : cpuBuildsIn(pkg.directory, pkg);
}

/**
 * The folder of a copy of the package that holds only `build`'s CPU library (every other file as installed), made on
 * first use under .cache/llama-cpp-builds/ and kept per package version.
 */
export function pinnedPackage(build: string, pkg: PrebuiltPackage): string {
  if (!availableBuilds(pkg).includes(build)) throw new LlamaCppBuildError(`no llama.cpp CPU build "${build}" in ${pkg.name} (it has ${availableBuilds(pkg).join(", ")})`);
  const directory = join(REPOSITORY_ROOT, ".cache", "llama-cpp-builds", `${basename(pkg.name)}-${pkg.version}`, build);
  if (existsSync(directory) && cpuBuildsIn(directory, pkg).join() === build) return directory;
  rmSync(directory, { recursive: true, force: true });
  // Built beside and renamed into place, so an interrupted copy is never taken for a finished one.
  const building = `${directory}.${process.pid}.partial`;
  rmSync(building, { recursive: true, force: true });
  copyTree(pkg.directory, building, (file) => {
    const library = CPU_LIBRARY.exec(basename(file));
    return library === null || library[1] === build;
  });
  try {
    renameSync(building, directory);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(directory)) throw error; // else another process finished the same copy first
  }
  return directory;
}

/** Copies the files of `from` that `keep` accepts into `to`, as hard links where possible. */
function copyTree(from: string, to: string, keep: (file: string) => boolean): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target, keep);
    else if (keep(source)) {
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target); // another file system, or links not allowed
      }
    }
  }
}

/** One prompt to time: prefill of `prompt`, then `decode` greedy tokens, on `threads` threads. */
export interface SpeedJob {
  modelPath: string;
  prompt: number[];
  decode: number;
  threads: number;
  /** Tokens of the unmeasured generation run first in the same context. */
  warmupTokens: number;
}

/** One timed generation. */
export interface BuildSpeeds {
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
  /** Wall-clock seconds of the whole generation. */
  seconds: number;
  /** CPU seconds the process used meanwhile (all threads): below threads x `seconds` when others had the cores. */
  cpuSeconds: number;
}

/** What one child process ran. */
export interface BuildRun {
  /** The build asked for (a CPU build's name, or {@link DEFAULT_BUILD}). */
  build: string;
  /** The CPU build whose library the process mapped (for the default: ggml's choice). */
  loaded: string;
  /** The path of the CPU library mapped. */
  library: string;
  speeds?: BuildSpeeds;
}

interface ChildAnswer {
  cpuLibraries: string[];
  addons: string[];
  speeds?: BuildSpeeds;
  error?: string;
}

const CHILD = fileURLToPath(new URL("./llama-cpp-build-child.js", import.meta.url));

/**
 * Runs llama.cpp's CPU build `build` (or {@link DEFAULT_BUILD}, the package as installed) in a fresh child process:
 * loads it, times `job` when given, and checks from the child's memory map that exactly one CPU library was mapped,
 * from the pinned copy (or the installed package), and for a pinned build that it is that build's. Throws
 * {@link LlamaCppBuildError} when the child fails or mapped anything else. Without the prebuilt package (another
 * platform, a build from source) only the default runs, and what it loaded is reported as far as it can be seen.
 */
export async function runBuild(build: string, job?: SpeedJob, pkg = prebuiltPackage(), timeoutMilliseconds = 30 * 60_000): Promise<BuildRun> {
  if (pkg === undefined && build !== DEFAULT_BUILD) throw new LlamaCppBuildError(`cannot pin llama.cpp build "${build}": ${missingBuildsReason(pkg)}`);
  const packageDirectory = pkg === undefined ? undefined : build === DEFAULT_BUILD ? pkg.directory : pinnedPackage(build, pkg);
  const answer = await runChild({
    packageName: pkg?.name,
    pinnedEntryUrl: build === DEFAULT_BUILD ? undefined : packageEntry(packageDirectory!).href,
    llamaOptions: REFERENCE_LLAMA_OPTIONS,
    speed: job === undefined ? undefined : { ...job, contextOptions: REFERENCE_CONTEXT_OPTIONS },
  }, timeoutMilliseconds, build);
  const where = `llama.cpp build "${build}"`;
  if (answer.error !== undefined) throw new LlamaCppBuildError(`${where} failed (mapped: ${answer.cpuLibraries.join(", ") || "no CPU library"}): ${answer.error}`);
  if (pkg === undefined && answer.cpuLibraries.length !== 1) return { build, loaded: "unknown", library: answer.cpuLibraries.join(", "), speeds: answer.speeds };
  if (answer.cpuLibraries.length !== 1) throw new LlamaCppBuildError(`${where} mapped ${answer.cpuLibraries.length} CPU libraries, expected 1: ${answer.cpuLibraries.join(", ") || "none (not supported by this processor?)"}`);
  const library = answer.cpuLibraries[0];
  const loaded = CPU_LIBRARY.exec(basename(library))?.[1] ?? basename(library);
  if (pkg === undefined) return { build, loaded, library, speeds: answer.speeds };
  const expectedFolder = realpathSync(join(packageDirectory!, pkg.binsFolder));
  if (dirname(library) !== expectedFolder || answer.addons.some((addon) => dirname(addon) !== expectedFolder)) {
    throw new LlamaCppBuildError(`${where} loaded ${[library, ...answer.addons].join(", ")}, not from ${expectedFolder}`);
  }
  if (build !== DEFAULT_BUILD && loaded !== build) throw new LlamaCppBuildError(`${where} mapped ${library}`);
  return { build, loaded, library, speeds: answer.speeds };
}

/** The entry file of a package copy, as its package.json names it for import (`exports["."].import`, else `main`). */
function packageEntry(packageDirectory: string): URL {
  const manifest = JSON.parse(readFileSync(join(packageDirectory, "package.json"), "utf8")) as { main?: string; exports?: { ".": { import?: string } } };
  const entry = manifest.exports?.["."]?.import ?? manifest.main ?? "index.js";
  return pathToFileURL(join(packageDirectory, entry));
}

function runChild(job: object, timeoutMilliseconds: number, build: string): Promise<ChildAnswer> {
  return new Promise((resolve, reject) => {
    // execArgv empty: the child must not inherit a test runner's loaders or flags.
    const child = fork(CHILD, [], { execArgv: [], stdio: ["ignore", "ignore", "pipe", "ipc"], cwd: REPOSITORY_ROOT });
    let stderr = "";
    let answer: ChildAnswer | undefined;
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMilliseconds);
    child.once("message", (message) => {
      answer = message as ChildAnswer;
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (answer !== undefined) resolve(answer);
      else reject(new LlamaCppBuildError(`llama.cpp build "${build}" exited without an answer (code ${code}, signal ${signal})${stderr ? `: ${stderr.trim()}` : ""}`));
    });
    child.send(job);
  });
}
