// Inference and management keys: mint (the secret returned once, only its digest stored), look up by digest, list
// without digests, revoke within an organization, and record last use in one statement for many keys.
import { type KeyKind, type KeyRecord, type Limits, PlatformInputError, type Sql } from "../contract.js";
import { newId } from "./ids.js";
import { digestKey, keyKindOf, mintKey } from "./key-secret.js";
import { dateOf, limitsFromRow } from "./numbers.js";
import { CREATED_AT_KEYSET_SQL, type Page, type TimeKeyset, afterNewestFirst, checkedLimit, createdAtKeysetOf, pageOf } from "./page.js";
import { quote, refuseUnknownFields, requireChoice, requireId, requireLimit, requireName, requireObject } from "./validate.js";

/** The columns a KeyRecord is read from: never the digest. */
const COLUMNS = `id, organization_id, kind, name, key_prefix, is_active, created_at, last_used_at, requests_per_minute,
  tokens_per_minute, tokens_per_day, allowed_models`;

/** Optional settings of a new key. */
export interface KeyOptions {
  /** Per-key limits on top of the organization's; absent: none at the key level. */
  limits?: Limits;
  /** Model slugs the key may use; null or absent: any. */
  allowedModels?: string[] | null;
}

/** A new key: its record and, once, its full secret value. */
export interface CreatedKey {
  record: KeyRecord;
  key: string;
}

/** An `api_keys` row (without the digest) as KeyRecord. */
export function keyRecordFromRow(row: Record<string, unknown>): KeyRecord {
  const limits = limitsFromRow(row);
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    kind: row.kind as KeyKind,
    name: row.name as string,
    keyPrefix: row.key_prefix as string,
    isActive: row.is_active as boolean,
    createdAt: row.created_at as Date,
    lastUsedAt: (row.last_used_at as Date | null) ?? null,
    limits,
    allowedModels: (row.allowed_models as string[] | null) ?? null,
  };
}

/** An `api_keys` row as to_jsonb() gives it (timestamps as text) as KeyRecord. */
export function keyRecordFromJson(row: Record<string, unknown>): KeyRecord {
  return keyRecordFromRow({ ...row, created_at: dateOf(row.created_at), last_used_at: row.last_used_at == null ? null : dateOf(row.last_used_at) });
}

/** Checks a new key's options. @throws PlatformInputError naming the bad field. */
export function validateKeyOptions(input: unknown): KeyOptions {
  if (input === undefined) return {};
  const raw = requireObject("options", input);
  refuseUnknownFields(raw, ["limits", "allowedModels"]);
  const options: KeyOptions = {};
  if (raw.limits !== undefined) {
    const limits = requireObject("limits", raw.limits);
    refuseUnknownFields(limits, ["requestsPerMinute", "tokensPerMinute", "tokensPerDay"], "limits.");
    options.limits = {};
    for (const field of ["requestsPerMinute", "tokensPerMinute", "tokensPerDay"] as const) {
      const value = limits[field] === undefined ? null : requireLimit(`limits.${field}`, limits[field]);
      if (value !== null) options.limits[field] = value;
    }
  }
  if (raw.allowedModels !== undefined && raw.allowedModels !== null) {
    if (!Array.isArray(raw.allowedModels) || raw.allowedModels.length === 0) {
      throw new PlatformInputError("allowedModels", `allowedModels must be a non-empty array of model slugs or null, got ${quote(raw.allowedModels)}`);
    }
    options.allowedModels = raw.allowedModels.map((model, index) => requireId(`allowedModels[${index}]`, model));
  }
  return options;
}

/** Keys in the database. */
export class KeyStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Mints a key of `kind` for an organization. Only the SHA-256 digest of the key and a display prefix are stored.
   * @param name 1 to 255 characters, not blank.
   * @throws PlatformInputError naming a bad field, or `organizationId` (notFound) for an unknown organization.
   */
  async create(organizationId: string, kind: KeyKind, name: string, options?: KeyOptions): Promise<CreatedKey> {
    requireId("organizationId", organizationId);
    requireChoice("kind", kind, ["inference", "management"] as const);
    requireName("name", name);
    const { limits = {}, allowedModels = null } = validateKeyOptions(options);
    const minted = mintKey(kind);
    const rows = await this.sql.query(
      `INSERT INTO api_keys (id, organization_id, kind, name, key_prefix, key_digest, requests_per_minute, tokens_per_minute,
         tokens_per_day, allowed_models)
       SELECT $1::text, id, $3::text, $4::text, $5::text, $6::text, $7::bigint, $8::bigint, $9::bigint, $10::jsonb
       FROM organizations WHERE id = $2
       RETURNING ${COLUMNS}`,
      [
        newId("key"), organizationId, kind, name, minted.keyPrefix, minted.digest, limits.requestsPerMinute ?? null,
        limits.tokensPerMinute ?? null, limits.tokensPerDay ?? null, allowedModels === null ? null : JSON.stringify(allowedModels),
      ],
    );
    if (rows[0] === undefined) throw new PlatformInputError("organizationId", `no organization ${organizationId}`, true);
    return { record: keyRecordFromRow(rows[0]), key: minted.key };
  }

  /** The key whose SHA-256 digest (lower-case hex) is `digest`, active or not, or undefined. */
  async findByDigest(digest: string): Promise<KeyRecord | undefined> {
    const [row] = await this.sql.query(`SELECT ${COLUMNS} FROM api_keys WHERE key_digest = $1`, [digest]);
    return row === undefined ? undefined : keyRecordFromRow(row);
  }

  /**
   * The key whose full value is `key`, active or not, or undefined (also for text that is no loom key). A key whose
   * text claims another kind than its record never matches (cannot happen for minted keys; a guard all the same).
   */
  async findByKey(key: string): Promise<KeyRecord | undefined> {
    const kind = keyKindOf(key);
    if (kind === undefined) return undefined;
    const record = await this.findByDigest(digestKey(key));
    return record?.kind === kind ? record : undefined;
  }

  /** The key `keyId` of the organization, or undefined (also for another organization's key). */
  async get(organizationId: string, keyId: string): Promise<KeyRecord | undefined> {
    const [row] = await this.sql.query(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 AND organization_id = $2`, [keyId, organizationId]);
    return row === undefined ? undefined : keyRecordFromRow(row);
  }

  /** The organization's keys (of `kind`, when given), oldest first; records only, never digests or secrets. */
  async list(organizationId: string, kind?: KeyKind): Promise<KeyRecord[]> {
    const rows = kind === undefined
      ? await this.sql.query(`SELECT ${COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY created_order`, [organizationId])
      : await this.sql.query(`SELECT ${COLUMNS} FROM api_keys WHERE organization_id = $1 AND kind = $2 ORDER BY created_order`, [organizationId, kind]);
    return rows.map(keyRecordFromRow);
  }

  /**
   * One page of the organization's keys (of `kind`, when given), newest first (by creation time, then id), after
   * `after` (the previous page's `next`); records only. Reads the index on (organization_id, created_at).
   */
  async page(organizationId: string, options: { kind?: KeyKind; limit: number; after?: TimeKeyset }): Promise<Page<KeyRecord, TimeKeyset>> {
    const limit = checkedLimit(options.limit);
    const params: unknown[] = [organizationId, limit + 1];
    const conditions = ["organization_id = $1"];
    if (options.kind !== undefined) conditions.push(`kind = $${params.push(options.kind)}`);
    if (options.after !== undefined) conditions.push(...afterNewestFirst(options.after, params));
    const rows = await this.sql.query(
      `SELECT ${COLUMNS}, ${CREATED_AT_KEYSET_SQL} FROM api_keys WHERE ${conditions.join(" AND ")}
       ORDER BY created_at DESC, id DESC LIMIT $2`,
      params,
    );
    return pageOf(rows, limit, keyRecordFromRow, createdAtKeysetOf);
  }

  /**
   * Deactivates key `keyId` of the organization. Returns false when the organization has no such key (another
   * organization's key is left alone); true when it is now inactive (revoking twice is not an error).
   */
  async revoke(organizationId: string, keyId: string): Promise<boolean> {
    const rows = await this.sql.query("UPDATE api_keys SET is_active = false WHERE id = $1 AND organization_id = $2 RETURNING id", [keyId, organizationId]);
    return rows.length > 0;
  }

  /**
   * Records when keys were last used, in one statement for all of them; a time earlier than the stored one is
   * ignored, so out-of-order batches never move lastUsedAt back.
   */
  async touch(lastUsed: ReadonlyMap<string, Date>): Promise<void> {
    if (lastUsed.size === 0) return;
    const entries = [...lastUsed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, at]) => ({ id, at: at.toISOString() }));
    await this.sql.query(
      `UPDATE api_keys AS k SET last_used_at = GREATEST(k.last_used_at, v.at)
       FROM jsonb_to_recordset($1::jsonb) AS v(id text, at timestamptz)
       WHERE k.id = v.id`,
      [JSON.stringify(entries)],
    );
  }
}
