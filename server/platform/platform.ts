// The platform assembled: the database (PGlite in a data dir, or PostgreSQL), its stores and usage writer, the limit
// store (Redis when given, else memory), and what the server is given of them: the inference keys' Authenticator,
// the Accountant, and the platform routes. loom serve opens it with --data-dir or --database-url.
import type { Authenticator } from "../http/auth.js";
import type { ServerContext } from "../http/context.js";
import type { Surface } from "../http/routes.js";
import { PlatformAccountant } from "./accountant.js";
import { answerAdminRequest } from "./admin/admin-request.js";
import { removeAdminEndpointFile, writeAdminEndpointFile } from "./admin/admin-endpoint-file.js";
import type { Database, LimitStore, Organization } from "./contract.js";
import { openDatabase } from "./db/open-database.js";
import { KeyAuthenticator } from "./keys/key-authenticator.js";
import { MemoryLimitStore } from "./limits/memory-store.js";
import { RedisLimitStore } from "./limits/redis-store.js";
import { platformSurface } from "./routes.js";
import { type PlatformStores, createPlatformStores } from "./store/platform-stores.js";
import { UsageWriter } from "./store/usage-writer.js";

/** Where the platform keeps its data, and how strict it is. */
export interface PlatformOptions {
  /** The embedded database's directory (PGlite); one process at a time. */
  dataDir?: string;
  /** A PostgreSQL URL instead (several processes may share it). */
  databaseUrl?: string;
  /** PostgreSQL schema to use (tests give each run its own). */
  schema?: string;
  /** Redis for limit counters shared by several processes; without it they are in this process's memory. */
  redisUrl?: string;
  /** Key prefix in Redis (processes sharing limits share it). */
  redisKeyPrefix?: string;
  /** Admit requests when Redis cannot be reached (default false: refuse them). */
  failOpen?: boolean;
  /** How long a key or organization read is trusted (default 500 ms): the most a revocation or change takes to apply. */
  cacheMs?: number;
}

/** The running platform. */
export interface Platform {
  readonly database: Database;
  readonly stores: PlatformStores;
  /** Inference keys, for the inference routes. */
  readonly authenticator: Authenticator;
  /** The same keys, as the platform's own surfaces (runs) use them. */
  readonly inferenceKeys: KeyAuthenticator;
  /** Management keys (the management API, the dashboard's organizations). */
  readonly managementKeys: KeyAuthenticator;
  /** Where limit counters live (memory, or Redis), for limits beyond the accountant's (dashboard sign-ins). */
  readonly limits: LimitStore;
  /** Whether requests are admitted while the limit store cannot be reached (--limits-fail-open). */
  readonly limitsFailOpen: boolean;
  /** Admission and settlement of requests: the inference routes', and agent-run turns' (settleWith). */
  readonly accountant: PlatformAccountant;
  /** The platform routes, for startServer's surfaces. */
  readonly surface: (context: ServerContext) => Surface;
  /** Where it keeps its data, for the start banner ("PGlite in DIR", "PostgreSQL at URL"). */
  readonly description: string;
  /** Offers the admin endpoint once the server listens on `port` (embedded database only: writes admin.json). */
  offerAdminEndpoint(port: number): void;
  /** Commits pending usage, removes admin.json, and closes the limit store and the database. */
  close(): Promise<void>;
}

/**
 * Opens the platform's database (migrating it) and limit store.
 * @throws DataDirLockedError, SchemaTooNewError, DatabaseUnavailableError from the database; Error for bad options.
 */
export async function openPlatform(options: PlatformOptions): Promise<Platform> {
  if ((options.dataDir === undefined) === (options.databaseUrl === undefined)) throw new Error("the platform needs a data dir or a database URL (one of them)");
  const database = options.dataDir !== undefined
    ? await openDatabase({ dataDir: options.dataDir })
    : await openDatabase({ url: options.databaseUrl!, ...(options.schema ? { schema: options.schema } : {}) });
  const stores = createPlatformStores(database);
  const limits: LimitStore = options.redisUrl ? new RedisLimitStore({ url: options.redisUrl, ...(options.redisKeyPrefix ? { keyPrefix: options.redisKeyPrefix } : {}) }) : new MemoryLimitStore();
  const cacheMs = options.cacheMs ?? 500;
  const lookup = (digest: string) => stores.keys.findByDigest(digest);
  const inferenceKeys = new KeyAuthenticator(lookup, "inference", cacheMs);
  const managementKeys = new KeyAuthenticator(lookup, "management", cacheMs);
  const organizations = new TtlCache<Organization | undefined>(cacheMs, (id) => stores.organizations.get(id));
  // Each usage commit reads its keys and organizations back: a key in steady use is renewed by its own requests,
  // with no read of its own (a round trip per key and per organization, several times a second).
  const writer = new UsageWriter(database, (read) => {
    for (const { digest, record } of read.keys) inferenceKeys.renew(digest, record, read.readAt);
    for (const organization of read.organizations) organizations.renew(organization.id, organization, read.readAt);
  });
  const accountant = new PlatformAccountant({
    organization: (id) => organizations.get(id),
    consumed: (organizationId, day, keyId) => stores.usage.consumed(organizationId, day, keyId),
    record: (increment) => writer.record(increment),
    holdCredits: async (organizationId, dollars, ttlMs) => {
      const hold = await stores.credits.hold(organizationId, dollars, ttlMs);
      return hold.admitted ? hold.holdId : "insufficient";
    },
    releaseCredits: async (holdId) => {
      await stores.credits.release(holdId);
    },
  }, limits, { failOpen: options.failOpen ?? false });

  let adminToken: string | undefined;
  const surface = platformSurface({
    inferenceKeys,
    managementKeys,
    organization: (id) => stores.organizations.get(id),
    usageOf: (organizationId, day) => stores.usage.today(organizationId, day),
    createInferenceKey: (organizationId, name) => stores.keys.create(organizationId, "inference", name),
    listInferenceKeys: (organizationId) => stores.keys.list(organizationId, "inference"),
    revokeKey: (organizationId, keyId) => stores.keys.revoke(organizationId, keyId),
    admin: () => adminToken === undefined ? undefined : async (authorization, body) => {
      const answer = await answerAdminRequest({ stores, token: adminToken!, authorization, body });
      return answer;
    },
  });
  const description = options.dataDir !== undefined ? `PGlite in ${options.dataDir}` : `PostgreSQL${options.schema ? ` (schema ${options.schema})` : ""}`;
  return {
    database,
    stores,
    authenticator: inferenceKeys,
    inferenceKeys,
    managementKeys,
    limits,
    limitsFailOpen: options.failOpen ?? false,
    accountant,
    surface,
    description: `${description}; limits in ${options.redisUrl ? "Redis" : "memory"}`,
    offerAdminEndpoint(port) {
      if (options.dataDir !== undefined) adminToken = writeAdminEndpointFile(options.dataDir, `http://127.0.0.1:${port}/admin/v1/command`);
    },
    async close() {
      if (options.dataDir !== undefined && adminToken !== undefined) removeAdminEndpointFile(options.dataDir);
      await writer.close();
      await limits.close();
      await database.close();
    },
  };
}

/** Values read through `load`, each trusted for `ttlMs`; concurrent misses share one read. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: Promise<V>; expiresAt: number; refreshing?: boolean }>();

  constructor(private readonly ttlMs: number, private readonly load: (key: string) => Promise<V>, private readonly maxEntries = 10_000) {}

  get(key: string): Promise<V> {
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) {
      // Past half its life, read again in the background (the old value serves until the new one arrives, never past
      // its expiry), so that steady traffic never waits for the database.
      if (entry.expiresAt - now < this.ttlMs / 2 && !entry.refreshing) this.refresh(key, entry);
      return entry.value;
    }
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const value = this.load(key);
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
    // A failed read is not kept: the next request tries again.
    value.catch(() => this.entries.delete(key));
    return value;
  }

  /** Takes `value`, read at `readAt` by someone else, for a cached `key` when that trusts it longer than its entry. */
  renew(key: string, value: V, readAt: number): void {
    const entry = this.entries.get(key);
    if (!entry || entry.expiresAt >= readAt + this.ttlMs) return;
    this.entries.set(key, { value: Promise.resolve(value), expiresAt: readAt + this.ttlMs });
  }

  private refresh(key: string, entry: { value: Promise<V>; expiresAt: number; refreshing?: boolean }): void {
    entry.refreshing = true;
    const startedAt = Date.now();
    this.load(key).then(
      (value) => this.entries.set(key, { value: Promise.resolve(value), expiresAt: startedAt + this.ttlMs }),
      () => { entry.refreshing = false; },
    );
  }
}
