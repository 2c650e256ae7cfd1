// Migration 7: operator tokens (issue 21): the operator's credential for the dashboard's /api/v1/operator/ endpoints
// and its sign-in, minted by `loom admin operator-token create`. The database keeps only each token's digest; an
// operator session names the token it signed in with, so that revoking the token ends its sessions.
import type { Migration } from "./migration.js";

export const migration0007: Migration = {
  version: 7,
  description: "operator_tokens",
  statements: [
    `CREATE TABLE operator_tokens (
      -- opt_ and random hex digits.
      id text PRIMARY KEY,
      name text NOT NULL,
      -- SHA-256 of the token (lop_...), hex: what a presented token is looked up by.
      digest text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      -- Once set, the token signs nobody in and its sessions have ended.
      revoked_at timestamptz
    )`,
    `ALTER TABLE dashboard_sessions ADD COLUMN operator_token_id text REFERENCES operator_tokens (id)`,
    // Nothing made operator sessions before this version (they had no token to name), so none can break the rule.
    `DELETE FROM dashboard_sessions WHERE kind = 'operator'`,
    `ALTER TABLE dashboard_sessions ADD CONSTRAINT dashboard_sessions_operator_token
      CHECK ((kind = 'operator') = (operator_token_id IS NOT NULL))`,
    `CREATE INDEX dashboard_sessions_operator_token_id ON dashboard_sessions (operator_token_id)`,
  ],
};
