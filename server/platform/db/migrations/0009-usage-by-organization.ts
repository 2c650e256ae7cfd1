// Migration 9: usage per organization, model and UTC day (issue 21), beside usage_daily's per-key rows. The
// dashboard's 30-day chart and the usage snapshot read an organization's days; with thousands of keys that was
// hundreds of thousands of per-key rows per answer (60-100 ms on PostgreSQL with 10,000 keys, docs/performance/platform.md), and
// is at most days x models rows here. The usage batch statement (store/usage-writer.ts), the one writer of usage,
// adds to both tables in one statement. (Triggers kept it equal too, at twice the batch's commit time:
// bench/usage-rollup.ts.) A loom older than this version writes usage_daily alone: none may keep writing usage to a
// database after this migration.
import type { Migration } from "./migration.js";

export const migration0009: Migration = {
  version: 9,
  description: "usage_by_organization",
  statements: [
    `CREATE TABLE usage_by_organization (
      organization_id text NOT NULL REFERENCES organizations (id),
      day date NOT NULL,
      model text NOT NULL,
      requests bigint NOT NULL DEFAULT 0,
      input_tokens bigint NOT NULL DEFAULT 0,
      cached_input_tokens bigint NOT NULL DEFAULT 0,
      output_tokens bigint NOT NULL DEFAULT 0,
      spend numeric(20, 9) NOT NULL DEFAULT 0,
      PRIMARY KEY (organization_id, day, model)
    )`,
    `INSERT INTO usage_by_organization (organization_id, day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend)
     SELECT organization_id, day, model, sum(requests), sum(input_tokens), sum(cached_input_tokens), sum(output_tokens), sum(spend)
       FROM usage_daily GROUP BY organization_id, day, model`,
  ],
};
