// Model releases: the repository's stories260K GGUF released into a feed and fetched back, through a folder feed and
// a loopback HTTP feed, with every refusal named and no partial file left behind.
import { createHash } from "node:crypto";
import { copyFileSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import { buildModelRelease } from "./build-model-release.js";
import { DsseError, MODEL_PAYLOAD_TYPE, signEnvelope } from "./dsse.js";
import { parseFeedIndex } from "./feed-index.js";
import { type FeedSource, openFeed } from "./feed-source.js";
import { FETCH_MODEL_USAGE, runFetchModel } from "./fetch-model-command.js";
import { fetchModel, ModelVerificationError } from "./fetch-model.js";
import { readPrivateKey, readTrustedKeys, writeKeyPair } from "./keys.js";

const MODEL = join(PACKAGE_ROOT, "models", "stories260K", "stories260K.gguf");
const MODEL_BYTES = readFileSync(MODEL);
const MODEL_SHA256 = createHash("sha256").update(MODEL_BYTES).digest("hex");

const dir = mkdtempSync(join(tmpdir(), "loom-model-release-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const signer = writeKeyPair(join(dir, "signer"));
const stranger = writeKeyPair(join(dir, "stranger"));
const config = join(dir, "loom.json");
writeFileSync(config, JSON.stringify({ updates: { trustedKeys: ["signer/release-key.pub.pem"] } }));
const trusted = readTrustedKeys([signer.publicKeyPath], config);

let folders = 0;
/** A new empty folder under the test's folder. */
function fresh(name: string): string {
  const path = join(dir, `${name}-${++folders}`);
  mkdirSync(path, { recursive: true });
  return path;
}

/** A GGUF file other than the fixture: the fixture with bytes appended (still a GGUF file by its magic). */
function otherModel(name: string, extra: string): string {
  const path = join(fresh("other-model"), name);
  writeFileSync(path, Buffer.concat([MODEL_BYTES, Buffer.from(extra)]));
  return path;
}

const release = (feed: string, options: { slug?: string; file?: string; key?: string; notes?: string; replace?: boolean; now?: Date } = {}) =>
  buildModelRelease({ keyPath: options.key ?? signer.privateKeyPath, feed, slug: options.slug ?? "stories260k", file: options.file ?? MODEL, notes: options.notes ?? "TinyStories 260K.\n", replace: options.replace, now: options.now });

const sha256Of = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const readIndex = (feed: string) => JSON.parse(readFileSync(join(feed, "index.json"), "utf8"));

/** `feed` counting its streamed (large) reads, to tell a download from a file kept. */
function counting(feed: FeedSource): FeedSource & { streams: number } {
  const counted = {
    location: feed.location, describe: (path: string) => feed.describe(path), read: (path: string, max: number) => feed.read(path, max), streams: 0,
    stream(path: string, max: number) {
      counted.streams++;
      return feed.stream(path, max);
    },
  };
  return counted;
}

describe("buildModelRelease", () => {
  it("copies the model into models/<slug>/<sha256 prefix>/ with its signed manifest and lists it in the index", async () => {
    const feed = fresh("feed");
    const built = await release(feed, { now: new Date("2026-11-27T10:00:00.000Z") });
    const folder = join(feed, "models", "stories260k", MODEL_SHA256.slice(0, 16));
    expect(built.folder).toBe(folder);
    expect(readdirSync(folder).sort()).toEqual(["manifest.dsse.json", "stories260K.gguf"]);
    expect(readFileSync(join(folder, "stories260K.gguf")).equals(MODEL_BYTES)).toBe(true);
    const envelope = JSON.parse(readFileSync(join(folder, "manifest.dsse.json"), "utf8"));
    expect(envelope.payloadType).toBe(MODEL_PAYLOAD_TYPE);
    expect(envelope.payloadType).toBe("application/vnd.loom.model+json");
    expect(envelope.signatures).toEqual([{ keyid: signer.keyId, sig: expect.any(String) }]);
    expect(JSON.parse(Buffer.from(envelope.payload, "base64").toString())).toEqual({
      format: "loom-model-manifest", formatVersion: 1, slug: "stories260k",
      file: { name: "stories260K.gguf", size: MODEL_BYTES.length, sha256: MODEL_SHA256 },
      date: "2026-11-27T10:00:00.000Z", notes: "TinyStories 260K.\n",
    });
    const prefix = `models/stories260k/${MODEL_SHA256.slice(0, 16)}`;
    expect(readIndex(feed)).toEqual({
      format: "loom-release-feed", formatVersion: 1, releases: [],
      models: [{ slug: "stories260k", date: "2026-11-27T10:00:00.000Z", sha256: MODEL_SHA256, files: { model: `${prefix}/stories260K.gguf`, manifest: `${prefix}/manifest.dsse.json` } }],
    });
    // Nothing of the copy's scratch folder is left in the feed.
    expect(readdirSync(join(feed, "models", "stories260k"))).toEqual([MODEL_SHA256.slice(0, 16)]);
  });

  it("keeps a feed's loom releases, and lists models by slug, newest first within a slug", async () => {
    const feed = fresh("feed");
    const loomRelease = { version: "0.2.0", date: "2026-11-01T00:00:00.000Z", files: { package: "releases/0.2.0/loom-0.2.0.tgz", manifest: "releases/0.2.0/manifest.dsse.json", notes: "releases/0.2.0/notes.md" } };
    // An index written before models were released: no `models` field.
    writeFileSync(join(feed, "index.json"), JSON.stringify({ format: "loom-release-feed", formatVersion: 1, releases: [loomRelease] }));
    await release(feed, { now: new Date("2026-11-02T00:00:00.000Z") });
    await release(feed, { slug: "aardvark", now: new Date("2026-11-03T00:00:00.000Z") });
    await release(feed, { file: otherModel("stories260K.gguf", "v2"), now: new Date("2026-11-04T00:00:00.000Z") });
    const index = readIndex(feed);
    expect(index.releases).toEqual([loomRelease]);
    expect(index.models.map((model: { slug: string; date: string }) => `${model.slug} ${model.date.slice(0, 10)}`)).toEqual(["aardvark 2026-11-03", "stories260k 2026-11-04", "stories260k 2026-11-02"]);
  });

  it("refuses the same slug and file again without --replace, and releases it again with", async () => {
    const feed = fresh("feed");
    await release(feed);
    await expect(release(feed, { notes: "Again.\n" })).rejects.toThrow(`the feed already has model stories260k with SHA-256 ${MODEL_SHA256}: give --replace to release it again`);
    expect(readdirSync(join(feed, "models", "stories260k"))).toEqual([MODEL_SHA256.slice(0, 16)]);
    const again = await release(feed, { notes: "Again.\n", replace: true });
    expect(readIndex(feed).models).toEqual([again.entry]);
    const envelope = JSON.parse(readFileSync(join(again.folder, "manifest.dsse.json"), "utf8"));
    expect(JSON.parse(Buffer.from(envelope.payload, "base64").toString()).notes).toBe("Again.\n");
  });

  it("refuses a directory, a file that is not GGUF and a bad slug, naming them, and writes nothing", async () => {
    const feed = fresh("feed");
    const hfDir = fresh("hf-model");
    writeFileSync(join(hfDir, "config.json"), "{}");
    await expect(release(feed, { file: hfDir })).rejects.toThrow(`--file ${hfDir}: a directory; a model release is one GGUF file (Hugging Face model directories are not released)`);
    const text = join(hfDir, "config.json");
    await expect(release(feed, { file: text })).rejects.toThrow(`--file ${text}: not a GGUF file (it does not start with "GGUF")`);
    await expect(release(feed, { slug: "Stories/260K" })).rejects.toThrow("--slug Stories/260K: a model slug is lower-case letters, digits");
    await expect(release(feed, { slug: ".." })).rejects.toThrow("--slug ..: a model slug");
    expect(readdirSync(feed)).toEqual([]);
  });
});

describe("the feed index's models", () => {
  const base = { format: "loom-release-feed", formatVersion: 1, releases: [] };
  const model = { slug: "stories260k", date: "2026-11-27T10:00:00.000Z", sha256: MODEL_SHA256, files: { model: "models/stories260k/x/stories260K.gguf", manifest: "models/stories260k/x/manifest.dsse.json" } };

  it("accepts an index without models (written before them) and one with them", () => {
    expect(parseFeedIndex(base, "index.json").models).toBeUndefined();
    expect(parseFeedIndex({ ...base, models: [model] }, "index.json").models).toEqual([model]);
  });

  it("refuses a malformed entry, naming it", () => {
    const parse = (models: unknown) => () => parseFeedIndex({ ...base, models }, "feed/index.json");
    expect(parse({})).toThrow("feed/index.json: malformed feed index: models must be an array");
    expect(parse([{ ...model, slug: "../etc" }])).toThrow('models[0].slug "../etc" must be lower-case letters');
    expect(parse([model, { ...model, sha256: "abc" }])).toThrow("models[1].sha256 must be 64 lower-case hex digits");
    expect(parse([{ ...model, files: { ...model.files, model: "../../outside.gguf" } }])).toThrow("models[0].files.model must be a relative path inside the feed");
    expect(parse([{ ...model, files: { ...model.files, manifest: "/etc/passwd" } }])).toThrow("models[0].files.manifest must be a relative path inside the feed");
  });
});

describe("fetchModel", () => {
  const feed = join(dir, "fetch-feed");
  let older: Awaited<ReturnType<typeof release>>;
  beforeAll(async () => {
    older = await release(feed, { file: otherModel("stories260K.gguf", "older"), now: new Date("2026-11-01T00:00:00.000Z"), notes: "Older.\n" });
    await release(feed, { now: new Date("2026-11-02T00:00:00.000Z") });
    await release(feed, { slug: "other", now: new Date("2026-11-03T00:00:00.000Z") });
  });

  it("fetches the newest release of the slug, verified, and leaves no partial file", async () => {
    const models = join(fresh("models"), "nested");
    const fetched = await fetchModel({ feed: openFeed(feed), slug: "stories260k", trusted, destinationDir: models });
    expect(fetched).toEqual({ slug: "stories260k", path: join(models, "stories260K.gguf"), size: MODEL_BYTES.length, sha256: MODEL_SHA256, date: "2026-11-02T00:00:00.000Z", notes: "TinyStories 260K.\n", signedBy: signer.keyId, downloaded: true });
    expect(readFileSync(fetched.path).equals(MODEL_BYTES)).toBe(true);
    expect(readdirSync(models)).toEqual(["stories260K.gguf"]);
  });

  it("fetches a given release by its SHA-256", async () => {
    const fetched = await fetchModel({ feed: openFeed(feed), slug: "stories260k", trusted, destinationDir: fresh("models"), sha256: older.entry.sha256.toUpperCase() });
    expect(fetched).toMatchObject({ sha256: older.entry.sha256, notes: "Older.\n", downloaded: true });
    expect(sha256Of(readFileSync(fetched.path))).toBe(older.entry.sha256);
    await expect(fetchModel({ feed: openFeed(feed), slug: "stories260k", trusted, destinationDir: fresh("models"), sha256: "0".repeat(64) })).rejects.toThrow(`${join(feed, "index.json")}: model stories260k has no release with SHA-256 ${"0".repeat(64)}`);
  });

  it("does not download a verified file already in place, and replaces one that differs", async () => {
    const models = fresh("models");
    const source = counting(openFeed(feed));
    await fetchModel({ feed: source, slug: "stories260k", trusted, destinationDir: models });
    const again = await fetchModel({ feed: source, slug: "stories260k", trusted, destinationDir: models });
    expect(again).toMatchObject({ downloaded: false, path: join(models, "stories260K.gguf") });
    expect(source.streams).toBe(1);
    // A file of that name with other bytes is no proof: it is fetched again, of another size or of the same.
    writeFileSync(join(models, "stories260K.gguf"), "GGUF not the model");
    expect(await fetchModel({ feed: source, slug: "stories260k", trusted, destinationDir: models })).toMatchObject({ downloaded: true });
    expect(source.streams).toBe(2);
    expect(readFileSync(join(models, "stories260K.gguf")).equals(MODEL_BYTES)).toBe(true);
    writeFileSync(join(models, "stories260K.gguf"), Buffer.from(MODEL_BYTES.map((byte, index) => (index === 100 ? byte ^ 1 : byte))));
    expect(await fetchModel({ feed: source, slug: "stories260k", trusted, destinationDir: models })).toMatchObject({ downloaded: true });
    expect(source.streams).toBe(3);
    expect(readFileSync(join(models, "stories260K.gguf")).equals(MODEL_BYTES)).toBe(true);
  });

  it("fetches the newest release of the slug by date even when the index lists it after an older one", async () => {
    const reordered = fresh("reordered-feed");
    const first = await release(reordered, { file: otherModel("stories260K.gguf", "first"), now: new Date("2026-11-01T00:00:00.000Z") });
    const newest = await release(reordered, { now: new Date("2026-11-05T00:00:00.000Z") });
    const index = readIndex(reordered);
    index.models = [first.entry, newest.entry];
    writeFileSync(join(reordered, "index.json"), JSON.stringify(index));
    expect(await fetchModel({ feed: openFeed(reordered), slug: "stories260k", trusted, destinationDir: fresh("models") })).toMatchObject({ sha256: MODEL_SHA256, date: "2026-11-05T00:00:00.000Z" });
  });

  it("names a slug the feed does not have", async () => {
    await expect(fetchModel({ feed: openFeed(feed), slug: "missing", trusted, destinationDir: fresh("models") })).rejects.toThrow(`${join(feed, "index.json")}: no release of model missing (the feed has other, stories260k)`);
  });

  describe("refuses", () => {
    it("a changed model file, naming it, the expected and the actual SHA-256, and removes the partial file", async () => {
      const tampered = fresh("tampered-feed");
      const built = await release(tampered);
      const file = join(tampered, built.entry.files.model);
      const bytes = Buffer.from(MODEL_BYTES);
      bytes[bytes.length - 1]! ^= 1;
      writeFileSync(file, bytes);
      const models = fresh("models");
      await expect(fetchModel({ feed: openFeed(tampered), slug: "stories260k", trusted, destinationDir: models })).rejects.toThrow(`${file}: SHA-256 does not match the signed manifest of model stories260k: expected ${MODEL_SHA256}, got ${sha256Of(bytes)}`);
      expect(readdirSync(models)).toEqual([]);
      writeFileSync(file, Buffer.concat([MODEL_BYTES, Buffer.from("x")]));
      await expect(fetchModel({ feed: openFeed(tampered), slug: "stories260k", trusted, destinationDir: models })).rejects.toThrow(`${file}: size does not match the signed manifest of model stories260k: expected ${MODEL_BYTES.length} bytes, got more than ${MODEL_BYTES.length}`);
      writeFileSync(file, MODEL_BYTES.subarray(0, 1000));
      await expect(fetchModel({ feed: openFeed(tampered), slug: "stories260k", trusted, destinationDir: models })).rejects.toThrow(`${file}: size does not match the signed manifest of model stories260k: expected ${MODEL_BYTES.length} bytes, got 1000`);
      expect(readdirSync(models)).toEqual([]);
    });

    it("a manifest signed by an unknown key, naming the key", async () => {
      const foreign = fresh("stranger-feed");
      const built = await release(foreign, { key: stranger.privateKeyPath });
      const models = fresh("models");
      await expect(fetchModel({ feed: openFeed(foreign), slug: "stories260k", trusted, destinationDir: models })).rejects.toThrow(`${join(foreign, built.entry.files.manifest)}: signed by unknown key ${stranger.keyId} (trusted: ${signer.keyId})`);
      expect(readdirSync(models)).toEqual([]);
    });

    it("a signed manifest of another slug offered under this one", async () => {
      const swapped = fresh("swapped-feed");
      const wanted = await release(swapped, { slug: "wanted" });
      const other = await release(swapped, { slug: "other", file: otherModel("stories260K.gguf", "other") });
      // The index edited so that 'wanted' points at 'other''s signed manifest and file: both verify, the slug does not.
      const index = readIndex(swapped);
      index.models = index.models.map((model: { slug: string }) => (model.slug === "wanted" ? { ...other.entry, slug: "wanted" } : model));
      writeFileSync(join(swapped, "index.json"), JSON.stringify(index));
      await expect(fetchModel({ feed: openFeed(swapped), slug: "wanted", trusted, destinationDir: fresh("models") })).rejects.toThrow(`${join(swapped, other.entry.files.manifest)}: the signed manifest is for model other, the index says wanted`);
      expect(wanted.entry.sha256).toBe(MODEL_SHA256);
    });

    it("a SHA-256 that is not one, before reading the feed", async () => {
      await expect(fetchModel({ feed: openFeed(fresh("no-feed")), slug: "stories260k", trusted, destinationDir: fresh("models"), sha256: "abc" })).rejects.toThrow(
        new Error("sha256 abc: not a SHA-256 (64 hex digits)"),
      );
    });

    it("a feed without models, and a SHA-256 the slug lacks, listing what the feed has", async () => {
      const empty = fresh("no-models-feed");
      writeFileSync(join(empty, "index.json"), JSON.stringify({ format: "loom-release-feed", formatVersion: 1, releases: [] }));
      await expect(fetchModel({ feed: openFeed(empty), slug: "stories260k", trusted, destinationDir: fresh("models") })).rejects.toThrow(
        new Error(`${join(empty, "index.json")}: no release of model stories260k (the feed has no models)`),
      );
      const missing = "0".repeat(64);
      const listed = [...readIndex(feed).models].filter((model: { slug: string }) => model.slug === "stories260k").map((model: { sha256: string }) => model.sha256).join(", ");
      await expect(fetchModel({ feed: openFeed(feed), slug: "stories260k", trusted, destinationDir: fresh("models"), sha256: missing })).rejects.toThrow(
        new Error(`${join(feed, "index.json")}: model stories260k has no release with SHA-256 ${missing} (it has ${listed})`),
      );
    });

    it("an index or a manifest payload that is not JSON, naming it", async () => {
      const broken = fresh("broken-feed");
      writeFileSync(join(broken, "index.json"), "{ not json");
      await expect(fetchModel({ feed: openFeed(broken), slug: "stories260k", trusted, destinationDir: fresh("models") })).rejects.toThrow(`${join(broken, "index.json")}: not JSON (`);
      const signedGarbage = fresh("garbage-feed");
      const built = await release(signedGarbage);
      const manifest = join(signedGarbage, built.entry.files.manifest);
      const { privateKey, keyId } = readPrivateKey(signer.privateKeyPath);
      writeFileSync(manifest, JSON.stringify(signEnvelope(Buffer.from("not json"), MODEL_PAYLOAD_TYPE, privateKey, keyId)));
      await expect(fetchModel({ feed: openFeed(signedGarbage), slug: "stories260k", trusted, destinationDir: fresh("models") })).rejects.toThrow(`${manifest} (payload): not JSON (`);
      writeFileSync(manifest, JSON.stringify(signEnvelope(Buffer.from("{}"), MODEL_PAYLOAD_TYPE, privateKey, keyId)));
      await expect(fetchModel({ feed: openFeed(signedGarbage), slug: "stories260k", trusted, destinationDir: fresh("models") })).rejects.toThrow(`${manifest} (payload): malformed model manifest: format must be "loom-model-manifest"`);
    });

    it("a signed manifest naming another file or another SHA-256 than the index entry", async () => {
      const edited = fresh("edited-feed");
      const built = await release(edited);
      const manifest = join(edited, built.entry.files.manifest);
      const renamed = built.entry.files.model.replace(/stories260K\.gguf$/, "renamed.gguf");
      copyFileSync(join(edited, built.entry.files.model), join(edited, renamed));
      const index = readIndex(edited);
      index.models[0].files.model = renamed;
      writeFileSync(join(edited, "index.json"), JSON.stringify(index));
      await expect(fetchModel({ feed: openFeed(edited), slug: "stories260k", trusted, destinationDir: fresh("models") })).rejects.toThrow(
        new DsseError(`${manifest}: the signed manifest names file stories260K.gguf, the index ${renamed}`),
      );
      index.models[0] = { ...built.entry, sha256: "f".repeat(64) };
      writeFileSync(join(edited, "index.json"), JSON.stringify(index));
      await expect(fetchModel({ feed: openFeed(edited), slug: "stories260k", trusted, destinationDir: fresh("models") })).rejects.toThrow(
        new DsseError(`${manifest}: the signed manifest gives SHA-256 ${MODEL_SHA256}, the index ${"f".repeat(64)}`),
      );
    });

    it("a destination it cannot read, naming it, and says ModelVerificationError for a file that does not match", async () => {
      const models = fresh("models");
      mkdirSync(join(models, "stories260K.gguf"));
      await expect(fetchModel({ feed: openFeed(feed), slug: "stories260k", trusted, destinationDir: models })).rejects.toThrow(`cannot read ${join(models, "stories260K.gguf")}: EISDIR`);
      const tampered = fresh("tampered-name-feed");
      const built = await release(tampered);
      writeFileSync(join(tampered, built.entry.files.model), MODEL_BYTES.subarray(1));
      const error = await fetchModel({ feed: openFeed(tampered), slug: "stories260k", trusted, destinationDir: fresh("models") }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ModelVerificationError);
      expect((error as Error).name).toBe("ModelVerificationError");
    });

    it("an index entry pointing outside the feed", async () => {
      const escaping = fresh("escaping-feed");
      const built = await release(escaping);
      const index = readIndex(escaping);
      index.models[0].files.model = `../${built.entry.files.model}`;
      writeFileSync(join(escaping, "index.json"), JSON.stringify(index));
      await expect(fetchModel({ feed: openFeed(escaping), slug: "stories260k", trusted, destinationDir: fresh("models") })).rejects.toThrow(`${join(escaping, "index.json")}: malformed feed index: models[0].files.model must be a relative path inside the feed`);
    });
  });

  describe("over HTTP on the loopback interface", () => {
    const served: { feed: string; mode: "file" | "stall" | "unsized" } = { feed, mode: "file" };
    const server = createServer((request, response) => {
      const path = join(served.feed, decodeURIComponent(new URL(request.url!, "http://x").pathname.replace(/^\/feed\//, "")));
      if (!existsSync(path) || !statSync(path).isFile()) return void response.writeHead(404).end();
      // Streamed as a real server would, with its length; 'stall' sends a first chunk, then nothing; 'unsized'
      // streams without a length (chunked), as a proxy might.
      response.writeHead(200, served.mode === "unsized" ? {} : { "content-length": statSync(path).size });
      if (served.mode === "stall") return void response.write(readFileSync(path).subarray(0, 1024));
      createReadStream(path).pipe(response);
    });
    let base = "";
    beforeAll(async () => {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed`;
    });
    afterAll(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it("fetches the same verified file as the folder", async () => {
      const models = fresh("models");
      const fetched = await fetchModel({ feed: openFeed(base), slug: "stories260k", trusted, destinationDir: models });
      expect(fetched).toMatchObject({ sha256: MODEL_SHA256, signedBy: signer.keyId, downloaded: true });
      expect(readFileSync(fetched.path).equals(MODEL_BYTES)).toBe(true);
      expect(readdirSync(models)).toEqual(["stories260K.gguf"]);
    });

    it("refuses a changed file, naming its URL, and removes the partial file", async () => {
      const tampered = fresh("http-tampered-feed");
      const built = await release(tampered);
      writeFileSync(join(tampered, built.entry.files.model), Buffer.concat([MODEL_BYTES.subarray(1), Buffer.from("!")]));
      served.feed = tampered;
      const models = fresh("models");
      try {
        await expect(fetchModel({ feed: openFeed(base), slug: "stories260k", trusted, destinationDir: models })).rejects.toThrow(new RegExp(`^${base}/${built.entry.files.model}: SHA-256 does not match the signed manifest of model stories260k: expected ${MODEL_SHA256}, got [0-9a-f]{64}$`));
      } finally {
        served.feed = feed;
      }
      expect(readdirSync(models)).toEqual([]);
    });

    it("streams within the size bound and an idle timeout, naming the URL", async () => {
      // The first entry is slug 'other': the fixture itself.
      const [entry] = readIndex(feed).models;
      const url = `${base}/${entry.files.model}`;
      const size = MODEL_BYTES.length;
      let received = 0;
      const drain = async (source: AsyncIterable<Buffer>) => {
        received = 0;
        for await (const chunk of source) received += chunk.length;
        return received;
      };
      expect(await drain(openFeed(base).stream(entry.files.model, size))).toBe(size);
      await expect(drain(openFeed(base).stream(entry.files.model, 1000))).rejects.toThrow(`cannot read ${url}: ${size} bytes, more than the 1000 allowed`);
      try {
        served.mode = "unsized";
        await expect(drain(openFeed(base).stream(entry.files.model, 100_000))).rejects.toThrow(`cannot read ${url}: more than the 100000 bytes allowed`);
        expect(received).toBeLessThanOrEqual(100_000);
        // The first kilobyte arrives before the body ends: the read streams rather than waits for the whole file.
        served.mode = "stall";
        await expect(drain(openFeed(base, 200).stream(entry.files.model, size))).rejects.toThrow(`cannot read ${url}: no data for 0.2 s`);
        expect(received).toBe(1024);
      } finally {
        served.mode = "file";
      }
    });
  });

  it("bounds a folder feed's stream too, naming the file", async () => {
    const [entry] = readIndex(feed).models;
    const read = async () => {
      for await (const _ of openFeed(feed).stream(entry.files.model, 1000));
    };
    await expect(read()).rejects.toThrow(`cannot read ${join(feed, entry.files.model)}: ${MODEL_BYTES.length} bytes, more than the 1000 allowed`);
  });
});

describe("runFetchModel (loom update fetch-model)", () => {
  const feed = join(dir, "cli-feed");
  beforeAll(async () => {
    await release(feed);
  });

  /** Runs the command in this process: its status (undefined when it threw), what it printed, and what it threw. */
  async function fetchCli(...argv: string[]): Promise<{ code?: number; stdout: string; error?: string }> {
    let stdout = "";
    const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      stdout += String(chunk);
      return true;
    });
    try {
      return { code: await runFetchModel(argv), stdout };
    } catch (error) {
      return { stdout, error: (error as Error).message };
    } finally {
      write.mockRestore();
    }
  }

  it("prints the verified path, then whether it was downloaded, in text and JSON", async () => {
    const models = fresh("models");
    const path = join(models, "stories260K.gguf");
    const first = await fetchCli("stories260k", "--feed", feed, "--config", config, "--models-dir", models);
    expect(first).toEqual({ code: 0, stdout: `fetched model stories260k from ${feed}: ${path}\n  verified   ${MODEL_BYTES.length} bytes, sha256 ${MODEL_SHA256}\n  signed by  key ${signer.keyId}, released ${readIndex(feed).models[0].date}\n` });
    const again = await fetchCli("stories260k", "--feed", feed, "--config", config, "--models-dir", models, "--json");
    expect(JSON.parse(again.stdout)).toMatchObject({ slug: "stories260k", path, sha256: MODEL_SHA256, signedBy: signer.keyId, downloaded: false });
    expect((await fetchCli("--help")).stdout).toBe(FETCH_MODEL_USAGE);
  });

  it("refuses without trusted keys, a slug or a models folder, and prints the error with --json", async () => {
    expect((await fetchCli("stories260k", "--feed", feed, "--models-dir", fresh("models"))).error).toMatch(/^no trusted keys: give --config with updates\.trustedKeys/);
    expect((await fetchCli("--feed", feed, "--config", config, "--models-dir", fresh("models"))).error).toBe("'loom update fetch-model' takes one model slug, got none");
    expect((await fetchCli("stories260k", "--feed", feed, "--config", config)).error).toBe("--models-dir is required");
    const missing = await fetchCli("missing", "--feed", feed, "--config", config, "--models-dir", fresh("models"), "--json");
    expect(missing.error).toBe(`${join(feed, "index.json")}: no release of model missing (the feed has stories260k)`);
    expect(JSON.parse(missing.stdout)).toEqual({ error: missing.error });
  });
});
