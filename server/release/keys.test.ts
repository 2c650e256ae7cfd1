// Signing keys: the private key's file mode, the key id's derivation, and trusted keys read from the config.
import { createHash, createPublicKey, generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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

  it("never overwrites an existing key", () => {
    expect(() => writeKeyPair(join(dir, "new", "keys"))).toThrow(/EEXIST.*release-key\.pem/);
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

  it.each([
    ["missing.pub.pem", /loom\.json: updates\.trustedKeys\[0\]: cannot read .*missing\.pub\.pem/],
    ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", /updates\.trustedKeys\[0\]: not a PEM public key/],
    [privateKey.export({ format: "pem", type: "pkcs8" }).toString(), /updates\.trustedKeys\[0\]: a private key; trust the public key/],
    [generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "pem", type: "spki" }).toString(), /updates\.trustedKeys\[0\]: an ec key; release keys are Ed25519/],
  ])("refuses %s naming the entry", (entry, message) => {
    expect(() => readTrustedKeys([entry], config)).toThrow(message);
  });
});
