// Signatures on the thinking blocks this server returns, so that a client sending a conversation back cannot slip
// invented reasoning into an assistant turn: Anthropic's API requires thinking blocks to come back unmodified, and
// we enforce the same with an HMAC under a server secret (random per process unless configured, in which case
// signatures survive restarts and work across replicas sharing the secret).
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Domain separation and versioning: a signature over thinking can never be confused with another use of the same
 * secret, and a future format change (v2) invalidates old signatures instead of misreading them.
 */
const DOMAIN = "loom-thinking-v1\0";

/** HMAC-SHA256 output is 32 bytes: 44 base64 characters ending in one "=". */
const SIGNATURE_SHAPE = /^[A-Za-z0-9+/]{43}=$/;

/** Signs and verifies thinking text (the `signature` of Anthropic `thinking` blocks). */
export class ThinkingSigner {
  private readonly key: Buffer;

  /** @param secret the HMAC key: raw bytes, or a string taken as UTF-8. Must not be empty. */
  constructor(secret: Uint8Array | string) {
    this.key = typeof secret === "string" ? Buffer.from(secret, "utf8") : Buffer.from(secret);
    if (this.key.length === 0) throw new TypeError("ThinkingSigner: the secret must not be empty");
  }

  /** A signer with a fresh random 32-byte secret: signatures then hold for this process only. */
  static withRandomSecret(): ThinkingSigner {
    return new ThinkingSigner(randomBytes(32));
  }

  /** The signature of `thinking`: base64 of HMAC-SHA256 over the domain tag and the text. */
  sign(thinking: string): string {
    return this.mac(thinking).toString("base64");
  }

  /** Whether `signature` is this signer's signature of `thinking`. False on any malformed input; never throws. */
  verify(thinking: unknown, signature: unknown): boolean {
    if (typeof thinking !== "string" || typeof signature !== "string") return false;
    // Buffer's base64 decoder skips bad characters silently: insist on the exact shape we produce.
    if (!SIGNATURE_SHAPE.test(signature)) return false;
    try {
      return timingSafeEqual(Buffer.from(signature, "base64"), this.mac(thinking));
    } catch {
      return false;
    }
  }

  private mac(thinking: string): Buffer {
    // UTF-16 code units, not UTF-8: UTF-8 encoding maps every lone surrogate to U+FFFD, so two different strings
    // would share a signature; the code units are exactly what JSON round-trips.
    return createHmac("sha256", this.key).update(DOMAIN, "utf8").update(thinking, "utf16le").digest();
  }
}
