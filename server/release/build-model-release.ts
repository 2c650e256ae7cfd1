// `loom release model`: copies one model file into the feed, hashing it as it streams, writes its manifest signed in
// a DSSE envelope beside it, then adds it to the feed's index (written last, so a failed release lists nothing).
import { mkdir, mkdtemp, open, rename, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { MODEL_PAYLOAD_TYPE, signEnvelope } from "./dsse.js";
import { type FeedModel, INDEX_FILE, modelFolder, withModel } from "./feed-index.js";
import { readChunks, writeHashed } from "./hashed-file.js";
import { readPrivateKey } from "./keys.js";
import { readLocalIndex } from "./local-index.js";
import { MODEL_MANIFEST_FORMAT, MODEL_MANIFEST_FORMAT_VERSION, type ModelManifest, isModelFileName, isModelSlug } from "./model-manifest.js";

/** The manifest's file name in a model release's folder. */
export const MODEL_MANIFEST_FILE = "manifest.dsse.json";

/** What to release. */
export interface BuildModelReleaseOptions {
  /** The private signing key's PEM file. */
  keyPath: string;
  /** The feed folder (created if missing). */
  feed: string;
  slug: string;
  /** The model file: one GGUF file. */
  file: string;
  notes?: string;
  /** Release this slug with this file content again (new date and notes). */
  replace?: boolean;
  now?: Date;
}

/** What was written. */
export interface BuiltModelRelease {
  slug: string;
  keyId: string;
  /** The release's folder in the feed. */
  folder: string;
  entry: FeedModel;
  manifest: ModelManifest;
}

/** Releases a model file into the feed. @throws Error naming the file, slug or index at fault. */
export async function buildModelRelease(options: BuildModelReleaseOptions): Promise<BuiltModelRelease> {
  const { slug, feed } = options;
  const { privateKey, keyId } = readPrivateKey(options.keyPath);
  if (!isModelSlug(slug)) throw new Error(`--slug ${slug}: a model slug is lower-case letters, digits, ".", "_" or "-", starting with a letter or digit (at most 100)`);
  const name = basename(options.file);
  if (!isModelFileName(name)) throw new Error(`--file ${options.file}: '${name}' cannot be a model's file name (no hidden files, at most 255 bytes)`);
  await checkModelFile(options.file);
  const indexPath = join(feed, INDEX_FILE);
  const index = await readLocalIndex(indexPath);
  // Copied inside the slug's folder, so that the final rename stays on one file system; the folder is named by the
  // content's hash, known only once copied.
  const slugFolder = join(feed, "models", slug);
  await mkdir(slugFolder, { recursive: true });
  const incoming = await mkdtemp(join(slugFolder, ".incoming-"));
  try {
    const digest = await writeHashed(readChunks(options.file), join(incoming, name));
    const date = (options.now ?? new Date()).toISOString();
    const folder = modelFolder(slug, digest.sha256);
    const entry: FeedModel = { slug, date, sha256: digest.sha256, files: { model: `${folder}/${name}`, manifest: `${folder}/${MODEL_MANIFEST_FILE}` } };
    const nextIndex = withModel(index, entry, options.replace ?? false);
    const manifest: ModelManifest = {
      format: MODEL_MANIFEST_FORMAT,
      formatVersion: MODEL_MANIFEST_FORMAT_VERSION,
      slug,
      file: { name, size: digest.size, sha256: digest.sha256 },
      date,
      notes: options.notes ?? "",
    };
    const envelope = signEnvelope(Buffer.from(JSON.stringify(manifest, null, 2)), MODEL_PAYLOAD_TYPE, privateKey, keyId);
    await writeFile(join(incoming, MODEL_MANIFEST_FILE), `${JSON.stringify(envelope, null, 2)}\n`);
    const target = join(feed, folder);
    await rm(target, { recursive: true, force: true });
    await rename(incoming, target);
    await writeFile(indexPath, `${JSON.stringify(nextIndex, null, 2)}\n`);
    return { slug, keyId, folder: target, entry, manifest };
  } finally {
    await rm(incoming, { recursive: true, force: true });
    // Only succeeds when empty: a slug's first release that failed leaves no folder behind.
    await rmdir(slugFolder).catch(() => undefined);
  }
}

/** Refuses anything but one readable GGUF file, saying why (a directory is a Hugging Face model, not released). */
async function checkModelFile(path: string): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw new Error(`--file ${path}: ${(error as Error).message}`);
  }
  if (info.isDirectory()) throw new Error(`--file ${path}: a directory; a model release is one GGUF file (Hugging Face model directories are not released)`);
  if (!info.isFile()) throw new Error(`--file ${path}: not a regular file`);
  const magic = Buffer.alloc(4);
  const file = await open(path, "r");
  try {
    await file.read(magic, 0, 4, 0);
  } finally {
    await file.close();
  }
  if (magic.toString("latin1") !== "GGUF") throw new Error(`--file ${path}: not a GGUF file (it does not start with "GGUF"); a model release is one GGUF file`);
}
