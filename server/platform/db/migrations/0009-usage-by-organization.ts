// Migration 9: usage per organization, model and UTC day (issue 21), beside usage_daily's per-key rows. The
// dashboard's 30-day chart and the usage snapshot read an organization's days; with thousands of keys that was
// hundreds of thousands of per-key rows per answer (60-100 ms on PostgreSQL with 10,000 keys, bench/README.md), and
// is at most days x models rows here. A trigger keeps it equal to usage_daily's sums whatever writes usage (the batch
// statement, an agent run's transaction, an older loom during a rolling update), in the same transaction.
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
    // Adds a per-key row's change (NEW minus OLD) to its organization's row.
    `CREATE FUNCTION usage_by_organization_apply() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE
       sign_old integer := CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE 1 END;
       sign_new integer := CASE WHEN TG_OP = 'DELETE' THEN 0 ELSE 1 END;
       target usage_daily := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
     BEGIN
       IF TG_OP = 'UPDATE' AND (OLD.organization_id, OLD.day, OLD.model) IS DISTINCT FROM (NEW.organization_id, NEW.day, NEW.model) THEN
         RAISE EXCEPTION 'usage_daily rows do not move between organizations, days or models';
       END IF;
       INSERT INTO usage_by_organization AS o (organization_id, day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend)
       VALUES (target.organization_id, target.day, target.model,
         sign_new * coalesce(NEW.requests, 0) - sign_old * coalesce(OLD.requests, 0),
         sign_new * coalesce(NEW.input_tokens, 0) - sign_old * coalesce(OLD.input_tokens, 0),
         sign_new * coalesce(NEW.cached_input_tokens, 0) - sign_old * coalesce(OLD.cached_input_tokens, 0),
         sign_new * coalesce(NEW.output_tokens, 0) - sign_old * coalesce(OLD.output_tokens, 0),
         sign_new * coalesce(NEW.spend, 0) - sign_old * coalesce(OLD.spend, 0))
       ON CONFLICT (organization_id, day, model) DO UPDATE SET
         requests = o.requests + excluded.requests,
         input_tokens = o.input_tokens + excluded.input_tokens,
         cached_input_tokens = o.cached_input_tokens + excluded.cached_input_tokens,
         output_tokens = o.output_tokens + excluded.output_tokens,
         spend = o.spend + excluded.spend;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER usage_daily_to_organization AFTER INSERT OR UPDATE OR DELETE ON usage_daily
       FOR EACH ROW EXECUTE FUNCTION usage_by_organization_apply()`,
  ],
};
