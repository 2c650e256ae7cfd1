// What keeping usage_by_organization (migration 9) costs where it matters: the usage commit a response waits
// for before its last byte. The usage batch statement is timed as shipped and without its organization_days part
// (the same statement text less that CTE, prepared under another name), on PGlite and on PostgreSQL, one batch at a
// time, rounds alternating.
// Run: npm run build && node dist/bench/usage-rollup.js [options] (USAGE below; --help prints it).
//
// Each batch: `--records` increments of one organization (one per key, two models, today) as one statement, as the
// UsageWriter commits them. Rounds alternate with / without so that machine noise falls on both; medians are paired
// per round.
import { rmSync } from "node:fs";
import type { Database, PreparedStatement } from "../server/platform/contract.js";
import { openDatabase } from "../server/platform/db/open-database.js";
import { utcDay } from "../server/platform/limits/daily.js";
import { KeyStore } from "../server/platform/store/key-store.js";
import { OrganizationStore } from "../server/platform/store/organization-store.js";
import { USAGE_BATCH } from "../server/platform/store/usage-writer.js";
import { TEST_POSTGRES_URL, dropSchema, temporaryDataDir, testSchemaName } from "../server/platform/testing/test-databases.js";
import { BenchCli } from "./bench-args.js";
import { median, percentile, printHeader } from "./bench-models.js";

/** The command line; --help prints it. */
const USAGE = `node dist/bench/usage-rollup.js [--batches 300] [--records 8] [--rounds 3]`;
const cli: BenchCli = new BenchCli("usage-rollup", USAGE);
const values = cli.parse({ batches: { type: "string", default: "300" }, records: { type: "string", default: "8" }, rounds: { type: "string", default: "3" } });
const BATCHES = cli.integer("batches", values.batches);
const RECORDS = cli.integer("records", values.records);
const ROUNDS = cli.integer("rounds", values.rounds);
printHeader(`node dist/bench/usage-rollup.js --batches ${BATCHES} --records ${RECORDS} --rounds ${ROUNDS}`, 1);

/** The shipped statement less its organization_days CTE (and the count of it). */
const WITHOUT_ROLLUP: PreparedStatement = {
  name: "loom_usage_batch_without_rollup",
  text: USAGE_BATCH.text
    .replace(/\n {5}organization_days AS \([\s\S]*?RETURNING 1\),/, "")
    .replace(" (SELECT count(*) FROM organization_days) AS organization_days,", ""),
};
if (WITHOUT_ROLLUP.text.includes("organization_days")) throw new Error("the batch statement changed: update bench/usage-rollup.ts");

/** Milliseconds per batch over `BATCHES` batches of `statement`. */
async function timeBatches(database: Database, statement: PreparedStatement, organizationId: string, keyIds: string[]): Promise<number[]> {
  const day = utcDay(Date.now());
  const times: number[] = [];
  for (let batch = 0; batch < BATCHES; batch++) {
    const at = new Date().toISOString();
    const records = keyIds.slice(0, RECORDS).map((keyId, i) => ({
      organization_id: organizationId, key_id: keyId, model: `model-${i % 2}`, day, requests: 1, input_tokens: 100, cached_input_tokens: 50,
      output_tokens: 20, spend: "0", hold_id: null, at,
    }));
    const start = performance.now();
    await database.queryPrepared(statement, [JSON.stringify(records)]);
    times.push(performance.now() - start);
  }
  return times;
}

async function measure(name: string, database: Database): Promise<void> {
  const organization = await new OrganizationStore(database).create("rollup bench");
  const keys = new KeyStore(database);
  const keyIds: string[] = [];
  for (let i = 0; i < RECORDS; i++) keyIds.push((await keys.create(organization.id, "inference", `key ${i}`)).record.id);
  // Warm-up: plans, caches, the rows exist.
  await timeBatches(database, USAGE_BATCH, organization.id, keyIds);
  await timeBatches(database, WITHOUT_ROLLUP, organization.id, keyIds);
  const ratios: number[] = [];
  const withMedians: number[] = [];
  const withoutMedians: number[] = [];
  let withP99 = 0;
  let withoutP99 = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const without = await timeBatches(database, WITHOUT_ROLLUP, organization.id, keyIds);
    const withRollup = await timeBatches(database, USAGE_BATCH, organization.id, keyIds);
    withMedians.push(median(withRollup));
    withoutMedians.push(median(without));
    withP99 = Math.max(withP99, percentile(withRollup, 0.99));
    withoutP99 = Math.max(withoutP99, percentile(without, 0.99));
    ratios.push(median(withRollup) / median(without));
  }
  const spread = (xs: number[], digits = 3) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;
  console.log(`| ${name} | ${spread(withoutMedians)} | ${spread(withMedians)} | ${spread(withMedians.map((w, i) => w - withoutMedians[i]!))} | ${spread(ratios, 2)} | ${withoutP99.toFixed(2)} / ${withP99.toFixed(2)} |`);
}

console.log(`\n| database | batch without usage_by_organization, ms (median of rounds, min-max) | with it (as shipped) | added | ratio | worst round's p99 without / with (ms) |`);
console.log(`|---|---|---|---|---|---|`);
const dataDir = temporaryDataDir();
try {
  const pglite = await openDatabase({ dataDir });
  await measure("PGlite", pglite);
  await pglite.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
if (TEST_POSTGRES_URL) {
  const schema = testSchemaName();
  try {
    const postgres = await openDatabase({ url: TEST_POSTGRES_URL, schema });
    await measure("PostgreSQL", postgres);
    await postgres.close();
  } finally {
    await dropSchema(TEST_POSTGRES_URL, schema);
  }
}
