// uWebSockets.js, loaded when a server starts rather than when the CLI loads: each npm build has binaries for some
// Node.js releases and glibc versions only (uws-builds.ts), so `loom serve` loads the one that fits this machine, or
// says what to change, while `loom generate` and the engine run on any release.
import { type UwsBuild, type UwsRuntime, chooseUwsBuild, currentRuntime } from "./uws-builds.js";

/** The uWebSockets.js module (every build loom uses has uws-pack's API; its types stand for all of them). */
export type Uws = typeof import("uWebSockets.js");

/** A loaded module and the build it came from. */
export interface LoadedUws {
  readonly uws: Uws;
  readonly build: UwsBuild;
}

/** No uWebSockets.js build loads here; the message names the Node.js version, the machine and what to change. */
export class UwsUnavailableError extends Error {
  override readonly name = "UwsUnavailableError";
}

/** For tests: a runtime other than this process's, and an import function standing in for `import()`. */
export interface LoadUwsOptions {
  readonly runtime?: UwsRuntime;
  readonly importModule?: (name: string) => Promise<unknown>;
}

let current: Promise<LoadedUws> | undefined;

/**
 * Loads the uWebSockets.js build for this Node.js release and machine (once; later calls share the result).
 * @throws UwsUnavailableError when no build has a binary that loads here, when the chosen build is not installed, or
 * when its binary fails to load; the message says which Node.js releases or system would work, or what to install.
 */
export function loadUws(options: LoadUwsOptions = {}): Promise<LoadedUws> {
  if (options.runtime !== undefined || options.importModule !== undefined) return load(options);
  current ??= load({});
  return current;
}

async function load({ runtime = currentRuntime(), importModule = (name: string) => import(name) }: LoadUwsOptions): Promise<LoadedUws> {
  const choice = chooseUwsBuild(runtime);
  if ("refusal" in choice) throw new UwsUnavailableError(choice.refusal);
  const { build } = choice;
  try {
    return { uws: (await importModule(build.module)) as Uws, build };
  } catch (error) {
    const message = String((error as Error)?.message ?? error);
    const where = `Node.js ${runtime.nodeVersion} (ABI ${runtime.abi}) on ${runtime.platform}-${runtime.arch}` +
      (runtime.glibc === undefined ? "" : ` with glibc ${runtime.glibc}`);
    if ((error as { code?: string })?.code === "ERR_MODULE_NOT_FOUND" && message.includes(build.module)) {
      throw new UwsUnavailableError(`the uWebSockets.js build for ${where} is ${build.package}, which is not installed: ${build.install}`, { cause: error });
    }
    // The builds' loaders put the dynamic linker's complaint on the last line.
    const cause = message.split("\n").filter((line) => line.trim() !== "").at(-1);
    throw new UwsUnavailableError(`${build.package} (uWebSockets.js ${build.release}) did not load on ${where}: ${cause}`, { cause: error });
  }
}

/** "uWebSockets.js v20.49 (uws-pack 20.0.8)": the build serving HTTP, for the start banner. */
export function describeUwsBuild(build: UwsBuild): string {
  return `uWebSockets.js ${build.release} (${build.package})`;
}

