// `loom release build`: packs the package, writes its manifest signed in a DSSE envelope and its notes into the
// feed's folder for that version, then adds it to the feed's index (written last, so a failed build lists nothing).
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pathToFileURL } from "node:url";
import type { Migration } from "../platform/db/migrations/index.js";
import { RELEASE_PAYLOAD_TYPE, signEnvelope } from "./dsse.js";
import { INDEX_FILE, type FeedRelease, releaseFolder, withRelease } from "./feed-index.js";
import { readPrivateKey } from "./keys.js";
import { readLocalIndex } from "./local-index.js";
import { MANIFEST_FORMAT, MANIFEST_FORMAT_VERSION, type ReleaseManifest } from "./manifest.js";
import { packPackage } from "./pack-package.js";
import { parseSemVer } from "./semver.js";
import { listTgzFiles } from "./tar-entries.js";

const run = promisify(execFile);

/** What to build. */
export interface BuildReleaseOptions {
  /** The folder holding package.json (the running loom's by default in the CLI). */
  packageRoot: string;
  /** The private signing key's PEM file. */
  keyPath: string;
  /** The feed folder (created if missing). */
  feed: string;
  notes?: string;
  /** Build a version the feed has already. */
  replace?: boolean;
  /** The migrations the release carries (default: those of the build in packageRoot's dist/). */
  migrations?: readonly Migration[];
  now?: Date;
}

/** What was written. */
export interface BuiltRelease {
  version: string;
  keyId: string;
  folder: string;
  release: FeedRelease;
  manifest: ReleaseManifest;
}

/** Builds a release into the feed. @throws Error naming the file or version at fault. */
export async function buildRelease(options: BuildReleaseOptions): Promise<BuiltRelease> {
  const { privateKey, keyId } = readPrivateKey(options.keyPath);
  const indexPath = join(options.feed, INDEX_FILE);
  const index = await readLocalIndex(indexPath);
  const scratch = await mkdtemp(join(tmpdir(), "loom-release-"));
  try {
    const packed = await packPackage(options.packageRoot, scratch);
    if (parseSemVer(packed.version) === undefined) throw new Error(`${join(options.packageRoot, "package.json")}: version '${packed.version}' is not a semantic version`);
    // Refused before anything is written into the feed.
    const date = (options.now ?? new Date()).toISOString();
    const folder = releaseFolder(packed.version);
    const packageFile = `${packed.name}-${packed.version}.tgz`;
    const release: FeedRelease = { version: packed.version, date, files: { package: `${folder}/${packageFile}`, manifest: `${folder}/manifest.dsse.json`, notes: `${folder}/notes.md` } };
    const nextIndex = withRelease(index, release, options.replace ?? false);
    const tgz = await readFile(packed.path);
    const migrations = options.migrations ?? (await builtMigrations(options.packageRoot));
    const manifest: ReleaseManifest = {
      format: MANIFEST_FORMAT,
      formatVersion: MANIFEST_FORMAT_VERSION,
      name: packed.name,
      version: packed.version,
      date,
      git: await gitState(options.packageRoot),
      package: { file: packageFile, size: tgz.length, sha256: createHash("sha256").update(tgz).digest("hex") },
      files: listTgzFiles(tgz, packed.path).map((file) => ({ ...file, path: file.path.replace(/^package\//, "") })),
      schema: { version: migrations[migrations.length - 1]?.version ?? 0, migrations: migrations.map(({ version, description, keepsPrevious }) => ({ version, description, keepsPrevious: keepsPrevious ?? false })) },
      notes: options.notes ?? "",
    };
    const envelope = signEnvelope(Buffer.from(JSON.stringify(manifest, null, 2)), RELEASE_PAYLOAD_TYPE, privateKey, keyId);
    const target = join(options.feed, folder);
    await rm(target, { recursive: true, force: true });
    await mkdir(target, { recursive: true });
    await copyFile(packed.path, join(options.feed, release.files.package));
    await writeFile(join(options.feed, release.files.manifest), `${JSON.stringify(envelope, null, 2)}\n`);
    await writeFile(join(options.feed, release.files.notes), manifest.notes);
    await writeFile(indexPath, `${JSON.stringify(nextIndex, null, 2)}\n`);
    return { version: packed.version, keyId, folder: target, release, manifest };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The migrations compiled into a package's dist/ (what that build runs), not this process's own. */
export async function builtMigrations(root: string): Promise<readonly Migration[]> {
  const path = join(root, "dist", "server", "platform", "db", "migrations", "index.js");
  try {
    return ((await import(pathToFileURL(path).href)) as { MIGRATIONS: readonly Migration[] }).MIGRATIONS;
  } catch (error) {
    throw new Error(`cannot read the release's migrations from ${path} (run npm run build first): ${(error as Error).message}`);
  }
}

/** HEAD's commit and whether the tree has changes; null where the package is not in a git checkout. */
async function gitState(root: string): Promise<ReleaseManifest["git"]> {
  try {
    const commit = (await run("git", ["rev-parse", "HEAD"], { cwd: root })).stdout.trim();
    const status = (await run("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root, maxBuffer: 16 * 1024 ** 2 })).stdout;
    return { commit, dirty: status.trim() !== "" };
  } catch {
    return null;
  }
}
