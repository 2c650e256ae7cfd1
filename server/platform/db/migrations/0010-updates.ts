// Migration 10: the software updates' records (issue 22). update_approvals holds the operator's approval of a release
// (`loom update approve`), tied to the package's SHA-256 so that another package signed under the same version needs
// approving again; update_events is the audit trail of every check, approval, apply and rollback (`loom update
// history`). Both are only added to: nothing in loom updates or deletes their rows.
import type { Migration } from "./migration.js";

export const migration0010: Migration = {
  version: 10,
  description: "update_approvals, update_events",
  // New tables only: a loom of schema 9 runs on this schema unchanged.
  keepsPrevious: true,
  statements: [
    `CREATE TABLE update_approvals (
      version text NOT NULL,
      package_sha256 text NOT NULL,
      approved_by text NOT NULL,
      approved_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (version, package_sha256)
    )`,
    `CREATE TABLE update_events (
      id bigserial PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT now(),
      action text NOT NULL CHECK (action IN ('check', 'approve', 'apply', 'rollback')),
      outcome text NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed', 'rolled-back')),
      from_version text,
      to_version text,
      actor text NOT NULL,
      detail text NOT NULL DEFAULT ''
    )`,
    "CREATE INDEX update_events_newest ON update_events (id DESC)",
  ],
};
