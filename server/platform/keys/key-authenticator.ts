// Inference keys from the database as the inference path's Authenticator: a key is hashed (SHA-256) and looked up by
// digest, its record cached for at most `ttlMs`, so that a key revoked on any process stops working everywhere within
// that time without a database read per request. Keys that cannot be inference keys are refused at once.
import type { Authenticator, Credentials, Principal } from "../../http/auth.js";
import { presentedKey } from "../../http/auth.js";
import { logFailure } from "../../http/log.js";
import { ProtocolError, type WireFormat } from "../../protocol/internal.js";
import type { KeyKind, KeyRecord } from "../contract.js";
import { KEY_PREFIXES, digestKey } from "../store/key-secret.js";

/** A platform principal: the key's record rides along for admission (limits, allowed models). */
export interface KeyPrincipal extends Principal {
  organizationId: string;
  key: KeyRecord;
}

interface CacheEntry {
  /** The active key, or undefined: no such active key. */
  record: KeyRecord | undefined;
  expiresAt: number;
}

/** Looks a key record up by its digest (any kind, active or not). */
export type KeyLookup = (digestHex: string) => Promise<KeyRecord | undefined>;

/** Database keys of one kind, cached briefly. */
export class KeyAuthenticator implements Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly pending = new Map<string, Promise<KeyRecord | undefined>>();
  /** Bumped by forget(): reads begun before it do not fill the cache. */
  private generation = 0;
  /** When forget() last ran (Date.now()): records read no later than that are not taken by renew(). */
  private forgottenAt = -Infinity;

  /**
   * @param kind which keys it admits: inference keys for inference and usage, management keys for management routes.
   * @param ttlMs how long a lookup is trusted: the most a revocation can take to reach this process.
   * @param maxEntries bound on cached digests (unknown keys included), so that random keys cannot grow memory.
   */
  constructor(private readonly lookup: KeyLookup, private readonly kind: KeyKind, private readonly ttlMs = 1000, private readonly maxEntries = 100_000) {}

  authenticate(credentials: Credentials, format: WireFormat): KeyPrincipal | ProtocolError | Promise<KeyPrincipal | ProtocolError> {
    const key = presentedKey(credentials, format);
    if (key === undefined) return missingKey(format);
    const refused = this.refusedByForm(key);
    if (refused) return refused;
    const digest = digestKey(key);
    const cached = this.cache.get(digest);
    const now = Date.now();
    if (cached && cached.expiresAt > now) {
      // Past half its life, the entry is read again in the background, so that a key in steady use never makes a
      // request wait for the database; an entry is still never trusted past its expiry.
      if (cached.expiresAt - now < this.ttlMs / 2 && !this.pending.has(digest)) this.lookUp(digest).catch(() => undefined);
      return this.verdict(cached.record);
    }
    return this.lookUp(digest).then(
      (record) => this.verdict(record),
      (error: unknown) => {
        // The driver's error names the database: the log's, not the client's.
        logFailure("the key could not be checked", error);
        return new ProtocolError("bad_gateway", "the key could not be checked: the platform database did not answer");
      },
    );
  }

  /**
   * Takes `record`, read at `readAt` (Date.now() when its read began) by someone else (the usage commit reads its
   * keys back), as a lookup of `digestHex`: a cached entry is renewed to be trusted until `readAt` + ttlMs when that
   * is longer than it was. Digests not cached are left alone, and so is every record read before the last forget().
   */
  renew(digestHex: string, record: KeyRecord, readAt: number): void {
    const cached = this.cache.get(digestHex);
    if (!cached || readAt <= this.forgottenAt || cached.expiresAt >= readAt + this.ttlMs) return;
    this.cache.set(digestHex, { record, expiresAt: readAt + this.ttlMs });
  }

  /** Forgets a key at once on this process (after a revocation here); other processes forget it within ttlMs. */
  forget(digestHex?: string): void {
    this.forgottenAt = Date.now();
    // Stryker disable next-line UpdateOperator: counting down marks each forget() apart all the same
    this.generation++;
    this.pending.clear();
    if (digestHex === undefined) this.cache.clear();
    else this.cache.delete(digestHex);
  }

  /** A refusal for a key that cannot be of this kind, without a lookup. */
  private refusedByForm(key: string): ProtocolError | undefined {
    const wanted = KEY_PREFIXES[this.kind];
    if (key.startsWith(wanted)) return undefined;
    const other = this.kind === "inference" ? KEY_PREFIXES.management : KEY_PREFIXES.inference;
    if (key.startsWith(other)) return new ProtocolError("authentication", `invalid API key: this route takes ${this.kind} keys (${wanted}...), not ${this.kind === "inference" ? "management" : "inference"} keys`);
    return new ProtocolError("authentication", "invalid API key");
  }

  private verdict(record: KeyRecord | undefined): KeyPrincipal | ProtocolError {
    if (!record || record.kind !== this.kind || !record.isActive) return new ProtocolError("authentication", "invalid API key (unknown or revoked)");
    return { keyId: record.id, organizationId: record.organizationId, key: record };
  }

  /** One lookup per digest at a time; the answer is cached, unknown keys included. */
  private lookUp(digest: string): Promise<KeyRecord | undefined> {
    const inFlight = this.pending.get(digest);
    if (inFlight) return inFlight;
    // Trusted from when the read began; and not cached at all if forget() ran meanwhile (it may be the revocation).
    const startedAt = Date.now();
    const generation = this.generation;
    const lookup = this.lookup(digest).then((record) => {
      if (generation !== this.generation) return record;
      if (this.cache.size >= this.maxEntries) this.evictExpiredOrOldest();
      this.cache.set(digest, { record, expiresAt: startedAt + this.ttlMs });
      return record;
    }).finally(() => {
      if (this.pending.get(digest) === lookup) this.pending.delete(digest);
    });
    this.pending.set(digest, lookup);
    return lookup;
  }

  private evictExpiredOrOldest(): void {
    const now = Date.now();
    for (const [digest, entry] of this.cache) if (entry.expiresAt <= now) this.cache.delete(digest);
    // Maps iterate in insertion order: the first entries are the oldest.
    for (const digest of this.cache.keys()) {
      if (this.cache.size < this.maxEntries) break;
      this.cache.delete(digest);
    }
  }
}

function missingKey(format: WireFormat): ProtocolError {
  const how = format === "anthropic" ? "an x-api-key header or Authorization: Bearer <key>" : "an Authorization: Bearer <key> header";
  return new ProtocolError("authentication", `missing API key: send ${how}`);
}
