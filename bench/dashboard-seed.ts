// The dashboard benchmark's data: a platform database holding 10,000 inference keys and 1,000,000 usage
// rows, written by SQL in bulk (generate_series) so that seeding takes seconds, not hours. The organization the pages
// are measured for is the heaviest one there could be: every key and every usage row is its own, over the last 100
// UTC days, so its 30-day usage series sums 300,000 rows. Around it, other organizations (for the operator's list),
// runs with steps and x402 payments (for their pages).
import type { Database } from "../server/platform/contract.js";
import { KeyStore } from "../server/platform/store/key-store.js";
import { OrganizationStore } from "../server/platform/store/organization-store.js";

/** How much to seed. */
export interface SeedSizes {
  keys: number;
  usageRows: number;
  /** Days the usage rows spread over, ending today (UTC). */
  days: number;
  /** Models the usage rows name. */
  models: number;
  organizations: number;
  runs: number;
  payments: number;
}

/** The issue's sizes. */
export const ISSUE_SIZES: SeedSizes = { keys: 10_000, usageRows: 1_000_000, days: 100, models: 2, organizations: 1_000, runs: 10_000, payments: 100_000 };

/** What the benchmark signs in with and asks about. */
export interface SeededData {
  organizationId: string;
  managementKey: string;
  /** A run of the organization, with steps. */
  runId: string;
  /** The model slugs of the usage rows. */
  models: string[];
}

/**
 * Seeds `database` (migrated, empty) with `sizes`. Usage rows go to (key, model, day) cells: `usageRows / (days *
 * models)` keys each have a row for every model and day (the rest of the keys have none), which is the shape that
 * makes the usage series read the most rows.
 */
export async function seedDashboardData(database: Database, sizes: SeedSizes, log: (line: string) => void): Promise<SeededData> {
  const organizations = new OrganizationStore(database);
  const keys = new KeyStore(database);
  const organization = await organizations.create("Bench heavy org", { closedBeta: true, billingMode: "prepaid", creditBalanceDollars: 1000 });
  const { key: managementKey } = await keys.create(organization.id, "management", "bench management key");
  const models = Array.from({ length: sizes.models }, (_, i) => `bench-model-${i}`);
  const timed = async (what: string, work: () => Promise<unknown>) => {
    const start = performance.now();
    await work();
    log(`seeded ${what} in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  };

  await timed(`${sizes.organizations - 1} other organizations`, () => database.query(
    `INSERT INTO organizations (id, name, created_at) SELECT 'org_bench_' || i, 'Bench org ' || i, now() - (i || ' minutes')::interval FROM generate_series(1, $1::int) AS i`,
    [sizes.organizations - 1],
  ));
  await timed(`${sizes.keys} inference keys`, () => database.query(
    `INSERT INTO api_keys (id, organization_id, kind, name, key_prefix, key_digest, created_at, last_used_at)
     SELECT 'key_bench_' || i, $1, 'inference', 'bench key ' || i, 'sk-gw-' || substr(md5(i::text), 1, 6),
            encode(sha256(('bench key ' || i)::bytea), 'hex'), now() - (i || ' minutes')::interval, now() - (i || ' seconds')::interval
       FROM generate_series(1, $2::int) AS i`,
    [organization.id, sizes.keys],
  ));
  const keysWithUsage = Math.min(sizes.keys, Math.ceil(sizes.usageRows / (sizes.days * sizes.models)));
  await timed(`${sizes.usageRows} usage rows (${keysWithUsage} keys x ${sizes.models} models x ${sizes.days} days)`, () => database.query(
    `INSERT INTO usage_daily (organization_id, key_id, model, day, requests, input_tokens, cached_input_tokens, output_tokens, spend)
     SELECT $1, 'key_bench_' || k, 'bench-model-' || m, (now() AT TIME ZONE 'UTC')::date - d, 1 + (k + d) % 7,
            -- Model 1 takes twice model 0's input, and weekends (by day number) half of a weekday's.
            100 * (1 + (k + d) % 13) * (1 + m) / (CASE WHEN d % 7 < 2 THEN 2 ELSE 1 END), 10 * ((k + d) % 5), 50 * (1 + (k * d) % 11), 0
       FROM generate_series(1, $2::int) AS k, generate_series(0, $3::int - 1) AS m, generate_series(0, $4::int - 1) AS d
      LIMIT $5`,
    [organization.id, keysWithUsage, sizes.models, sizes.days, sizes.usageRows],
  ));
  // What the usage batch statement keeps beside the per-key rows (migration 9), as its backfill computes it.
  await timed("the organization's daily sums", () => database.query(
    `INSERT INTO usage_by_organization (organization_id, day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend)
     SELECT organization_id, day, model, sum(requests), sum(input_tokens), sum(cached_input_tokens), sum(output_tokens), sum(spend)
       FROM usage_daily WHERE organization_id = $1 GROUP BY organization_id, day, model`,
    [organization.id],
  ));
  await timed(`${sizes.runs} runs`, () => database.query(
    `INSERT INTO runs (id, kind, organization_id, engine, request, status, result, input_tokens, output_tokens, duration_ms, created_at, started_at, finished_at)
     SELECT 'run_bench_' || i, 'legacy', $1, 'default', jsonb_build_object('engine', 'default', 'content', jsonb_build_array('Question ' || i), 'resources', '[]'::jsonb, 'skills', '[]'::jsonb, 'tools', '[]'::jsonb, 'timeoutSeconds', 600),
            'succeeded', jsonb_build_object('answer', 'Answer ' || i, 'reasoning', 'Because ' || i), 100, 20, 1500,
            now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval + interval '2 seconds'
       FROM generate_series(1, $2::int) AS i`,
    [organization.id, sizes.runs],
  ));
  await timed("steps of one run", () => database.query(
    `INSERT INTO run_steps (run_id, index, attempt, kind, status, detail, input_tokens, output_tokens, started_at, duration_ms)
     SELECT 'run_bench_1', i, 1, CASE WHEN i % 2 = 0 THEN 'model' ELSE 'tool' END, 'finished',
            CASE WHEN i % 2 = 0 THEN jsonb_build_object('text', 'thinking about step ' || i) ELSE jsonb_build_object('tool', 'web_search', 'arguments', jsonb_build_object('query', 'q' || i), 'result', 'r' || i) END,
            10, 5, now(), 100
       FROM generate_series(0, 9) AS i`,
  ));
  await timed(`${sizes.payments} payments`, () => database.query(
    `INSERT INTO payments (id, kind, x402_version, network, asset, pay_to, payer, nonce, amount, valid_before, payload_digest, payload, requirements, run_id, run_request, status, transaction, created_at, settled_at)
     SELECT 'pay_bench_' || i, 'machine_run', 2, 'eip155:84532', '0x' || repeat('a', 40), '0x' || repeat('b', 40), '0x' || lpad(to_hex(i), 40, '0'),
            '0x' || encode(sha256(('nonce' || i)::bytea), 'hex'), 10000, 0, md5(i::text), '{}'::jsonb, '{}'::jsonb, 'run_paid_' || i, '{}'::jsonb, 'settled',
            '0x' || encode(sha256(('tx' || i)::bytea), 'hex'), now() - (i || ' seconds')::interval, now() - (i || ' seconds')::interval
       FROM generate_series(1, $1::int) AS i`,
    [sizes.payments],
  ));
  await timed("ANALYZE", () => database.query("ANALYZE"));
  return { organizationId: organization.id, managementKey, runId: "run_bench_1", models };
}
