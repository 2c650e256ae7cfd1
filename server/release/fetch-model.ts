// Fetching a released model: the index names it, the signed manifest says exactly which file it is, and the file
// is only put in place once its size and SHA-256 match. A worker therefore never loads a file the signer did not
// release, whatever the feed or the network did.
import type { KeyObject } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { DsseError, MODEL_PAYLOAD_TYPE, parseEnvelope, verifyEnvelope } from "./dsse.js";
import { type FeedModel, INDEX_FILE, parseFeedIndex } from "./feed-index.js";
import { type FeedSource, MAX_METADATA_BYTES, MAX_MODEL_BYTES } from "./feed-source.js";
import { hashFile, writeHashed } from "./hashed-file.js";
import { type ModelManifest, isSha256, parseModelManifest } from "./model-manifest.js";

/** What to fetch, from where, into where. */
export interface FetchModelOptions {
  feed: FeedSource;
  slug: string;
  /** Trusted public keys by key id (readTrustedKeys). */
  trusted: ReadonlyMap<string, KeyObject>;
  /** The folder the model file is put in (created if missing), under the manifest's file name. */
  destinationDir: string;
  /** A given release of the slug, by its file's SHA-256; default: the newest. */
  sha256?: string;
}

/** A model file in place and verified. */
export interface FetchedModel {
  slug: string;
  /** The verified file. */
  path: string;
  size: number;
  sha256: string;
  /** The release's date, from the signed manifest. */
  date: string;
  notes: string;
  /** The trusted key id whose signature verified the manifest. */
  signedBy: string;
  /** False when a file with the right SHA-256 was there already. */
  downloaded: boolean;
}

/** A refused model: a signature, manifest or file that does not match; the message names the file. */
export class ModelVerificationError extends Error {
  override readonly name = "ModelVerificationError";
}

/**
 * Fetches and verifies a model release: reads the index, verifies the release's manifest against `trusted` and
 * that it names this slug and file, then streams the file to `<name>.partial`, hashing as it goes, and renames it
 * into place only when its size and SHA-256 match (fsynced first). A matching file already in place is kept.
 * @throws Error naming the index, manifest or file: no such release, a bad signature, a mismatch (the partial file
 * is removed).
 */
export async function fetchModel(options: FetchModelOptions): Promise<FetchedModel> {
  const { feed, slug, trusted } = options;
  const wanted = options.sha256?.toLowerCase();
  if (wanted !== undefined && !isSha256(wanted)) throw new Error(`sha256 ${options.sha256}: not a SHA-256 (64 hex digits)`);
  const entry = await findRelease(feed, slug, wanted);
  const { manifest, signedBy } = await verifiedManifest(feed, entry, trusted);
  const { name, size, sha256 } = manifest.file;
  const path = join(options.destinationDir, name);
  const result = { slug, path, size, sha256, date: manifest.date, notes: manifest.notes, signedBy };
  if (await alreadyThere(path, manifest)) return { ...result, downloaded: false };
  await mkdir(options.destinationDir, { recursive: true });
  const partial = `${path}.partial`;
  const source = feed.describe(entry.files.model);
  try {
    const written = await writeHashed(feed.stream(entry.files.model, MAX_MODEL_BYTES), partial, size);
    if (written.overLimit || written.size !== size) {
      throw new ModelVerificationError(`${source}: size does not match the signed manifest of model ${slug}: expected ${size} bytes, got ${written.overLimit ? `more than ${size}` : written.size}`);
    }
    if (written.sha256 !== sha256) throw new ModelVerificationError(`${source}: SHA-256 does not match the signed manifest of model ${slug}: expected ${sha256}, got ${written.sha256}`);
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  await syncFolder(options.destinationDir);
  return { ...result, downloaded: true };
}

/** The index entry: the given SHA-256's (lower case), else the newest of the slug. @throws Error naming the index. */
async function findRelease(feed: FeedSource, slug: string, sha256: string | undefined): Promise<FeedModel> {
  const indexName = feed.describe(INDEX_FILE);
  const index = parseFeedIndex(parseJson(await feed.read(INDEX_FILE, MAX_METADATA_BYTES), indexName), indexName);
  const releases = (index.models ?? []).filter((model) => model.slug === slug);
  if (releases.length === 0) {
    const slugs = [...new Set((index.models ?? []).map((model) => model.slug))];
    throw new Error(`${indexName}: no release of model ${slug} (the feed has ${slugs.length === 0 ? "no models" : slugs.join(", ")})`);
  }
  if (sha256 === undefined) return releases.reduce((newest, model) => (model.date > newest.date ? model : newest));
  const found = releases.find((model) => model.sha256 === sha256);
  if (found === undefined) throw new Error(`${indexName}: model ${slug} has no release with SHA-256 ${sha256} (it has ${releases.map((model) => model.sha256).join(", ")})`);
  return found;
}

/** The manifest once a trusted key's signature verifies it and it is the release the index entry offers. */
async function verifiedManifest(feed: FeedSource, entry: FeedModel, trusted: ReadonlyMap<string, KeyObject>): Promise<{ manifest: ModelManifest; signedBy: string }> {
  const where = feed.describe(entry.files.manifest);
  const envelope = parseEnvelope(parseJson(await feed.read(entry.files.manifest, MAX_METADATA_BYTES), where), where);
  const { payload, keyid } = verifyEnvelope(envelope, MODEL_PAYLOAD_TYPE, trusted, where);
  const manifest = parseModelManifest(parseJson(payload, `${where} (payload)`), `${where} (payload)`);
  // A validly signed manifest of another model, or of another file, must not pass for this one.
  if (manifest.slug !== entry.slug) throw new DsseError(`${where}: the signed manifest is for model ${manifest.slug}, the index says ${entry.slug}`);
  if (basename(entry.files.model) !== manifest.file.name) throw new DsseError(`${where}: the signed manifest names file ${manifest.file.name}, the index ${entry.files.model}`);
  if (manifest.file.sha256 !== entry.sha256) throw new DsseError(`${where}: the signed manifest gives SHA-256 ${manifest.file.sha256}, the index ${entry.sha256}`);
  return { manifest, signedBy: keyid };
}

/** Whether the destination already holds exactly the manifest's file (hashed: a name proves nothing). */
async function alreadyThere(path: string, manifest: ModelManifest): Promise<boolean> {
  try {
    const digest = await hashFile(path);
    return digest.size === manifest.file.size && digest.sha256 === manifest.file.sha256;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** Makes the rename itself durable; not every platform can open a folder to sync it, and that is no failure. */
// Stryker disable all: durability across a power cut, which no test can observe; the fetched file is the same without it
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Windows cannot fsync a directory handle.
  }
}
// Stryker restore all

function parseJson(bytes: Buffer, where: string): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw new Error(`${where}: not JSON (${(error as Error).message})`);
  }
}
