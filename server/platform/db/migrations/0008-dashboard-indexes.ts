// Migration 8: indexes for the web dashboard's lists (its usage chart reads migration 9's usage_by_organization
// instead of an index over usage_daily), each found needed by EXPLAIN ANALYZE on PostgreSQL with 10,000 keys,
// 1,000,000 usage rows, 300,000 runs and 100,000 payments (docs/performance/platform.md, "The web dashboard").
import type { Migration } from "./migration.js";

export const migration0008: Migration = {
  version: 8,
  description: "dashboard indexes: runs by status, payments by status, organizations in order",
  statements: [
    // An organization's runs of one status, newest first: without it a rare status (failed) scanned every run of the
    // organization (200,000: 90 ms).
    `CREATE INDEX runs_by_organization_status ON runs (organization_id, status, created_order)`,
    // Payments of one status, newest first (failed ones are rare).
    `CREATE INDEX payments_by_status_time ON payments (status, created_at)`,
    // Organizations in creation order, paged (it was a sort of the whole table per page).
    `CREATE INDEX organizations_by_created_order ON organizations (created_order)`,
  ],
};
