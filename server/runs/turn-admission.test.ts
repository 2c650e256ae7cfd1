// A run's turn admission on a real platform database (PGlite and PostgreSQL), with the accountant's default credit
// hold shortened to 200 ms: a turn's hold lives as long as its run may still go on (a hold that ran out mid-turn would
// let another turn be admitted against the same credit); a turn refused because the limit store cannot be reached is
// asked again after its Retry-After a bounded number of times, stopped by the run's abort, and a lasting refusal (the
// balance) fails the run at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ModelRegistry } from "../models.js";
import { type AccountingStore, PlatformAccountant } from "../platform/accountant.js";
import type { LimitStore } from "../platform/contract.js";
import { RedisLimitStore } from "../platform/limits/redis-store.js";
import { type Platform, openPlatform } from "../platform/platform.js";
import { UsageWriter } from "../platform/store/usage-writer.js";
import { type FreshPlatform, TEST_BACKENDS, freshPlatform } from "../platform/testing/test-databases.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { SCRIPTED_MODEL, SCRIPTED_PROMPT_TOKENS, ScriptedEngine } from "../testing/scripted-engine.js";
import { RunFailure, firstTurnRequest } from "./agent-loop.js";
import type { RunRecord, RunSpec } from "./contract.js";
import { resolveEngines } from "./engines.js";
import { runTurnAdmitter } from "./turn-admission.js";
import type { RunModel } from "./worker.js";

const STEP_TOKENS = 16;
/** $0.001 an input token, $0.002 an output token. */
const PRICE = { inputPerMillion: 1000, outputPerMillion: 2000 };
/** What a turn holds: its 30 prompt tokens and its 16-token budget, in dollars. */
const HOLD_DOLLARS = (SCRIPTED_PROMPT_TOKENS * 1000 + STEP_TOKENS * 2000) / 1e6;
const SHORT_HOLD_MS = 200;
const SPEC: RunSpec = { engine: "tim", instructions: "Find the loom docs.", content: [], resources: [], skills: [], tools: [], timeoutSeconds: 60, maxStepTokens: STEP_TOKENS };

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`a run's turn admission on ${backend.name}`, backend.reason), () => {
    let fresh: FreshPlatform;
    let platform: Platform;
    let writer: UsageWriter;
    let downStore: RedisLimitStore;
    const engine = new ScriptedEngine();
    const served = new ModelRegistry([{ model: SCRIPTED_MODEL, engine, slugs: { openai: ["service/tim-test"], anthropic: [] }, created: 0 }]).entries[0]!;
    const model: RunModel = { slug: "service/tim-test", engine, served };
    const request = firstTurnRequest({ config: resolveEngines().tim, model: model.slug, tools: new Map(), spec: SPEC });

    beforeAll(async () => {
      failIfMissing(backend.reason);
      fresh = await freshPlatform(backend);
      platform = await openPlatform({ ...fresh.options, cacheMs: 0 });
      writer = new UsageWriter(platform.database);
      downStore = new RedisLimitStore({ url: `redis://127.0.0.1:${await closedLoopbackPort()}` });
    }, 60_000);
    afterAll(async () => {
      await writer?.close();
      await downStore?.close();
      await platform?.close();
      await fresh?.remove();
    });

    /** The platform's accountant, but with credit holds of SHORT_HOLD_MS by default, on `limits`. */
    const accountant = (limits: LimitStore = platform.limits) => {
      const store: AccountingStore = {
        organization: (id) => platform.stores.organizations.get(id),
        consumed: (organizationId, day, keyId) => platform.stores.usage.consumed(organizationId, day, keyId),
        record: (increment) => writer.record(increment),
        holdCredits: async (organizationId, dollars, ttlMs) => {
          const hold = await platform.stores.credits.hold(organizationId, dollars, ttlMs);
          return hold.admitted ? hold.holdId : "insufficient";
        },
        releaseCredits: async (holdId) => void (await platform.stores.credits.release(holdId)),
      };
      return new PlatformAccountant(store, limits, { creditHoldMs: SHORT_HOLD_MS });
    };
    /** A processing run of a new prepaid organization of `dollars`, started now. */
    const runOf = async (name: string, dollars: number): Promise<RunRecord> => {
      const organization = await platform.stores.organizations.create(name, { billingMode: "prepaid", creditBalanceDollars: dollars, prices: { "*": PRICE } });
      const { record } = await platform.stores.keys.create(organization.id, "inference", name);
      return {
        id: `run_${name.replaceAll(" ", "_")}`, kind: "legacy", organizationId: organization.id, keyId: record.id, engine: "tim", spec: SPEC,
        status: "processing", attempts: 1, cancelRequested: false, usage: { inputTokens: 0, outputTokens: 0, durationMs: 0 }, createdAt: new Date(), startedAt: new Date(),
      };
    };
    const services = (limits?: LimitStore, transientRetries?: number) => ({
      accountant: accountant(limits),
      key: (organizationId: string, keyId: string) => platform.stores.keys.get(organizationId, keyId),
      ...(transientRetries !== undefined ? { transientRetries } : {}),
    });

    it("holds a turn's credit as long as its run may go on, past the default hold lifetime: a second turn cannot be admitted against it", async () => {
      // Covers one turn's hold, not two.
      const run = await runOf("long turn", HOLD_DOLLARS * 1.5);
      const admit = runTurnAdmitter(services());
      const first = await admit(run, model, request, new AbortController().signal);
      await new Promise((resolve) => setTimeout(resolve, SHORT_HOLD_MS * 3));
      // The turn is still running: its hold stands, and a second turn is refused.
      expect(await platform.stores.credits.available(run.organizationId!)).toBeCloseTo(HOLD_DOLLARS * 0.5, 9);
      await expect(admit(run, model, request, new AbortController().signal)).rejects.toMatchObject({ code: "insufficient_quota" });
      const [hold] = await platform.database.query<{ seconds: unknown }>(
        "SELECT extract(epoch FROM expires_at - now()) AS seconds FROM credit_holds WHERE organization_id = $1", [run.organizationId],
      );
      // The run's 60 s timeout, and a minute for the cut turn's usage to be written.
      expect(Number(hold!.seconds)).toBeGreaterThan(SPEC.timeoutSeconds);
      await first!.admission.release();
    });

    it("asks again for a turn the limit store refused while down, at most transientRetries times, then fails the run naming the store", async () => {
      const run = await runOf("store down", 1);
      const started = Date.now();
      const refused = await runTurnAdmitter(services(downStore, 1))(run, model, request, new AbortController().signal).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(RunFailure);
      expect(refused).toMatchObject({ code: "rate_limit", message: expect.stringMatching(/rate-limit store cannot be reached/) });
      // One wait of its Retry-After (1 s) between the two tries.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(await platform.stores.credits.available(run.organizationId!)).toBe(1);
    });

    it("stops asking again when the run is aborted (a cancel) while it waits, with the abort's reason", async () => {
      const run = await runOf("cancelled while waiting", 1);
      const controller = new AbortController();
      const waiting = runTurnAdmitter(services(downStore, 5))(run, model, request, controller.signal).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const cancelled = new RunFailure("cancelled", "the run was cancelled");
      const started = Date.now();
      controller.abort(cancelled);
      expect(await waiting).toBe(cancelled);
      expect(Date.now() - started).toBeLessThan(1000);
    });

    it("fails the run at once, without asking again, when the balance refuses the turn", async () => {
      const run = await runOf("spent", 0);
      const started = Date.now();
      await expect(runTurnAdmitter(services(undefined, 5))(run, model, request, new AbortController().signal)).rejects.toMatchObject({ code: "insufficient_quota" });
      expect(Date.now() - started).toBeLessThan(1000);
    });
  });
}
