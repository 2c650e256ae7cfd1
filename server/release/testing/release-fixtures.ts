// Releases of this repository for the update tests: a copy of the built package under another version, changed the
// way a real next release would be (a new migration, a server that cannot start), built into a feed and signed.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPOSITORY_ROOT } from "../../../engine/testing/fixtures.js";
import { LOOM_CLI } from "../../testing/loom-process.js";
import { buildRelease } from "../build-release.js";

const run = promisify(execFile);

/** How a copy differs from the repository's build. */
export interface ReleaseChange {
  /** A migration of its own: a new table, `keepsPrevious` as given. */
  migration?: { version: number; table: string; keepsPrevious: boolean };
  /** Its `loom serve` fails at start (a release that is never healthy). */
  brokenServe?: boolean;
}

/** Copies the built package (package.json, dist/, kernels' WGSL, the fallback model, README) as `version`, changed. */
export function packageCopy(folder: string, version: string, change: ReleaseChange = {}): string {
  const root = join(folder, `package-${version}`);
  mkdirSync(root, { recursive: true });
  const packageJson = JSON.parse(readFileSync(join(REPOSITORY_ROOT, "package.json"), "utf8")) as { version: string };
  writeFileSync(join(root, "package.json"), `${JSON.stringify({ ...packageJson, version }, null, 2)}\n`);
  cpSync(join(REPOSITORY_ROOT, "dist"), join(root, "dist"), { recursive: true });
  cpSync(join(REPOSITORY_ROOT, "kernels"), join(root, "kernels"), { recursive: true, filter: (path) => !/\.[a-z]+$/.test(path) || path.endsWith(".wgsl") });
  cpSync(join(REPOSITORY_ROOT, "models", "stories260K"), join(root, "models", "stories260K"), { recursive: true });
  cpSync(join(REPOSITORY_ROOT, "README.md"), join(root, "README.md"));
  const migrations = join(root, "dist", "server", "platform", "db", "migrations");
  if (change.migration !== undefined) {
    const { version: number, table, keepsPrevious } = change.migration;
    writeFileSync(join(migrations, `${number}-release-test.js`), `export const migrationReleaseTest = ${JSON.stringify({ version: number, description: `release test: ${table}`, keepsPrevious, statements: [`CREATE TABLE ${table} (id integer)`] })};\n`);
    const index = readFileSync(join(migrations, "index.js"), "utf8").replace(/(export const MIGRATIONS = \[[^\]]*)\]/, "$1, migrationReleaseTest]");
    writeFileSync(join(migrations, "index.js"), `import { migrationReleaseTest } from "./${number}-release-test.js";\n${index}`);
  }
  if (change.brokenServe) {
    const path = join(root, "dist", "server", "cli", "serve-command.js");
    writeFileSync(path, readFileSync(path, "utf8").replace("export async function runServe(argv) {", 'export async function runServe(argv) {\n    throw new Error("this release test build never starts");'));
  }
  return root;
}

/** Builds `root` into `feed`, signed with the key at `keyPath`. */
export async function releaseInto(feed: string, root: string, keyPath: string, notes: string): Promise<void> {
  await buildRelease({ packageRoot: root, keyPath, feed, notes });
}

/** A TCP port free on loopback now (a restarted server must come back on the port clients use). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Runs `loom <args>` from the repository's build, in `cwd` (default: this process's). @returns its exit code, stdout and stderr. */
export async function loom(args: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [LOOM_CLI, ...args], { env, maxBuffer: 16 * 1024 ** 2, timeout: 240_000, ...(cwd === undefined ? {} : { cwd }) });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}
