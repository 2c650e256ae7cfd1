// Key secrets: the kind a key's text claims (by its prefix only, at its start), the stored digest (SHA-256 of the
// key's UTF-8 bytes, lower-case hex) and the minted key's shape.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DISPLAY_SECRET_CHARACTERS, KEY_PREFIXES, digestKey, keyKindOf, mintKey } from "./key-secret.js";

describe("key secrets", () => {
  it("tell a key's kind by the prefix it starts with, and nothing for other text", () => {
    expect(keyKindOf(`sk-mgmt-${"a".repeat(43)}`)).toBe("management");
    expect(keyKindOf(`sk-gw-${"a".repeat(43)}`)).toBe("inference");
    expect(keyKindOf("sk-gw-")).toBe("inference");
    for (const text of ["", "sk-", "sk-other-abc", `x${"sk-gw-"}abc`, "abc-sk-gw-", "abc-sk-mgmt-", "SK-GW-abc", " sk-gw-abc"]) {
      expect(keyKindOf(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  it("digest the key's UTF-8 bytes with SHA-256 into lower-case hex", () => {
    expect(digestKey("sk-gw-abc")).toBe(createHash("sha256").update(Buffer.from("sk-gw-abc", "utf8")).digest("hex"));
    // Not Latin-1 or UTF-16: a character outside ASCII is hashed as its UTF-8 bytes.
    expect(digestKey("sk-gw-é€")).toBe(createHash("sha256").update(Buffer.from([...Buffer.from("sk-gw-"), 0xc3, 0xa9, 0xe2, 0x82, 0xac])).digest("hex"));
    expect(digestKey("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("mint keys of each kind: the prefix, 32 random bytes in base64url, a 6-character display prefix and the digest", () => {
    for (const kind of ["inference", "management"] as const) {
      const minted = mintKey(kind);
      const secret = minted.key.slice(KEY_PREFIXES[kind].length);
      expect(minted.key.startsWith(KEY_PREFIXES[kind])).toBe(true);
      expect(Buffer.from(secret, "base64url")).toHaveLength(32);
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(minted.keyPrefix).toBe(`${KEY_PREFIXES[kind]}${secret.slice(0, DISPLAY_SECRET_CHARACTERS)}`);
      expect(minted.digest).toBe(digestKey(minted.key));
      expect(keyKindOf(minted.key)).toBe(kind);
    }
    expect(mintKey("inference").key).not.toBe(mintKey("inference").key);
  });
});
