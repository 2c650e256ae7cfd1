// Key secrets: minting (32 random bytes, base64url, behind the kind's prefix), the SHA-256 digest that alone is
// stored, and the short non-secret display prefix.
import { createHash, randomBytes } from "node:crypto";
import type { KeyKind } from "../contract.js";

/** The text every key of a kind starts with. */
export const KEY_PREFIXES: Readonly<Record<KeyKind, string>> = { inference: "sk-gw-", management: "sk-mgmt-" };

/** Random bytes in a secret (256 bits). */
export const SECRET_BYTES = 32;

/** Characters of the secret shown in the display prefix: 36 of its 256 bits, too few to help a guess. */
export const DISPLAY_SECRET_CHARACTERS = 6;

/** A freshly minted key: the full value (shown once), its display prefix and the digest to store. */
export interface MintedKey {
  key: string;
  keyPrefix: string;
  digest: string;
}

/** Mints a key of `kind`: `sk-gw-<secret>` or `sk-mgmt-<secret>`, the secret 32 random bytes in base64url. */
export function mintKey(kind: KeyKind): MintedKey {
  const secret = randomBytes(SECRET_BYTES).toString("base64url");
  const key = `${KEY_PREFIXES[kind]}${secret}`;
  return { key, keyPrefix: `${KEY_PREFIXES[kind]}${secret.slice(0, DISPLAY_SECRET_CHARACTERS)}`, digest: digestKey(key) };
}

/** The SHA-256 digest of a full key, lower-case hex: what the database stores and looks keys up by. */
export function digestKey(key: string): string {
  // Stryker disable next-line StringLiteral: Node reads a string as UTF-8 when the encoding is "" too
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** The kind a key's text claims by its prefix, or undefined for text of neither form. */
export function keyKindOf(key: string): KeyKind | undefined {
  if (key.startsWith(KEY_PREFIXES.management)) return "management";
  if (key.startsWith(KEY_PREFIXES.inference)) return "inference";
  return undefined;
}
