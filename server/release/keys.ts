// Release signing keys: Ed25519 pairs in PEM files, each named by a key id derived from the public key alone, so
// that a verifier computes the same id from the PEM it trusts.
import { type KeyObject, createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** The file names `loom release keygen` writes in its folder. */
export const PRIVATE_KEY_FILE = "release-key.pem";
export const PUBLIC_KEY_FILE = "release-key.pub.pem";

/** The key id: the first 16 hex digits of the SHA-256 of the raw 32-byte Ed25519 public key. */
export function keyIdOf(publicKey: KeyObject): string {
  if (publicKey.asymmetricKeyType !== "ed25519") throw new Error(`release keys are Ed25519, got ${publicKey.asymmetricKeyType ?? "a symmetric key"}`);
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
  return createHash("sha256").update(raw).digest("hex").slice(0, 16);
}

/** A written key pair. */
export interface WrittenKeyPair {
  keyId: string;
  privateKeyPath: string;
  publicKeyPath: string;
}

/** Makes a key pair in `dir` (created if missing): the private key mode 0600; existing files are never overwritten. */
export function writeKeyPair(dir: string): WrittenKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  mkdirSync(dir, { recursive: true });
  const privateKeyPath = join(dir, PRIVATE_KEY_FILE);
  const publicKeyPath = join(dir, PUBLIC_KEY_FILE);
  // "wx": an existing key (perhaps the one releases are signed with) is kept, and the error names it.
  writeFileSync(privateKeyPath, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600, flag: "wx" });
  writeFileSync(publicKeyPath, publicKey.export({ format: "pem", type: "spki" }), { mode: 0o644, flag: "wx" });
  return { keyId: keyIdOf(publicKey), privateKeyPath, publicKeyPath };
}

/** Reads a private signing key. @throws Error naming the file when it is unreadable or not an Ed25519 private key. */
export function readPrivateKey(path: string): { privateKey: KeyObject; keyId: string } {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(path));
  } catch (error) {
    throw new Error(`--key ${path}: not a readable PEM private key (${(error as Error).message})`);
  }
  if (privateKey.asymmetricKeyType !== "ed25519") throw new Error(`--key ${path}: an ${privateKey.asymmetricKeyType} key; release keys are Ed25519 (loom release keygen)`);
  return { privateKey, keyId: keyIdOf(createPublicKey(privateKey)) };
}

/**
 * The trusted public keys by key id, from config entries: PEM text, or a path to a PEM file (relative to the
 * config file's folder). @throws Error naming the entry (updates.trustedKeys[i]) at fault.
 */
export function readTrustedKeys(entries: readonly string[], configPath: string): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  entries.forEach((entry, index) => {
    const where = `${configPath}: updates.trustedKeys[${index}]`;
    let pem: string;
    if (entry.includes("-----BEGIN")) pem = entry;
    else {
      const path = isAbsolute(entry) ? entry : resolve(dirname(configPath), entry);
      try {
        // Stryker disable next-line StringLiteral: read as a Buffer (no encoding), the PEM checks below behave the same
        pem = readFileSync(path, "utf8");
      } catch (error) {
        throw new Error(`${where}: cannot read ${path} (${(error as Error).message})`);
      }
    }
    // createPublicKey would accept a private key too: trusting one means it was copied where it must not be.
    if (pem.includes("PRIVATE KEY")) throw new Error(`${where}: a private key; trust the public key (release-key.pub.pem) instead`);
    let key: KeyObject;
    try {
      key = createPublicKey(pem);
    } catch (error) {
      throw new Error(`${where}: not a PEM public key (${(error as Error).message})`);
    }
    if (key.asymmetricKeyType !== "ed25519") throw new Error(`${where}: an ${key.asymmetricKeyType} key; release keys are Ed25519`);
    keys.set(keyIdOf(key), key);
  });
  return keys;
}
