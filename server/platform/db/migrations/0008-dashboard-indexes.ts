// Migration 8: indexes for the web dashboard's lists (issue 21), each found needed by EXPLAIN ANALYZE on PostgreSQL
// with 10,000 keys, 1,000,000 usage rows, 300,000 runs and 100,000 payments (server/platform/dashboard/README.md).
import type { Migration } from "./migration.js";

export const migration0008: Migration = {
  version: 8,
  description: "dashboard indexes: usage series covering index, runs by status, payments by status, organizations in order",
  statements: [
    // The usage series sums up to 90 days of one organization: read from the index alone (an index-only scan), it took
    // 35 ms instead of 139 ms over 180,000 rows. It replaces the index on the same key columns, which every other
    // reader of usage_daily by (organization, day) uses the same way.
    `CREATE INDEX usage_daily_by_organization_day_covering ON usage_daily (organization_id, day)
      INCLUDE (model, requests, input_tokens, cached_input_tokens, output_tokens)`,
    `DROP INDEX usage_daily_by_organization_day`,
    // An organization's runs of one status, newest first: without it a rare status (failed) scanned every run of the
    // organization (200,000: 90 ms).
    `CREATE INDEX runs_by_organization_status ON runs (organization_id, status, created_order)`,
    // Payments of one status, newest first (failed ones are rare).
    `CREATE INDEX payments_by_status_time ON payments (status, created_at)`,
    // Organizations in creation order, paged (it was a sort of the whole table per page).
    `CREATE INDEX organizations_by_created_order ON organizations (created_order)`,
  ],
};
