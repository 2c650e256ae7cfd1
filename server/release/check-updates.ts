// `loom update check`: the feed's releases newer than the running version, each with its notes and whether its
// manifest's signature verifies against a trusted key and its package matches the manifest's hash. Nothing is
// installed: this only reads the feed.
import { type KeyObject, createHash } from "node:crypto";
import { DsseError, RELEASE_PAYLOAD_TYPE, parseEnvelope, verifyEnvelope } from "./dsse.js";
import { type FeedIndex, type FeedRelease, INDEX_FILE, parseFeedIndex } from "./feed-index.js";
import { type FeedSource, MAX_METADATA_BYTES, MAX_PACKAGE_BYTES } from "./feed-source.js";
import { type ReleaseManifest, parseManifest } from "./manifest.js";
import { compareSemVer } from "./semver.js";

/** One newer release as checked. */
export interface CheckedRelease {
  version: string;
  date: string;
  /** The signed manifest's notes once verified, else the feed's notes.md (unverified) or "". */
  notes: string;
  /** The trusted key id whose signature verified; null when none did. */
  signedBy: string | null;
  /** Whether the package file's SHA-256 matched the signed manifest (null: not checked, the signature failed first). */
  packageMatches: boolean | null;
  /** The schema version the release needs (from the verified manifest). */
  schemaVersion: number | null;
  /** True when the signature verified and the package matched. */
  verified: boolean;
  /** What failed, each naming the file, key or version. */
  problems: string[];
}

/** The check's result. */
export interface UpdateCheck {
  feed: string;
  currentVersion: string;
  /** Newer releases, newest first. */
  releases: CheckedRelease[];
}

/**
 * Reads the feed's index and checks each release newer than `currentVersion`.
 * @throws Error when the index is unreadable or malformed (naming it); a release's own failures are its problems.
 */
export async function checkUpdates(feed: FeedSource, currentVersion: string, trusted: ReadonlyMap<string, KeyObject>): Promise<UpdateCheck> {
  const index = await readFeedIndex(feed);
  const newer = index.releases.filter((release) => compareSemVer(release.version, currentVersion) > 0).sort((a, b) => compareSemVer(b.version, a.version));
  const releases: CheckedRelease[] = [];
  for (const release of newer) releases.push(await checkRelease(feed, release, trusted));
  return { feed: feed.location, currentVersion, releases };
}

/** The feed's index. @throws Error naming it when it is unreadable or malformed. */
export async function readFeedIndex(feed: FeedSource): Promise<FeedIndex> {
  const indexName = feed.describe(INDEX_FILE);
  const bytes = await feed.read(INDEX_FILE, MAX_METADATA_BYTES);
  return parseFeedIndex(parseJson(bytes, indexName), indexName);
}

/** A release whose signature and package verified: what an update installs. */
export interface VerifiedRelease {
  release: FeedRelease;
  manifest: ReleaseManifest;
  /** The package's bytes, matching manifest.package.sha256. */
  tgz: Buffer;
  signedBy: string;
}

/**
 * Reads release `release` and verifies it as checkRelease does.
 * @throws Error listing every problem (each naming the file, key or version) when it does not verify.
 */
export async function fetchVerifiedRelease(feed: FeedSource, release: FeedRelease, trusted: ReadonlyMap<string, KeyObject>): Promise<VerifiedRelease> {
  // Stryker disable next-line StringLiteral,BooleanLiteral: only signedBy and problems of this record are read
  const checked: CheckedRelease = { version: release.version, date: release.date, notes: "", signedBy: null, packageMatches: null, schemaVersion: null, verified: false, problems: [] };
  const manifest = await verifiedManifest(feed, release, trusted, checked);
  if (manifest === undefined) throw new Error(`release ${release.version} does not verify: ${checked.problems.join("; ")}`);
  const tgz = await feed.read(release.files.package, MAX_PACKAGE_BYTES);
  const sha256 = createHash("sha256").update(tgz).digest("hex");
  if (sha256 !== manifest.package.sha256 || tgz.length !== manifest.package.size) {
    throw new Error(`release ${release.version} does not verify: ${feed.describe(release.files.package)}: SHA-256 ${sha256} (${tgz.length} bytes) does not match the signed manifest's ${manifest.package.sha256} (${manifest.package.size} bytes): the package was changed`);
  }
  return { release, manifest, tgz, signedBy: checked.signedBy! };
}

async function checkRelease(feed: FeedSource, release: FeedRelease, trusted: ReadonlyMap<string, KeyObject>): Promise<CheckedRelease> {
  // Stryker disable next-line StringLiteral: notes is set on every path below
  const checked: CheckedRelease = { version: release.version, date: release.date, notes: "", signedBy: null, packageMatches: null, schemaVersion: null, verified: false, problems: [] };
  const manifest = await verifiedManifest(feed, release, trusted, checked);
  if (manifest === undefined) {
    // Shown so the operator sees what was offered, marked unverified by `verified: false`.
    checked.notes = await feed.read(release.files.notes, MAX_METADATA_BYTES).then((notes) => notes.toString("utf8"), () => "");
    return checked;
  }
  checked.notes = manifest.notes;
  checked.schemaVersion = manifest.schema.version;
  const packageName = feed.describe(release.files.package);
  try {
    const tgz = await feed.read(release.files.package, MAX_PACKAGE_BYTES);
    const sha256 = createHash("sha256").update(tgz).digest("hex");
    checked.packageMatches = sha256 === manifest.package.sha256 && tgz.length === manifest.package.size;
    if (!checked.packageMatches) checked.problems.push(`${packageName}: SHA-256 ${sha256} (${tgz.length} bytes) does not match the signed manifest's ${manifest.package.sha256} (${manifest.package.size} bytes) for version ${release.version}: the package was changed`);
  } catch (error) {
    checked.problems.push((error as Error).message);
  }
  checked.verified = checked.signedBy !== null && checked.packageMatches === true;
  return checked;
}

/** The manifest once its signature verified and it names this release; otherwise records the problem. */
async function verifiedManifest(feed: FeedSource, release: FeedRelease, trusted: ReadonlyMap<string, KeyObject>, checked: CheckedRelease): Promise<ReleaseManifest | undefined> {
  const where = feed.describe(release.files.manifest);
  try {
    const envelope = parseEnvelope(parseJson(await feed.read(release.files.manifest, MAX_METADATA_BYTES), where), where);
    const { payload, keyid } = verifyEnvelope(envelope, RELEASE_PAYLOAD_TYPE, trusted, where);
    const manifest = parseManifest(parseJson(payload, `${where} (payload)`), `${where} (payload)`);
    // A validly signed manifest of another version must not pass for this one (an old release replayed as new).
    if (manifest.version !== release.version) throw new DsseError(`${where}: the signed manifest is for version ${manifest.version}, the index says ${release.version}`);
    if (!release.files.package.endsWith(`/${manifest.package.file}`)) throw new DsseError(`${where}: the signed manifest names package ${manifest.package.file}, the index ${release.files.package}`);
    checked.signedBy = keyid;
    return manifest;
  } catch (error) {
    checked.problems.push((error as Error).message);
    return undefined;
  }
}

function parseJson(bytes: Buffer, where: string): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw new Error(`${where}: not JSON (${(error as Error).message})`);
  }
}
