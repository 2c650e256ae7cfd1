// Migration 6: the web dashboard's sign-in sessions (issue 21): an organization signed in with a management key, or
// the operator with an admin token. The browser holds the session's token in a cookie; the database keeps only its
// digest, so a copy of the database signs nobody in.
import type { Migration } from "./migration.js";

export const migration0006: Migration = {
  version: 6,
  description: "dashboard_sessions",
  statements: [
    `CREATE TABLE dashboard_sessions (
      -- SHA-256 of the session token, hex.
      digest text PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('organization', 'operator')),
      -- The organization an organization session acts for; none for the operator.
      organization_id text REFERENCES organizations (id),
      -- The management key the organization signed in with: revoking the key ends its sessions.
      key_id text REFERENCES api_keys (id),
      -- SHA-256 of the token state-changing requests must echo in a header (cross-site request forgery).
      csrf_digest text NOT NULL,
      created_at timestamptz NOT NULL,
      -- Past it, or once revoked, the session signs nobody in; the cleanup deletes it later.
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      CHECK ((kind = 'organization') = (organization_id IS NOT NULL AND key_id IS NOT NULL))
    )`,
    `CREATE INDEX dashboard_sessions_expires_at ON dashboard_sessions (expires_at)`,
    `CREATE INDEX dashboard_sessions_key_id ON dashboard_sessions (key_id)`,
  ],
};
