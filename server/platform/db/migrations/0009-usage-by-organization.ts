// Migration 9: usage per organization, model and UTC day (issue 21), beside usage_daily's per-key rows. The
// dashboard's 30-day chart and the usage snapshot read an organization's days; with thousands of keys that was
// hundreds of thousands of per-key rows per answer (60-100 ms on PostgreSQL with 10,000 keys, bench/README.md), and
// is at most days x models rows here. Triggers keep it equal to usage_daily's sums whatever writes usage (the batch
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
    // Adds a statement's changes to usage_daily (its rows' NEW minus OLD) to the organization's rows, summed per
    // organization, day and model first: one upsert per (organization, day, model) per statement, however many keys'
    // rows the statement wrote. Statement-level with transition tables, which PostgreSQL allows one event per trigger,
    // hence three triggers on this function; the query text names only the tables the firing event has.
    `CREATE FUNCTION usage_daily_to_organization() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE
       added constant text := 'SELECT organization_id, day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend FROM new_rows';
       removed constant text := 'SELECT organization_id, day, model, -requests, -input_tokens, -cached_input_tokens, -output_tokens, -spend FROM old_rows';
       changes text := CASE TG_OP WHEN 'INSERT' THEN added WHEN 'DELETE' THEN removed ELSE added || ' UNION ALL ' || removed END;
     BEGIN
       -- Nested: PL/pgSQL plans a whole condition, and only an UPDATE has both tables.
       IF TG_OP = 'UPDATE' THEN
         IF EXISTS (SELECT organization_id, key_id, model, day FROM new_rows EXCEPT ALL SELECT organization_id, key_id, model, day FROM old_rows) THEN
           RAISE EXCEPTION 'usage_daily rows do not move between organizations, keys, days or models';
         END IF;
       END IF;
       EXECUTE 'INSERT INTO usage_by_organization AS o (organization_id, day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend)
         SELECT c.organization_id, c.day, c.model, sum(c.requests), sum(c.input_tokens), sum(c.cached_input_tokens), sum(c.output_tokens), sum(c.spend)
           FROM (' || changes || ') AS c (organization_id, day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend)
          GROUP BY c.organization_id, c.day, c.model ORDER BY c.organization_id, c.day, c.model
         ON CONFLICT (organization_id, day, model) DO UPDATE SET
           requests = o.requests + excluded.requests,
           input_tokens = o.input_tokens + excluded.input_tokens,
           cached_input_tokens = o.cached_input_tokens + excluded.cached_input_tokens,
           output_tokens = o.output_tokens + excluded.output_tokens,
           spend = o.spend + excluded.spend';
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER usage_daily_inserted AFTER INSERT ON usage_daily REFERENCING NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_to_organization()`,
    `CREATE TRIGGER usage_daily_updated AFTER UPDATE ON usage_daily REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_to_organization()`,
    `CREATE TRIGGER usage_daily_deleted AFTER DELETE ON usage_daily REFERENCING OLD TABLE AS old_rows
       FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_to_organization()`,
  ],
};
