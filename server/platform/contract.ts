// The platform's parts as the rest of it sees them: the database (one query interface over PGlite and PostgreSQL),
// the stores of organizations, keys and usage, and the limit store. Plain data at every boundary; each part lives in
// its own folder (db/, store/, limits/) and is tested against the real thing (PGlite, PostgreSQL, Redis).

/** One SQL statement's rows. Parameters are `$1`, `$2`, ... in both back ends; one schema and one set of queries. */
export interface Sql {
  query<Row extends Record<string, unknown> = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A statement run on every request: parsed and planned once per connection under `name`, then only bound and run. */
export interface PreparedStatement {
  /** Unique per text (a name given two texts is an error). */
  readonly name: string;
  readonly text: string;
}

/** A database connection (pool), migrated to the schema this code understands. */
export interface Database extends Sql {
  readonly kind: "pglite" | "postgres";
  /**
   * Runs `statement` on its own (autocommit, outside any transaction()), prepared once per connection: for the
   * statements on the request path, where parsing and planning were half of a commit's time (docs/performance/platform.md).
   * Parameters are text (or null), cast in the statement's own text (`$1::jsonb`).
   */
  queryPrepared<Row extends Record<string, unknown> = Record<string, unknown>>(statement: PreparedStatement, params: readonly (string | null)[]): Promise<Row[]>;
  /** Runs `work` in one transaction (BEGIN ... COMMIT, ROLLBACK on a throw). */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** How an organization pays. */
export type BillingMode = "subscription" | "prepaid";

/** Limits of an organization or key; undefined fields: no limit of that kind at that level. */
export interface Limits {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  tokensPerDay?: number;
}

/** Defaults for a new organization (issue 15). */
export const DEFAULT_ORGANIZATION_LIMITS: Required<Limits> = { requestsPerMinute: 100, tokensPerMinute: 1_000_000, tokensPerDay: 10_000_000 };

/** A daily allowance: how big today's grant is, in credits (dollars) or tokens, and whether it stops requests. */
export interface DailyAllowance {
  basis: "credit" | "tokens";
  /** Dollars (basis credit) or tokens (basis tokens) per UTC day. */
  amount: number;
  /** When true, a day's use past the amount is refused (429); otherwise it is only reported. */
  hardCap: boolean;
}

/** Price of a model for the credit basis and prepaid spend, in dollars per million tokens. */
export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
}

export interface Organization {
  id: string;
  name: string;
  billingMode: BillingMode | null;
  plan: { label: string | null; status: string | null; isUnlimitedComp: boolean };
  dailyAllowance: DailyAllowance | null;
  /** Prepaid balance in dollars (exact to the micro-dollar as stored; a JS number here). */
  creditBalanceDollars: number;
  closedBeta: boolean;
  limits: Limits;
  /** By model slug; "*" applies to any model without its own entry. */
  prices: Record<string, ModelPrice>;
  /** The dedicated pool of engine workers its requests run on (gateways only); null: the shared pool. */
  pool: string | null;
  createdAt: Date;
}

export type KeyKind = "inference" | "management";

/** A key's record. The secret is never stored: only its SHA-256 digest. */
export interface KeyRecord {
  id: string;
  organizationId: string;
  kind: KeyKind;
  name: string;
  /** Non-secret display prefix, e.g. "sk-gw-AbCd1234". */
  keyPrefix: string;
  isActive: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Per-key limits on top of the organization's. */
  limits: Limits;
  /** Model slugs this key may use; null: any. */
  allowedModels: string[] | null;
}

/** What one finished (or aborted, or failed) request used, as its response reported it. */
export interface UsageIncrement {
  organizationId: string;
  keyId: string;
  model: string;
  /** UTC day, YYYY-MM-DD, of the request's end. */
  day: string;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Dollars to take from a prepaid balance (0 for other organizations). */
  spendDollars: number;
}

/** One row of usage: per organization, key, model and UTC day, the sum of its increments. */
export type UsageRow = UsageIncrement;

/**
 * One limit a request draws on, all-or-nothing with the others of its admission.
 * - `window`: a sliding limit of `limit` units per `windowMs` (GCRA: a burst of at most `limit`, then the rate).
 * - `daily`: at most `limit` units per UTC day, counted from `seed()` (the day's use so far, read from the usage
 *   table) the first time the store sees the day's key; it resets at UTC midnight exactly.
 */
export type LimitBucket =
  | { kind: "window"; key: string; limit: number; windowMs: number; cost: number }
  | { kind: "daily"; key: string; limit: number; day: string; cost: number; seed: () => Promise<number> };

/** The state of one bucket after an admission, for rate-limit headers. */
export interface BucketState {
  key: string;
  limit: number;
  /** Units left now (never negative). */
  remaining: number;
  /** Milliseconds until the bucket is full again (window) or until UTC midnight (daily). */
  resetMs: number;
}

/** The outcome of a reserve; `buckets` holds every bucket's state, in the order of the request's buckets. */
export type ReserveResult =
  | { admitted: true; buckets: BucketState[] }
  /**
   * Nothing was taken. `refusedBy`: the key of the refusing bucket that needs the longest wait (one whose limit this
   * cost alone exceeds comes first). `retryAfterMs`: when that bucket would admit this cost (every refusing bucket
   * would then, barring other traffic). `exceedsLimit`: the cost is above that bucket's limit, so no wait admits it
   * ("this request alone exceeds the limit"); `retryAfterMs` is then only the bucket's `resetMs`, not a promise.
   */
  | { admitted: false; refusedBy: string; retryAfterMs: number; exceedsLimit: boolean; buckets: BucketState[] };

/** Where limit counters live: in memory (one process) or in Redis (shared by every loom process). */
export interface LimitStore {
  /** Takes `cost` from every bucket, or from none. @throws LimitStoreUnavailableError when the store cannot be reached. */
  reserve(buckets: readonly LimitBucket[], nowMs: number): Promise<ReserveResult>;
  /**
   * Corrects reservations by `delta` units per bucket (negative: give back; positive: take more, never refused), e.g.
   * a request that reserved max_tokens and produced fewer.
   */
  adjust(adjustments: ReadonlyArray<{ bucket: LimitBucket; delta: number }>, nowMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The limit store cannot be reached (Redis down): admission fails closed unless configured otherwise. */
export class LimitStoreUnavailableError extends Error {
  override readonly name = "LimitStoreUnavailableError";
}

/** The database cannot be reached or answered with an error the caller cannot fix. */
export class DatabaseUnavailableError extends Error {
  override readonly name = "DatabaseUnavailableError";
}

/**
 * A statement was given text the database cannot store (U+0000, a lone UTF-16 surrogate; db/storable-text.ts), so it
 * did not run. Request parsers refuse such fields by name first; this is the last guard, which HTTP surfaces answer
 * with a 400 too (never a 500).
 */
export class UnstorableTextError extends Error {
  override readonly name = "UnstorableTextError";
  constructor(
    message: string,
    /** The statement parameter that held it (1 for `$1`); undefined when the database refused escaped JSON text. */
    readonly parameter?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * An input the platform refuses (an admin command's or an API request's field): `field` names it as the data names it
 * (e.g. `name`, `requestsPerMinute`, `organizationId`), so each surface can point at its own spelling (a CLI flag, a
 * JSON field). HTTP surfaces answer 400 (404 where `notFound`).
 */
export class PlatformInputError extends Error {
  override readonly name = "PlatformInputError";
  constructor(
    readonly field: string,
    message: string,
    /** True when the field names something that does not exist (an unknown organization or key). */
    readonly notFound = false,
  ) {
    super(message);
  }
}
