// Signing keys: the private key's file mode, the key id's derivation, and trusted keys read from the config.
import { createHash, createPublicKey, createSecretKey, generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { keyIdOf, readPrivateKey, readTrustedKeys, writeKeyPair } from "./keys.js";

const dir = mkdtempSync(join(tmpdir(), "loom-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("writeKeyPair", () => {
  const keys = writeKeyPair(join(dir, "new", "keys"));

  it.skipIf(process.platform === "win32")("writes the private key readable by its owner only", () => {
    expect(statSync(keys.privateKeyPath).mode & 0o777).toBe(0o600);
    expect(statSync(keys.publicKeyPath).mode & 0o600).toBe(0o600);
  });

  it("names the pair by the first 16 hex digits of the SHA-256 of the raw public key", () => {
    const publicKey = createPublicKey(readFileSync(keys.publicKeyPath));
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    expect(keys.keyId).toBe(createHash("sha256").update(raw).digest("hex").slice(0, 16));
    expect(readPrivateKey(keys.privateKeyPath).keyId).toBe(keys.keyId);
  });

  it("names the files release-key.pem and release-key.pub.pem in the folder it makes", () => {
    expect(keys.privateKeyPath).toBe(join(dir, "new", "keys", "release-key.pem"));
    expect(keys.publicKeyPath).toBe(join(dir, "new", "keys", "release-key.pub.pem"));
    expect(readFileSync(keys.privateKeyPath, "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(readFileSync(keys.publicKeyPath, "utf8")).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
  });

  it("never overwrites an existing key", () => {
    expect(() => writeKeyPair(join(dir, "new", "keys"))).toThrow(/EEXIST.*release-key\.pem/);
    // A public key alone in the folder is kept too.
    const folder = join(dir, "public-only");
    mkdirSync(folder);
    writeFileSync(join(folder, "release-key.pub.pem"), "kept");
    expect(() => writeKeyPair(folder)).toThrow(/EEXIST.*release-key\.pub\.pem/);
    expect(readFileSync(join(folder, "release-key.pub.pem"), "utf8")).toBe("kept");
  });
});

describe("keyIdOf", () => {
  it("refuses a key that is not Ed25519, naming its type", () => {
    expect(() => keyIdOf(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey)).toThrow(new Error("release keys are Ed25519, got ec"));
    expect(() => keyIdOf(createSecretKey(Buffer.alloc(32)))).toThrow(new Error("release keys are Ed25519, got a symmetric key"));
  });
});

describe("readPrivateKey", () => {
  it("refuses a file that is not an Ed25519 private key, naming it", () => {
    const path = join(dir, "rsa.pem");
    writeFileSync(path, generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ format: "pem", type: "pkcs8" }));
    expect(() => readPrivateKey(path)).toThrow(`--key ${path}: an rsa key; release keys are Ed25519`);
    expect(() => readPrivateKey(join(dir, "missing.pem"))).toThrow(/--key .*missing\.pem: not a readable PEM private key/);
  });
});

describe("readTrustedKeys", () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const pem = publicKey.export({ format: "pem", type: "spki" }).toString();
  writeFileSync(join(dir, "trusted.pub.pem"), pem);
  const config = join(dir, "loom.json");

  it("reads PEM text and paths relative to the config file", () => {
    const other = generateKeyPairSync("ed25519").publicKey;
    const keys = readTrustedKeys(["trusted.pub.pem", other.export({ format: "pem", type: "spki" }).toString()], config);
    expect([...keys.keys()]).toEqual([keyIdOf(publicKey), keyIdOf(other)]);
  });

  // Named by what they are, not by the PEM text: a test name holding newlines cannot be picked out by name.
  it.each([
    ["a missing file", "missing.pub.pem", /loom\.json: updates\.trustedKeys\[0\]: cannot read .*missing\.pub\.pem/],
    ["malformed PEM", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", /updates\.trustedKeys\[0\]: not a PEM public key/],
    ["a private key", privateKey.export({ format: "pem", type: "pkcs8" }).toString(), /^.*loom\.json: updates\.trustedKeys\[0\]: a private key; trust the public key \(release-key\.pub\.pem\) instead$/],
    ["an EC key", generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "pem", type: "spki" }).toString(), /^.*loom\.json: updates\.trustedKeys\[0\]: an ec key; release keys are Ed25519$/],
  ])("refuses %s, naming the entry", (_what, entry, message) => {
    expect(() => readTrustedKeys([entry], config)).toThrow(message);
  });
});
