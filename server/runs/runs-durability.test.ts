// `kill -9` of `loom serve` while 20 runs are queued or processing: after a restart every run reaches succeeded or
// failed (worker_lost), none is lost or stuck, no tool call runs twice without its step log saying so, and the
// organization's usage counts every model turn exactly once, its prepaid balance charged exactly what the step logs'
// turns cost at its price.
import type { ChildProcess } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { utcDay } from "../platform/limits/daily.js";
import { openPlatform } from "../platform/platform.js";
import { TEST_BACKENDS, TEST_POSTGRES_URL, freshPlatform, temporaryDataDir } from "../platform/testing/test-databases.js";
import { type LoomProcess, startLoomServe } from "../testing/loom-process.js";

const RUNS = 20;
/** The organization's prepaid balance: enough for every turn. */
const START_DOLLARS = 100;
/** The organization's price: $1,000 and $2,000 a million tokens, so one input token costs 1,000,000 nano-dollars. */
const PRICE = { inputPerMillion: 1000, outputPerMillion: 2000 };
const INPUT_NANO = PRICE.inputPerMillion * 1000;
const OUTPUT_NANO = PRICE.outputPerMillion * 1000;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`agent runs survive kill -9 of loom serve on ${backend.name}`, backend.reason), () => {
    it(`${RUNS} runs queued or processing at the kill all end, once each`, async () => {
      failIfMissing(backend.reason);
      const fresh = await freshPlatform(backend);
      const configDir = temporaryDataDir();
      try {
        // The organization and its key, made before the server holds the database.
        const platform = await openPlatform(fresh.options);
        // Prepaid, so that every turn holds credits at admission and settles them with its step.
        const organization = await platform.stores.organizations.create("durable", { billingMode: "prepaid", creditBalanceDollars: START_DOLLARS, prices: { "*": PRICE } });
        const { key } = await platform.stores.keys.create(organization.id, "inference", "runs");
        await platform.close();

        const model = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
        const config = join(configDir, "loom.json");
        writeFileSync(config, JSON.stringify({
          runs: { concurrency: 4, leaseSeconds: 2, engines: { tim: { forcedToolTurns: 1, maxSteps: 2, maxStepTokens: 48, temperature: 0 } } },
        }));
        const database = "dataDir" in fresh.options && fresh.options.dataDir !== undefined
          ? ["--data-dir", fresh.options.dataDir]
          : ["--database-url", `${TEST_POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${fresh.options.schema}`)}`];
        const args = ["--model", model, "--port", "0", "--threads", "1", "--context", "1024", "--config", config, ...database];
        const call = async (server: LoomProcess, method: string, path: string, body?: unknown) => {
          const response = await fetch(`${server.base}${path}`, {
            method,
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          });
          return { status: response.status, body: (await response.json()) as any };
        };

        const first = await startLoomServe(args, { children });
        const ids: string[] = [];
        for (let i = 0; i < RUNS; i++) {
          const created = await call(first, "POST", "/v1/runs", { engine: "tim", input: { instructions: `Task ${i}: find the loom docs.`, tools: [{ id: "web_search" }] } });
          expect(created.status).toBe(202);
          ids.push(created.body.runId);
        }
        // Kill once some run has written a step: runs are then processing, and most are still queued.
        const until = Date.now() + 60_000;
        for (;;) {
          const steps = await Promise.all(ids.slice(0, 4).map((id) => call(first, "GET", `/v1/runs/${id}/steps`)));
          if (steps.some((answer) => answer.body.steps.length > 0)) break;
          if (Date.now() > until) throw new Error("no run wrote a step within a minute");
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        first.child.kill("SIGKILL");
        await first.exited;

        const second = await startLoomServe(args, { children });
        const runs: any[] = [];
        const deadline = Date.now() + 180_000;
        for (const id of ids) {
          for (;;) {
            const { body } = await call(second, "GET", `/v1/runs/${id}`);
            if (body.status === "succeeded" || body.status === "failed") {
              runs.push(body);
              break;
            }
            if (Date.now() > deadline) throw new Error(`run ${id} is still ${body.status} three minutes after the restart`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
        let turns = 0;
        /** What the step logs' model turns cost at the organization's price, in nano-dollars: the balance must fall by this. */
        let stepCostNano = 0;
        let lostWorkers = 0;
        for (const run of runs) {
          if (run.status === "failed") expect(run.error.code, JSON.stringify(run.error)).toBe("worker_lost");
          const { steps } = (await call(second, "GET", `/v1/runs/${run.runId}/steps`)).body;
          const modelSteps = steps.filter((step: any) => step.kind === "model");
          turns += modelSteps.length;
          // $0.001 an input token, $0.002 an output token: whole nano-dollars per token.
          for (const step of modelSteps) stepCostNano += step.inputTokens * INPUT_NANO + step.outputTokens * OUTPUT_NANO;
          lostWorkers += steps.filter((step: any) => step.kind === "note" && step.event === "worker_lost").length;
          // A tool call runs once, or again only with its step saying it is a re-execution.
          const byCall = new Map<string, any[]>();
          for (const step of steps.filter((s: any) => s.kind === "tool")) byCall.set(step.callId, [...(byCall.get(step.callId) ?? []), step]);
          for (const [callId, callSteps] of byCall) {
            expect(callSteps.length, callId).toBeLessThanOrEqual(2);
            if (callSteps.length === 2) expect(callSteps[1].reexecuted, callId).toMatch(/worker was lost/);
          }
        }
        expect(runs).toHaveLength(RUNS);
        expect(runs.filter((run) => run.status === "succeeded").length).toBeGreaterThan(0);
        expect(lostWorkers).toBeGreaterThan(0);
        second.child.kill("SIGTERM");
        await second.exited;

        // Every model turn in the step logs is in the organization's usage once: none lost, none counted twice.
        const after = await openPlatform(fresh.options);
        try {
          const rows = await after.stores.usage.rows(organization.id, utcDay(Date.now()));
          expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(turns);
          // The balance fell by exactly what the step logs' turns cost at the price set above (worked out here, not
          // read back from the usage rows the same statement wrote); the only credit holds left are those of turns
          // in flight at the kill (at most one per run processing), which expire on their own.
          const nano = (dollars: number) => Math.round(dollars * 1e9);
          const balance = (await after.stores.organizations.get(organization.id))!.creditBalanceDollars;
          expect(stepCostNano).toBeGreaterThan(0);
          expect(nano(START_DOLLARS) - nano(balance)).toBe(stepCostNano);
          const [holds] = await after.database.query<{ n: unknown }>("SELECT count(*) AS n FROM credit_holds WHERE organization_id = $1", [organization.id]);
          expect(Number(holds!.n)).toBeLessThanOrEqual(4);
        } finally {
          await after.close();
        }
      } finally {
        await fresh.remove();
        rmSync(configDir, { recursive: true, force: true });
      }
    }, 300_000);
  });
}
