// A feed's index.json: the releases it offers, newest first, each with the files of its folder, and the model
// releases, newest first per slug. Parsing checks every entry, so a malformed index is refused naming the entry.
import { isModelSlug, isSha256 } from "./model-manifest.js";
import { compareSemVer, parseSemVer } from "./semver.js";

export const INDEX_FILE = "index.json";
export const INDEX_FORMAT = "loom-release-feed";
export const INDEX_FORMAT_VERSION = 1;

/** One release in the index; file paths are relative to the feed's root. */
export interface FeedRelease {
  version: string;
  date: string;
  files: { package: string; manifest: string; notes: string };
}

/** One model release in the index: the model file's SHA-256 as the signed manifest gives it; paths relative to the feed's root. */
export interface FeedModel {
  slug: string;
  date: string;
  sha256: string;
  files: { model: string; manifest: string };
}

/** The whole index. */
export interface FeedIndex {
  format: typeof INDEX_FORMAT;
  formatVersion: typeof INDEX_FORMAT_VERSION;
  releases: FeedRelease[];
  /** Model releases; absent in feeds written before models were released (still valid). */
  models?: FeedModel[];
}

/** A malformed index; the message names where it came from and the entry. */
export class FeedIndexError extends Error {
  override readonly name = "FeedIndexError";
}

/** An index without releases. */
export function emptyIndex(): FeedIndex {
  return { format: INDEX_FORMAT, formatVersion: INDEX_FORMAT_VERSION, releases: [] };
}

/** The folder of a release's files, relative to the feed root. */
export function releaseFolder(version: string): string {
  return `releases/${version}`;
}

/** The folder of a model release's files, relative to the feed root: one per slug and file content. */
export function modelFolder(slug: string, sha256: string): string {
  return `models/${slug}/${sha256.slice(0, 16)}`;
}

/**
 * Adds (or, with `replace`, replaces) a model release and orders the list by slug, newest first within a slug.
 * @throws Error when the feed has this slug with this SHA-256 already.
 */
export function withModel(index: FeedIndex, model: FeedModel, replace: boolean): FeedIndex {
  const same = (entry: FeedModel) => entry.slug === model.slug && entry.sha256 === model.sha256;
  const existing = index.models ?? [];
  if (existing.some(same) && !replace) throw new Error(`the feed already has model ${model.slug} with SHA-256 ${model.sha256}: give --replace to release it again`);
  const models = [...existing.filter((entry) => !same(entry)), model];
  // ISO 8601 dates in UTC order as strings.
  models.sort((a, b) => (a.slug === b.slug ? (a.date < b.date ? 1 : a.date > b.date ? -1 : 0) : a.slug < b.slug ? -1 : 1));
  return { ...index, models };
}

/** Adds (or, with `replace`, replaces) a release and orders the list newest first. @throws Error when the version is there already. */
export function withRelease(index: FeedIndex, release: FeedRelease, replace: boolean): FeedIndex {
  const exists = index.releases.some((entry) => entry.version === release.version);
  if (exists && !replace) throw new Error(`the feed already has version ${release.version}: give --replace to build it again`);
  const releases = [...index.releases.filter((entry) => entry.version !== release.version), release];
  releases.sort((a, b) => compareSemVer(b.version, a.version));
  return { ...index, releases };
}

/** Checks a decoded index.json. @throws FeedIndexError naming `where` and the entry. */
export function parseFeedIndex(value: unknown, where: string): FeedIndex {
  const fail = (message: string): never => {
    throw new FeedIndexError(`${where}: malformed feed index: ${message}`);
  };
  const index = value as Record<string, unknown>;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail("must be a JSON object");
  if (index.format !== INDEX_FORMAT) fail(`format must be "${INDEX_FORMAT}"`);
  if (index.formatVersion !== INDEX_FORMAT_VERSION) fail(`formatVersion ${JSON.stringify(index.formatVersion)} is not supported (this loom reads ${INDEX_FORMAT_VERSION})`);
  if (!Array.isArray(index.releases)) fail("releases must be an array");
  (index.releases as unknown[]).forEach((entry, i) => {
    const release = (entry ?? {}) as Record<string, unknown>;
    const files = (release.files ?? {}) as Record<string, unknown>;
    if (typeof release.version !== "string" || parseSemVer(release.version) === undefined) fail(`releases[${i}].version ${JSON.stringify(release.version)} must be a semantic version`);
    if (typeof release.date !== "string") fail(`releases[${i}].date must be a string`);
    for (const file of ["package", "manifest", "notes"]) {
      if (!isFeedPath(files[file])) fail(`releases[${i}].files.${file} must be a relative path inside the feed`);
    }
  });
  if (index.models !== undefined && !Array.isArray(index.models)) fail("models must be an array");
  ((index.models ?? []) as unknown[]).forEach((entry, i) => {
    const model = (entry ?? {}) as Record<string, unknown>;
    const files = (model.files ?? {}) as Record<string, unknown>;
    if (!isModelSlug(model.slug)) fail(`models[${i}].slug ${JSON.stringify(model.slug)} must be lower-case letters, digits, ".", "_" or "-"`);
    if (typeof model.date !== "string") fail(`models[${i}].date must be a string`);
    if (!isSha256(model.sha256)) fail(`models[${i}].sha256 must be 64 lower-case hex digits`);
    for (const file of ["model", "manifest"]) {
      if (!isFeedPath(files[file])) fail(`models[${i}].files.${file} must be a relative path inside the feed`);
    }
  });
  return value as FeedIndex;
}

/** A relative path that stays inside the feed: no absolute paths, no "..", no backslashes. */
function isFeedPath(value: unknown): value is string {
  return typeof value === "string" && value !== "" && !value.startsWith("/") && !value.includes("\\") && value.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}
