// The release's package: exactly what `npm pack` would publish from the package root (package.json's "files"),
// with lifecycle scripts off so that making a release never rebuilds or changes the build it releases.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";

const run = promisify(execFile);

/** The packed tarball. */
export interface PackedPackage {
  name: string;
  version: string;
  /** The .tgz written into the destination folder. */
  path: string;
}

/** Runs `npm pack --json --ignore-scripts --pack-destination DEST` in `packageRoot`. @throws Error with npm's message. */
export async function packPackage(packageRoot: string, destination: string): Promise<PackedPackage> {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  let stdout: string;
  try {
    ({ stdout } = await run(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", destination], { cwd: packageRoot, maxBuffer: 64 * 1024 ** 2 }));
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`npm pack in ${packageRoot} failed: ${(e.stderr || e.message).trim()}`);
  }
  const [result] = JSON.parse(stdout) as { name: string; version: string; filename: string }[];
  if (result === undefined) throw new Error(`npm pack in ${packageRoot} reported no package`);
  return { name: result.name, version: result.version, path: join(destination, result.filename) };
}
