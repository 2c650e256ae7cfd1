// Unpacks a verified release beside the running one: every file of the package is checked against the signed
// manifest (the same paths, sizes and SHA-256), written into `releases/<version>.partial-<pid>`, given the install's
// dependencies, and renamed to `releases/<version>` only when complete. A release folder already there is checked
// file by file and reused, or replaced when anything differs.
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import type { ReleaseManifest } from "../manifest.js";
import { readTgzFiles } from "../tar-entries.js";
import { checkDependencies } from "./dependencies.js";
import { syncDirectory, syncTree } from "./durable-files.js";

/**
 * Unpacks `tgz` (already checked against manifest.package.sha256) into `target`, linking `node_modules` to `modules`.
 * @throws Error naming the file that differs from the manifest, or the dependency the install lacks.
 */
export async function unpackRelease(tgz: Buffer, manifest: ReleaseManifest, target: string, modules: string, where: string): Promise<void> {
  if (await matchesManifest(target, manifest)) {
    await checkDependencies(target, modules);
    return;
  }
  const expected = new Map(manifest.files.map((file) => [file.path, file]));
  const files = readTgzFiles(tgz, where).map((file) => ({ ...file, path: file.path.replace(/^package\//, "") }));
  const seen = new Set<string>();
  for (const file of files) {
    const want = expected.get(file.path);
    if (want === undefined) throw new Error(`${where}: holds ${file.path}, which the signed manifest of ${manifest.version} does not list`);
    if (want.sha256 !== file.sha256 || want.size !== file.size) throw new Error(`${where}: ${file.path} has SHA-256 ${file.sha256} (${file.size} bytes), the signed manifest of ${manifest.version} says ${want.sha256} (${want.size} bytes)`);
    if (!safePath(file.path)) throw new Error(`${where}: ${file.path} is not a path inside the package`);
    seen.add(file.path);
  }
  const missing = manifest.files.find((file) => !seen.has(file.path));
  if (missing !== undefined) throw new Error(`${where}: lacks ${missing.path}, which the signed manifest of ${manifest.version} lists`);

  const partial = `${target}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  for (const file of files) {
    const path = join(partial, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.body);
  }
  await symlink(modules, join(partial, "node_modules"), "dir");
  await checkDependencies(partial, modules);
  syncTree(partial);
  await rm(target, { recursive: true, force: true });
  await rename(partial, target);
  syncDirectory(dirname(target));
}

/** Whether `root` holds exactly the manifest's files with their hashes (a release unpacked before). */
async function matchesManifest(root: string, manifest: ReleaseManifest): Promise<boolean> {
  if (!(await stat(root).then((info) => info.isDirectory(), () => false))) return false;
  for (const file of manifest.files) {
    const bytes = await readFile(join(root, file.path)).catch(() => undefined);
    if (bytes === undefined || bytes.length !== file.size || createHash("sha256").update(bytes).digest("hex") !== file.sha256) return false;
  }
  return true;
}

/** A relative path that stays inside the folder it is joined to. */
function safePath(path: string): boolean {
  if (path === "" || isAbsolute(path) || path.includes("\0")) return false;
  const normal = normalize(path);
  return normal !== ".." && !normal.startsWith(`..${sep}`) && normal === path.replaceAll("/", sep);
}
