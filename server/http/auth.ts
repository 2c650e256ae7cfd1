// API-key authentication behind an interface: open access (--no-auth), static keys from config or LOOM_API_KEYS, or
// the platform's database-backed keys (server/platform/keys/key-authenticator.ts) behind the same interface.
import { createHash, timingSafeEqual } from "node:crypto";
import { ProtocolError, type WireFormat } from "../protocol/internal.js";

/** Who made a request, once authenticated. */
export interface Principal {
  /** A stable, non-secret id of the key (for logs and usage accounting). */
  keyId: string;
  /** The organization that owns the key (platform keys only). */
  organizationId?: string;
}

/** The credentials a request carried. */
export interface Credentials {
  authorization?: string;
  xApiKey?: string;
}

/** Decides whether a request may run. */
export interface Authenticator {
  /**
   * The principal, or a ProtocolError (authentication) saying what is missing or wrong. A promise only where the
   * answer needs a lookup (a platform key not in its cache): what can be refused at once is refused at once, so that
   * the body of a request without a plausible key is never read.
   */
  authenticate(credentials: Credentials, format: WireFormat): Principal | ProtocolError | Promise<Principal | ProtocolError>;
}

/** Everyone is let in (the local runtime, `--no-auth`). */
export class OpenAccess implements Authenticator {
  authenticate(): Principal {
    return { keyId: "anonymous" };
  }
}

/** A fixed set of keys, compared by digest in constant time. */
export class StaticKeys implements Authenticator {
  private readonly digests: Buffer[];

  constructor(keys: readonly string[]) {
    if (keys.length === 0) throw new Error("StaticKeys needs at least one API key (or run with --no-auth)");
    this.digests = keys.map(digest);
  }

  authenticate(credentials: Credentials, format: WireFormat): Principal | ProtocolError {
    const key = presentedKey(credentials, format);
    if (key === undefined) {
      const how = format === "anthropic" ? "an x-api-key header or Authorization: Bearer <key>" : "an Authorization: Bearer <key> header";
      return new ProtocolError("authentication", `missing API key: send ${how}`);
    }
    const presented = digest(key);
    const match = this.digests.findIndex((d) => timingSafeEqual(d, presented));
    if (match < 0) return new ProtocolError("authentication", "invalid API key");
    return { keyId: `key-${presented.toString("hex").slice(0, 12)}` };
  }
}

/** Bearer token, or (messages only) x-api-key. */
export function presentedKey({ authorization, xApiKey }: Credentials, format: WireFormat): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (bearer) return bearer;
  if (format === "anthropic" && xApiKey) return xApiKey.trim();
  return undefined;
}

function digest(key: string): Buffer {
  return createHash("sha256").update(key).digest();
}

/** Keys from a comma-separated environment value (LOOM_API_KEYS). */
export function keysFromEnvironment(value: string | undefined): string[] {
  return (value ?? "").split(",").map((key) => key.trim()).filter(Boolean);
}
