// Races for a lock between processes, for tests: each child imports the build's modules (npm test builds first),
// waits for one shared instant (after every child has loaded), runs the same code, and prints its outcome.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPOSITORY_ROOT } from "../../../../engine/testing/fixtures.js";

/** A module of the build, as an import specifier for a child's code. */
export function builtModule(...path: string[]): string {
  return JSON.stringify(pathToFileURL(join(REPOSITORY_ROOT, "dist", ...path)).href);
}

/**
 * Runs `body` (ES module code whose last line prints the outcome with console.log) in `count` processes at once.
 * @param imports code that runs before the shared instant (the imports).
 * @returns each process's output, trimmed.
 */
export async function raceProcesses(count: number, imports: string, body: string): Promise<string[]> {
  const startAt = Date.now() + 2000;
  const script = `${imports}\nwhile (Date.now() < ${startAt});\n${body}`;
  return Promise.all(Array.from({ length: count }, () => new Promise<string>((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout!.on("data", (chunk) => { out += chunk; });
    child.once("exit", () => resolve(out.trim()));
  })));
}
