// Building releases into a feed and checking it: from a tiny package folder (npm pack of the real repository is
// slow), through a folder feed and a loopback HTTP feed, with every failure named.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "../platform/db/migrations/index.js";
import { buildRelease } from "./build-release.js";
import { checkUpdates, fetchVerifiedRelease, readFeedIndex } from "./check-updates.js";
import { RELEASE_PAYLOAD_TYPE, signEnvelope } from "./dsse.js";
import { openFeed } from "./feed-source.js";
import { readPrivateKey, readTrustedKeys, writeKeyPair } from "./keys.js";
import { packPackage } from "./pack-package.js";
import { listTgzFiles } from "./tar-entries.js";

const dir = mkdtempSync(join(tmpdir(), "loom-release-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const signer = writeKeyPair(join(dir, "signer"));
const stranger = writeKeyPair(join(dir, "stranger"));
const config = join(dir, "loom.json");
const trusted = readTrustedKeys([signer.publicKeyPath], config);

/** A package folder at `version`, with a file list as loom's package.json has one. */
function fakePackage(name: string, version: string): string {
  const root = join(dir, name);
  mkdirSync(join(root, "dist", "deep", "er"), { recursive: true });
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "loom", version, private: true, files: ["dist/", "README.md"] }));
  writeFileSync(join(root, "README.md"), `# loom ${version}\n`);
  writeFileSync(join(root, "dist", "main.js"), `console.log(${JSON.stringify(version)});\n`);
  writeFileSync(join(root, "dist", "deep", "er", `${"long-name-".repeat(12)}.js`), "// a path past tar's 100-byte name field\n");
  writeFileSync(join(root, "src", "main.ts"), "// not in the package\n");
  return root;
}

const build = (feed: string, version: string, options: { replace?: boolean; key?: string; notes?: string } = {}) =>
  buildRelease({ packageRoot: fakePackage(`pkg-${version}`, version), keyPath: options.key ?? signer.privateKeyPath, feed, notes: options.notes ?? `Notes of ${version}.\n`, replace: options.replace ?? false, migrations: MIGRATIONS });

describe("buildRelease", () => {
  const feed = join(dir, "feed");
  let first: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    first = await build(feed, "0.2.0");
    await build(feed, "0.10.0");
    await build(feed, "0.1.5");
  }, 60_000);

  it("writes the package, the signed manifest and the notes into releases/<version>", () => {
    const folder = join(feed, "releases", "0.2.0");
    const tgz = readFileSync(join(folder, "loom-0.2.0.tgz"));
    expect(readFileSync(join(folder, "notes.md"), "utf8")).toBe("Notes of 0.2.0.\n");
    const envelope = JSON.parse(readFileSync(join(folder, "manifest.dsse.json"), "utf8"));
    expect(envelope.payloadType).toBe(RELEASE_PAYLOAD_TYPE);
    expect(envelope.signatures).toEqual([{ keyid: signer.keyId, sig: expect.any(String) }]);
    const manifest = JSON.parse(Buffer.from(envelope.payload, "base64").toString());
    expect(manifest).toEqual(first.manifest);
    expect(manifest).toMatchObject({
      format: "loom-release-manifest", formatVersion: 1, name: "loom", version: "0.2.0", git: null, notes: "Notes of 0.2.0.\n",
      package: { file: "loom-0.2.0.tgz", size: tgz.length, sha256: createHash("sha256").update(tgz).digest("hex") },
      schema: { version: LATEST_SCHEMA_VERSION, migrations: MIGRATIONS.map(({ version, description, keepsPrevious }) => ({ version, description, keepsPrevious: keepsPrevious ?? false })) },
    });
  });

  it("hashes every file the package holds, and only those", () => {
    const root = join(dir, "pkg-0.2.0");
    const paths = first.manifest.files.map((file) => file.path).sort();
    expect(paths).toEqual(["README.md", `dist/deep/er/${"long-name-".repeat(12)}.js`, "dist/main.js", "package.json"]);
    for (const file of first.manifest.files) {
      const bytes = readFileSync(join(root, file.path));
      expect(file, file.path).toEqual({ path: file.path, size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
    }
  });

  it("lists releases newest first by semantic version", () => {
    const index = JSON.parse(readFileSync(join(feed, "index.json"), "utf8"));
    expect(index.format).toBe("loom-release-feed");
    expect(index.releases.map((release: { version: string }) => release.version)).toEqual(["0.10.0", "0.2.0", "0.1.5"]);
    expect(index.releases[1]).toEqual({ version: "0.2.0", date: first.manifest.date, files: { package: "releases/0.2.0/loom-0.2.0.tgz", manifest: "releases/0.2.0/manifest.dsse.json", notes: "releases/0.2.0/notes.md" } });
  });

  it("refuses to build a version again without --replace, and replaces it with", async () => {
    await expect(build(feed, "0.2.0")).rejects.toThrow("the feed already has version 0.2.0: give --replace to build it again");
    expect(readFileSync(join(feed, "releases", "0.2.0", "notes.md"), "utf8")).toBe("Notes of 0.2.0.\n");
    await build(feed, "0.2.0", { replace: true, notes: "Rebuilt.\n" });
    const index = JSON.parse(readFileSync(join(feed, "index.json"), "utf8"));
    expect(index.releases.map((release: { version: string }) => release.version)).toEqual(["0.10.0", "0.2.0", "0.1.5"]);
    expect(readFileSync(join(feed, "releases", "0.2.0", "notes.md"), "utf8")).toBe("Rebuilt.\n");
  }, 30_000);

  it("refuses a malformed index, naming it and the entry", async () => {
    const broken = join(dir, "broken-feed");
    mkdirSync(broken);
    writeFileSync(join(broken, "index.json"), JSON.stringify({ format: "loom-release-feed", formatVersion: 1, releases: [{ version: "1.0", date: "", files: {} }] }));
    await expect(build(broken, "0.3.0")).rejects.toThrow(`${join(broken, "index.json")}: malformed feed index: releases[0].version "1.0" must be a semantic version`);
  }, 30_000);
});

describe("checkUpdates", () => {
  const feed = join(dir, "check-feed");
  beforeAll(async () => {
    for (const version of ["0.1.0", "0.3.0", "0.4.0-rc.1", "0.4.0"]) await build(feed, version);
  }, 60_000);

  it("lists the newer releases, newest first, verified, with their signed notes", async () => {
    const result = await checkUpdates(openFeed(feed), "0.3.0", trusted);
    expect(result).toEqual({
      feed, currentVersion: "0.3.0",
      releases: [
        { version: "0.4.0", date: expect.any(String), notes: "Notes of 0.4.0.\n", signedBy: signer.keyId, packageMatches: true, schemaVersion: LATEST_SCHEMA_VERSION, verified: true, problems: [] },
        { version: "0.4.0-rc.1", date: expect.any(String), notes: "Notes of 0.4.0-rc.1.\n", signedBy: signer.keyId, packageMatches: true, schemaVersion: LATEST_SCHEMA_VERSION, verified: true, problems: [] },
      ],
    });
    expect((await checkUpdates(openFeed(feed), "0.4.0", trusted)).releases).toEqual([]);
  });

  it("refuses a release signed by an unknown key, naming the key and the file", async () => {
    const feedOfStranger = join(dir, "stranger-feed");
    await build(feedOfStranger, "0.5.0", { key: stranger.privateKeyPath });
    const [release] = (await checkUpdates(openFeed(feedOfStranger), "0.3.0", trusted)).releases;
    expect(release).toMatchObject({ version: "0.5.0", signedBy: null, verified: false, packageMatches: null, notes: "Notes of 0.5.0.\n" });
    expect(release!.problems).toEqual([`${join(feedOfStranger, "releases/0.5.0/manifest.dsse.json")}: signed by unknown key ${stranger.keyId} (trusted: ${signer.keyId})`]);
  }, 30_000);

  it("detects a changed package, naming the file and the version", async () => {
    const tampered = join(dir, "tampered-feed");
    await build(tampered, "0.6.0");
    const tgz = join(tampered, "releases", "0.6.0", "loom-0.6.0.tgz");
    const bytes = readFileSync(tgz);
    bytes[bytes.length - 1]! ^= 1;
    writeFileSync(tgz, bytes);
    const [release] = (await checkUpdates(openFeed(tampered), "0.3.0", trusted)).releases;
    expect(release).toMatchObject({ signedBy: signer.keyId, packageMatches: false, verified: false });
    expect(release!.problems).toEqual([expect.stringMatching(new RegExp(`^${tgz.replace(/[.]/g, "\\.")}: SHA-256 [0-9a-f]{64} .* does not match the signed manifest's .* for version 0\\.6\\.0: the package was changed$`))]);
  }, 30_000);

  it("refuses a signed manifest of another version offered under this one", async () => {
    const replayed = join(dir, "replay-feed");
    await build(replayed, "0.7.0");
    // The index edited to call 0.7.0's signed files 0.8.0: the signature holds, the version does not.
    const indexPath = join(replayed, "index.json");
    writeFileSync(indexPath, readFileSync(indexPath, "utf8").replace('"version": "0.7.0"', '"version": "0.8.0"'));
    const [release] = (await checkUpdates(openFeed(replayed), "0.3.0", trusted)).releases;
    expect(release).toMatchObject({ version: "0.8.0", verified: false });
    expect(release!.problems[0]).toMatch(/manifest\.dsse\.json: the signed manifest is for version 0\.7\.0, the index says 0\.8\.0/);
  }, 30_000);

  it("names a malformed manifest payload", async () => {
    const malformed = join(dir, "malformed-feed");
    await build(malformed, "0.9.0");
    const path = join(malformed, "releases", "0.9.0", "manifest.dsse.json");
    const { privateKey, keyId } = readPrivateKey(signer.privateKeyPath);
    writeFileSync(path, JSON.stringify(signEnvelope(Buffer.from(JSON.stringify({ format: "loom-release-manifest", formatVersion: 1, name: "loom", version: "0.9.0" })), RELEASE_PAYLOAD_TYPE, privateKey, keyId)));
    const [release] = (await checkUpdates(openFeed(malformed), "0.3.0", trusted)).releases;
    expect(release!.problems).toEqual([`${path} (payload): malformed release manifest: date must be an ISO 8601 date`]);
  }, 30_000);

  it("fetches a release to install only verified: its manifest, package bytes and signer; else every problem, named", async () => {
    const source = openFeed(feed);
    const release = (await readFeedIndex(source)).releases.find((entry) => entry.version === "0.4.0")!;
    const verified = await fetchVerifiedRelease(source, release, trusted);
    expect(verified.release).toBe(release);
    expect(verified.signedBy).toBe(signer.keyId);
    expect(verified.manifest).toMatchObject({ version: "0.4.0", notes: "Notes of 0.4.0.\n" });
    expect(verified.tgz.equals(readFileSync(join(feed, release.files.package)))).toBe(true);
    const manifestPath = join(feed, release.files.manifest);
    await expect(fetchVerifiedRelease(source, release, readTrustedKeys([stranger.publicKeyPath], config))).rejects.toThrow(
      `release 0.4.0 does not verify: ${manifestPath}: signed by unknown key ${signer.keyId} (trusted: ${stranger.keyId})`,
    );

    const tamperedFeed = join(dir, "fetch-tampered-feed");
    await build(tamperedFeed, "0.6.1");
    const tampered = (await readFeedIndex(openFeed(tamperedFeed))).releases[0]!;
    const tgzPath = join(tamperedFeed, tampered.files.package);
    const original = readFileSync(tgzPath);
    const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
    // A changed byte, and the same bytes with one more: the hash, then the size, disagree with the signed manifest.
    for (const bytes of [Buffer.from(original.map((byte, index) => (index === original.length - 1 ? byte ^ 1 : byte))), Buffer.concat([original, Buffer.from([0])])]) {
      writeFileSync(tgzPath, bytes);
      await expect(fetchVerifiedRelease(openFeed(tamperedFeed), tampered, trusted)).rejects.toThrow(
        `release 0.6.1 does not verify: ${tgzPath}: SHA-256 ${sha(bytes)} (${bytes.length} bytes) does not match the signed manifest's ${sha(original)} (${original.length} bytes): the package was changed`,
      );
    }
  }, 30_000);

  it("orders the newer releases newest first whatever the index's order", async () => {
    const shuffled = join(dir, "shuffled-feed");
    for (const version of ["0.4.1", "0.10.0", "0.5.0"]) await build(shuffled, version);
    const indexPath = join(shuffled, "index.json");
    const index = JSON.parse(readFileSync(indexPath, "utf8"));
    index.releases.reverse();
    writeFileSync(indexPath, JSON.stringify(index));
    expect((await checkUpdates(openFeed(shuffled), "0.4.0", trusted)).releases.map((release) => release.version)).toEqual(["0.10.0", "0.5.0", "0.4.1"]);
  }, 30_000);

  it("names what it cannot read or parse: notes (shown empty), the package, a payload, a package the manifest does not name", async () => {
    const broken = join(dir, "unreadable-parts-feed");
    for (const version of ["1.0.0", "1.1.0", "1.2.0", "1.3.0"]) await build(broken, version);
    const folder = (version: string) => join(broken, "releases", version);
    // 1.0.0: signed by a stranger and without its notes file: unverified, its notes shown empty.
    writeFileSync(join(folder("1.0.0"), "manifest.dsse.json"), readFileSync(join(folder("1.0.0"), "manifest.dsse.json"), "utf8").replace(signer.keyId, stranger.keyId));
    rmSync(join(folder("1.0.0"), "notes.md"));
    // 1.1.0: its package gone.
    rmSync(join(folder("1.1.0"), "loom-1.1.0.tgz"));
    // 1.2.0: a signed payload that is not JSON.
    const { privateKey, keyId } = readPrivateKey(signer.privateKeyPath);
    writeFileSync(join(folder("1.2.0"), "manifest.dsse.json"), JSON.stringify(signEnvelope(Buffer.from("not json"), RELEASE_PAYLOAD_TYPE, privateKey, keyId)));
    // 1.3.0: the index names another package file than the signed manifest.
    const indexPath = join(broken, "index.json");
    writeFileSync(indexPath, readFileSync(indexPath, "utf8").replace("releases/1.3.0/loom-1.3.0.tgz", "releases/1.3.0/other.tgz"));
    const byVersion = new Map((await checkUpdates(openFeed(broken), "0.1.0", trusted)).releases.map((release) => [release.version, release]));
    expect(byVersion.get("1.0.0")).toMatchObject({ notes: "", signedBy: null, verified: false, problems: [expect.stringContaining(`signed by unknown key ${stranger.keyId}`)] });
    expect(byVersion.get("1.1.0")).toMatchObject({ notes: "Notes of 1.1.0.\n", signedBy: signer.keyId, packageMatches: null, verified: false, problems: [expect.stringContaining(`cannot read ${join(folder("1.1.0"), "loom-1.1.0.tgz")}`)] });
    expect(byVersion.get("1.2.0")!.problems).toEqual([expect.stringMatching(new RegExp(`^${join(folder("1.2.0"), "manifest.dsse.json").replace(/[.]/g, "\\.")} \\(payload\\): not JSON \\(`))]);
    expect(byVersion.get("1.3.0")).toMatchObject({ signedBy: null, verified: false, problems: [`${join(folder("1.3.0"), "manifest.dsse.json")}: the signed manifest names package loom-1.3.0.tgz, the index releases/1.3.0/other.tgz`] });
  }, 60_000);

  it("fails on an unreadable feed or a malformed index, naming it", async () => {
    await expect(checkUpdates(openFeed(join(dir, "nowhere")), "0.3.0", trusted)).rejects.toThrow(`cannot read ${join(dir, "nowhere", "index.json")}: `);
    const bad = join(dir, "bad-index");
    mkdirSync(bad);
    writeFileSync(join(bad, "index.json"), "{ not json");
    await expect(checkUpdates(openFeed(bad), "0.3.0", trusted)).rejects.toThrow(`${join(bad, "index.json")}: not JSON`);
    writeFileSync(join(bad, "index.json"), JSON.stringify({ format: "loom-release-feed", formatVersion: 1, releases: [{ version: "1.0.0", date: "x", files: { package: "../../etc/passwd", manifest: "m", notes: "n" } }] }));
    await expect(checkUpdates(openFeed(bad), "0.3.0", trusted)).rejects.toThrow("releases[0].files.package must be a relative path inside the feed");
  });

  describe("over HTTP on the loopback interface", () => {
    const server = createServer((request, response) => {
      const path = join(feed, decodeURIComponent(new URL(request.url!, "http://x").pathname.replace(/^\/feed\//, "")));
      if (!existsSync(path)) return void response.writeHead(404).end();
      response.writeHead(200).end(readFileSync(path));
    });
    let base = "";
    beforeAll(async () => {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("checks the same releases as the folder", async () => {
      const result = await checkUpdates(openFeed(base), "0.3.0", trusted);
      expect(result.releases.map((release) => [release.version, release.verified, release.signedBy])).toEqual([["0.4.0", true, signer.keyId], ["0.4.0-rc.1", true, signer.keyId]]);
    });

    it("names the URL that failed", async () => {
      await expect(checkUpdates(openFeed(`${base}/missing`), "0.3.0", trusted)).rejects.toThrow(`cannot read ${base}/missing/index.json: HTTP 404`);
    });

    it("stops reading past the size bound, naming the URL", async () => {
      const bounded = openFeed(base);
      await expect(bounded.read("index.json", 16)).rejects.toThrow(`cannot read ${base}/index.json: more than the 16 bytes allowed`);
    });

    it("reads plain http:// only from this machine", () => {
      expect(() => openFeed("http://releases.example/loom")).toThrow("feed http://releases.example/loom: only https:// feeds are read (http:// only for 127.0.0.1, localhost or [::1])");
      expect(() => openFeed("ftp://127.0.0.1/loom")).toThrow(/only https:\/\/ feeds are read/);
    });
  });
});

// The real package, packed once (slow), only where a full build exists: what a release of loom ships.
const fullBuild = existsSync(join(PACKAGE_ROOT, "dist", "wasm", "kernels.wasm")) && existsSync(join(PACKAGE_ROOT, "dist", "server", "cli", "main.js"));
describe.skipIf(!fullBuild)("the repository's own package", () => {
  it("holds the built code, the WebAssembly, the WGSL kernels and the fallback model, and no sources or tests", async () => {
    const out = mkdtempSync(join(dir, "pack-"));
    const packed = await packPackage(PACKAGE_ROOT, out);
    const paths = listTgzFiles(readFileSync(packed.path), packed.path).map((file) => file.path.replace(/^package\//, ""));
    for (const needed of ["package.json", "README.md", "dist/server/cli/main.js", "dist/wasm/kernels.wasm", "dist/engine/host/engine-worker.js", "models/stories260K/stories260K.gguf", "models/stories260K/LICENSE"]) expect(paths).toContain(needed);
    expect(paths.some((path) => path.endsWith(".wgsl"))).toBe(true);
    expect(paths.filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))).toEqual([]);
  }, 120_000);
});
