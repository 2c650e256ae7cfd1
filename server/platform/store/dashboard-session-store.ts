// The web dashboard's sign-in sessions: a random token for the browser's cookie and a second one that state-changing
// requests echo in a header (cross-site request forgery), of which the database keeps only digests. The CSRF token is
// derived from the session token, so that a reloaded page can be given it again. A session ends at its expiry, when
// signed out, or when the management key or operator token it signed in with is revoked.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { PlatformInputError, type Sql } from "../contract.js";
import { digestKey } from "./key-secret.js";
import { requireId, requireInteger } from "./validate.js";

/** Who a session signs in. */
export type SessionSubject =
  | { kind: "organization"; organizationId: string; keyId: string }
  | { kind: "operator"; operatorTokenId: string };

/** A live session as a request sees it. */
export type DashboardSession = SessionSubject & {
  /** The digest of its token: names it in logs without revealing it. */
  digest: string;
  createdAt: Date;
  expiresAt: Date;
};

/** A new session: its token (the cookie's value) and its CSRF token (also {@link csrfTokenOf} the token). */
export interface CreatedSession {
  token: string;
  csrfToken: string;
  session: DashboardSession;
}

/** The text a session token starts with (so a leaked one is recognisable in logs and scanners). */
export const SESSION_TOKEN_PREFIX = "ds_";

/** The longest a session may last: a day. */
export const MAX_SESSION_MS = 24 * 3600 * 1000;

/** What the CSRF token's HMAC is computed over: fixed, so that a session has exactly one CSRF token. */
const CSRF_LABEL = "loom dashboard csrf token v1";

/**
 * The CSRF token of the session whose token is `token`: HMAC-SHA256 keyed by the session token over a fixed label,
 * base64url. Only the holder of the session token can compute it, and it reveals nothing of the token.
 */
export function csrfTokenOf(token: string): string {
  return createHmac("sha256", token).update(CSRF_LABEL).digest("base64url");
}

type SessionRow = {
  digest: string;
  kind: "organization" | "operator";
  organization_id: string | null;
  key_id: string | null;
  operator_token_id: string | null;
  csrf_digest: string;
  created_at: Date;
  expires_at: Date;
};

/**
 * Dashboard sessions in the database. Expiry is judged by this process's clock, passed to every statement (as
 * SqlResponseStore does), so that tests can move it.
 */
export class DashboardSessionStore {
  constructor(private readonly sql: Sql, private readonly now: () => Date = () => new Date()) {}

  /**
   * Opens a session for `subject` lasting `ttlMs` (at most a day).
   * @throws PlatformInputError naming a malformed field; the database's foreign-key error for an unknown organization or key.
   */
  async create(subject: SessionSubject, ttlMs: number): Promise<CreatedSession> {
    requireInteger("ttlMs", ttlMs, 1);
    if (ttlMs > MAX_SESSION_MS) throw new PlatformInputError("ttlMs", `ttlMs must be at most ${MAX_SESSION_MS} (a day), got ${ttlMs}`);
    if (subject.kind === "organization") {
      requireId("organizationId", subject.organizationId);
      requireId("keyId", subject.keyId);
    } else if (subject.kind === "operator") {
      requireId("operatorTokenId", subject.operatorTokenId);
    } else {
      throw new PlatformInputError("kind", `kind must be 'organization' or 'operator', got ${JSON.stringify(String((subject as { kind: unknown }).kind)).slice(0, 40)}`);
    }
    const token = `${SESSION_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const csrfToken = csrfTokenOf(token);
    const createdAt = this.now();
    const expiresAt = new Date(createdAt.getTime() + ttlMs);
    const digest = digestKey(token);
    const organization = subject.kind === "organization" ? subject : undefined;
    const operatorTokenId = subject.kind === "operator" ? subject.operatorTokenId : null;
    await this.sql.query(
      `INSERT INTO dashboard_sessions (digest, kind, organization_id, key_id, operator_token_id, csrf_digest, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [digest, subject.kind, organization?.organizationId ?? null, organization?.keyId ?? null, operatorTokenId, digestKey(csrfToken), createdAt, expiresAt],
    );
    return { token, csrfToken, session: { ...subject, digest, createdAt, expiresAt } };
  }

  /**
   * The live session a token names: unexpired, not signed out, and its management key still active or its operator
   * token not revoked.
   * With `csrfToken`, also that it is the session's (compared in constant time); a mismatch is no session.
   */
  async find(token: string, csrfToken?: string): Promise<DashboardSession | undefined> {
    if (typeof token !== "string" || !token.startsWith(SESSION_TOKEN_PREFIX) || token.length > 200) return undefined;
    const [row] = await this.sql.query<SessionRow>(
      `SELECT s.digest, s.kind, s.organization_id, s.key_id, s.operator_token_id, s.csrf_digest, s.created_at, s.expires_at
         FROM dashboard_sessions s
         LEFT JOIN api_keys k ON k.id = s.key_id
         LEFT JOIN operator_tokens o ON o.id = s.operator_token_id
        WHERE s.digest = $1 AND s.expires_at > $2 AND s.revoked_at IS NULL
          AND (s.key_id IS NULL OR k.is_active) AND (s.operator_token_id IS NULL OR o.revoked_at IS NULL)`,
      [digestKey(token), this.now()],
    );
    if (!row) return undefined;
    if (csrfToken !== undefined && !sameDigest(row.csrf_digest, typeof csrfToken === "string" ? digestKey(csrfToken) : "")) return undefined;
    const common = { digest: row.digest, createdAt: new Date(row.created_at), expiresAt: new Date(row.expires_at) };
    return row.kind === "operator" ? { kind: "operator", operatorTokenId: row.operator_token_id!, ...common } : { kind: "organization", organizationId: row.organization_id!, keyId: row.key_id!, ...common };
  }

  /** Ends the session a token names (signing out); false when there was no live one. */
  async revoke(token: string): Promise<boolean> {
    if (typeof token !== "string" || !token.startsWith(SESSION_TOKEN_PREFIX)) return false;
    const rows = await this.sql.query("UPDATE dashboard_sessions SET revoked_at = $2 WHERE digest = $1 AND revoked_at IS NULL AND expires_at > $2 RETURNING digest", [digestKey(token), this.now()]);
    return rows.length > 0;
  }

  /** Deletes at most `limit` sessions that expired or were signed out before `before`; returns how many went. */
  async deleteEnded(before: Date, limit: number): Promise<number> {
    requireInteger("limit", limit, 1);
    const [row] = await this.sql.query<{ deleted: number }>(
      `WITH gone AS (
        DELETE FROM dashboard_sessions WHERE digest IN (
          SELECT digest FROM dashboard_sessions WHERE expires_at <= $1 OR revoked_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED
        ) RETURNING 1
      )
      SELECT count(*)::int AS deleted FROM gone`,
      [before, limit],
    );
    return row!.deleted;
  }
}

/** Whether two hex digests are equal, in constant time. */
function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
