// Operator tokens: the operator's credential for the dashboard (`loom admin operator-token create`). Minted like keys
// (32 random bytes, base64url, behind a recognisable prefix), shown once, kept only as a SHA-256 digest. Revoking one
// ends the dashboard sessions signed in with it, in the same transaction.
import { randomBytes } from "node:crypto";
import type { Database } from "../contract.js";
import { newId } from "./ids.js";
import { SECRET_BYTES, digestKey } from "./key-secret.js";
import { requireId, requireName } from "./validate.js";

/** The text every operator token starts with (so a leaked one is recognisable in logs and scanners). */
export const OPERATOR_TOKEN_PREFIX = "lop_";

/** An operator token as `lop_` and 43 base64url characters (what create mints); anything else is never looked up. */
const TOKEN_FORM = /^lop_[A-Za-z0-9_-]{43}$/;

/** The most tokens list() returns (newest first): operators mint a handful, so this only bounds a runaway. */
export const MAX_LISTED_OPERATOR_TOKENS = 1000;

/** An operator token's record: never its digest, never the token. */
export interface OperatorTokenRecord {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A new token: its record and, once, the token itself. */
export interface CreatedOperatorToken {
  record: OperatorTokenRecord;
  token: string;
}

const COLUMNS = "id, name, created_at, last_used_at, revoked_at";

type TokenRow = { id: string; name: string; created_at: Date; last_used_at: Date | null; revoked_at: Date | null };

function recordOf(row: TokenRow): OperatorTokenRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: new Date(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
  };
}

/** Operator tokens in the database; `now` is the clock that stamps creation, use and revocation (tests move it). */
/** How stale lastUsedAt may be: it is written at most once a minute per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

export class OperatorTokenStore {
  constructor(private readonly database: Database, private readonly now: () => Date = () => new Date()) {}

  /**
   * Mints a token named `name` (1 to 255 characters, for the operator's own bookkeeping).
   * @throws PlatformInputError naming `name`.
   */
  async create(name: string): Promise<CreatedOperatorToken> {
    requireName("name", name);
    const token = `${OPERATOR_TOKEN_PREFIX}${randomBytes(SECRET_BYTES).toString("base64url")}`;
    const [row] = await this.database.query<TokenRow>(
      `INSERT INTO operator_tokens (id, name, digest, created_at) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
      [newId("opt"), name, digestKey(token), this.now()],
    );
    return { record: recordOf(row!), token };
  }

  /** Every token, revoked ones included, newest first (at most {@link MAX_LISTED_OPERATOR_TOKENS}). */
  async list(): Promise<OperatorTokenRecord[]> {
    const rows = await this.database.query<TokenRow>(`SELECT ${COLUMNS} FROM operator_tokens ORDER BY created_at DESC, id LIMIT $1`, [MAX_LISTED_OPERATOR_TOKENS]);
    return rows.map(recordOf);
  }

  /**
   * Revokes a live token and ends the dashboard sessions signed in with it; false when there is no live token `id`
   * (unknown, or revoked already).
   * @throws PlatformInputError naming `tokenId` when it is not an id.
   */
  async revoke(id: string): Promise<boolean> {
    requireId("tokenId", id);
    return this.database.transaction(async (tx) => {
      const now = this.now();
      const revoked = await tx.query("UPDATE operator_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id", [id, now]);
      if (revoked.length === 0) return false;
      await tx.query("UPDATE dashboard_sessions SET revoked_at = $2 WHERE operator_token_id = $1 AND revoked_at IS NULL", [id, now]);
      return true;
    });
  }

  /**
   * The live token `token` is, recording its use (at most once a minute: every operator request passes here, and a
   * write per read would be most of its cost); undefined for an unknown, revoked or malformed one.
   */
  async find(token: string): Promise<OperatorTokenRecord | undefined> {
    if (typeof token !== "string" || !TOKEN_FORM.test(token)) return undefined;
    const [row] = await this.database.query<TokenRow>(`SELECT ${COLUMNS} FROM operator_tokens WHERE digest = $1 AND revoked_at IS NULL`, [digestKey(token)]);
    if (row === undefined) return undefined;
    const record = recordOf(row);
    const now = this.now();
    if (record.lastUsedAt === null || now.getTime() - record.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.database.query("UPDATE operator_tokens SET last_used_at = $2 WHERE id = $1", [record.id, now]);
      record.lastUsedAt = now;
    }
    return record;
  }
}
