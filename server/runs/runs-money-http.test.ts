// Agent runs and money, over HTTP on a real server and database (PGlite and PostgreSQL), the model's turns scripted:
// each turn is admitted as a request of its organization (a spent prepaid balance refuses the run at creation and
// creates none; a balance that covers one turn is never overshot; requests and tokens per minute and a hard daily
// allowance bound a run's turns, and a refused turn ends the run with its code; a turn refused because the limit store
// is down is asked again), a turn cut by a cancel or options.timeout is billed, logged and counted in the run's usage
// once, for what the engine computed, and a turn cut by loom's own stop or a lost lease is not billed (it runs again).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { LimitStoreUnavailableError, type ModelPrice } from "../platform/contract.js";
import type { KeyOptions } from "../platform/store/key-store.js";
import type { OrganizationPatch } from "../platform/store/organization-patch.js";
import { TEST_BACKENDS } from "../platform/testing/test-databases.js";
import { SCRIPTED_PROMPT_TOKENS, type Script, ScriptedEngine } from "../testing/scripted-engine.js";
import { fixedTools as tools } from "./testing/fixed-tools.js";
import { type RunsServer, startRunsServer } from "./testing/runs-server.js";

/** Most tokens a turn may generate here: a turn reserves its 30 prompt tokens and these 16. */
const STEP_TOKENS = 16;
/** $0.001 an input token, $0.002 an output token: whole nano-dollars, so every cost below is exact. */
const PRICE: ModelPrice = { inputPerMillion: 1000, outputPerMillion: 2000 };
const nano = (dollars: number) => Math.round(dollars * 1e9);
/** A turn's cost in nano-dollars. */
const costNano = (inputTokens: number, outputTokens: number) => inputTokens * 1_000_000 + outputTokens * 2_000_000;
/** What a turn holds at admission: its prompt and its whole token budget. */
const HOLD_NANO = costNano(SCRIPTED_PROMPT_TOKENS, STEP_TOKENS);

/** A model turn that calls web_search (two generated tokens). */
const search: Script = { deltas: ["Let me check.", `<tool_call>\n${JSON.stringify({ name: "web_search", arguments: { query: "loom" } })}\n</tool_call>`] };
/** A model turn that answers (one generated token). */
const answer = (text: string): Script => ({ deltas: [text] });

const RUN_BODY = { engine: "tim", input: { instructions: "Find the loom docs.", tools: [{ id: "web_search" }] } };

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`agent runs and money on ${backend.name}`, backend.reason), () => {
    let server: RunsServer;
    let engine: ScriptedEngine;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      engine = new ScriptedEngine();
      server = await startRunsServer(backend, { engine, runs: { tools, engines: { tim: { maxStepTokens: STEP_TOKENS } } } });
    }, 60_000);
    afterAll(async () => server?.close());

    /** A new organization (limits and balance of its own) and its inference key. */
    const organization = async (name: string, patch: OrganizationPatch, keyOptions: KeyOptions = {}) => {
      const created = await server.platform.stores.organizations.create(name, patch);
      const { key, record } = await server.platform.stores.keys.create(created.id, "inference", name, keyOptions);
      return { id: created.id, key, keyId: record.id };
    };
    const balanceNano = async (id: string) => nano((await server.platform.stores.organizations.get(id))!.creditBalanceDollars);
    const availableNano = async (id: string) => nano(await server.platform.stores.credits.available(id));
    const usageOf = async (id: string) => {
      const rows = await server.platform.stores.usage.rows(id);
      return { requests: rows.reduce((sum, row) => sum + row.requests, 0), inputTokens: rows.reduce((sum, row) => sum + row.inputTokens, 0), outputTokens: rows.reduce((sum, row) => sum + row.outputTokens, 0) };
    };
    const runsOf = async (id: string) => (await server.runs.store.pageOfOrganization(id, { limit: 10 })).items;
    const steps = async (runId: string, key: string) => (await server.call("GET", `/v1/runs/${runId}/steps`, undefined, key)).body.steps as any[];

    async function ended(runId: string, key: string): Promise<any> {
      const until = Date.now() + 15_000;
      for (;;) {
        const { body } = await server.call("GET", `/v1/runs/${runId}`, undefined, key);
        if (body.status === "succeeded" || body.status === "failed") return body;
        if (Date.now() > until) throw new Error(`run ${runId} still ${body.status}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    /** Waits until a turn of the run is on the engine (its request submitted). */
    async function turnRunning(before: number): Promise<void> {
      const until = Date.now() + 10_000;
      while (engine.requests.filter((request) => request.id !== "count").length <= before) {
        if (Date.now() > until) throw new Error("no turn reached the engine");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    const submitted = () => engine.requests.filter((request) => request.id !== "count").length;

    it("refuses a run at creation when a spent prepaid organization cannot pay for one turn (429 insufficient_quota), and creates none", async () => {
      const spent = await organization("spent", { billingMode: "prepaid", creditBalanceDollars: 0, prices: { "*": PRICE } });
      const before = submitted();
      for (let attempt = 0; attempt < 3; attempt++) {
        const refused = await server.call("POST", "/v1/runs", RUN_BODY, spent.key);
        expect(refused.status).toBe(429);
        expect(refused.body.error).toMatch(/credit balance is too low/);
      }
      expect(await runsOf(spent.id)).toEqual([]);
      expect(await usageOf(spent.id)).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0 });
      expect(await balanceNano(spent.id)).toBe(0);
      expect(submitted()).toBe(before);

      // A balance that covers a turn creates the run, and creating it holds nothing: the check is given back at once.
      const funded = await organization("funded", { billingMode: "prepaid", creditBalanceDollars: 1, prices: { "*": PRICE } });
      await server.runs.worker.stop();
      try {
        const created = await server.call("POST", "/v1/runs", RUN_BODY, funded.key);
        expect(created.status).toBe(202);
        expect(await availableNano(funded.id)).toBe(nano(1));
        expect((await server.call("POST", `/v1/runs/${created.body.runId}/cancel`, undefined, funded.key)).body.status).toBe("failed");
      } finally {
        server.runs.worker.start();
      }
    });

    it("never overshoots a balance that covers one turn: the next turn is refused and the run fails with insufficient_quota", async () => {
      // Covers one turn's hold, not two; the first turn costs 34,000,000 nano-dollars, the answer would cost 32,000,000.
      const start = HOLD_NANO + 3_000_000;
      const prepaid = await organization("one turn", { billingMode: "prepaid", creditBalanceDollars: start / 1e9, prices: { "*": PRICE } });
      engine.queue.push(search, answer("The docs say so."));
      const created = await server.call("POST", "/v1/runs", RUN_BODY, prepaid.key);
      expect(created.status).toBe(202);
      const run = await ended(created.body.runId, prepaid.key);
      expect(run).toMatchObject({ status: "failed", error: { code: "insufficient_quota", message: expect.stringMatching(/credit balance is too low/) } });
      expect(run.usage).toMatchObject({ inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 2 });
      expect((await steps(run.runId, prepaid.key)).map((step) => [step.kind, step.status])).toEqual([["model", "finished"], ["tool", "finished"]]);
      const left = await balanceNano(prepaid.id);
      expect(left).toBeGreaterThanOrEqual(0);
      expect(start - left).toBe(costNano(SCRIPTED_PROMPT_TOKENS, 2));
      // Every hold was dropped: with the spend of the turn that ran, and the refused turn's never taken.
      expect(await availableNano(prepaid.id)).toBe(left);
      expect(await usageOf(prepaid.id)).toEqual({ requests: 1, inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 2 });
      engine.queue.length = 0;
    });

    it("holds a run's turns to the organization's requests per minute: the third of a 2-rpm organization fails the run with rate_limit, and creation is refused", async () => {
      const limited = await organization("two a minute", { requestsPerMinute: 2 });
      engine.queue.push(search, search, answer("Three turns."));
      const created = await server.call("POST", "/v1/runs", RUN_BODY, limited.key);
      expect(created.status).toBe(202);
      const run = await ended(created.body.runId, limited.key);
      expect(run).toMatchObject({ status: "failed", error: { code: "rate_limit", message: expect.stringContaining("requests per minute (2)") } });
      expect((await steps(run.runId, limited.key)).filter((step) => step.kind === "model")).toHaveLength(2);
      expect(await usageOf(limited.id)).toMatchObject({ requests: 2 });
      // The minute's requests are spent: a new run is refused at creation, and none is made.
      const refused = await server.call("POST", "/v1/runs", RUN_BODY, limited.key);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatch(/requests per minute \(2\)/);
      expect(await runsOf(limited.id)).toHaveLength(1);
      engine.queue.length = 0;
    });

    it("holds a run's turns to the organization's tokens per minute: a turn reserves its prompt and budget, and the turn past the limit fails the run", async () => {
      // 40 tokens cannot hold one turn (30 + 16): refused at creation.
      const tight = await organization("forty tokens", { tokensPerMinute: 40 });
      const tooSmall = await server.call("POST", "/v1/runs", RUN_BODY, tight.key);
      expect(tooSmall.status).toBe(429);
      expect(tooSmall.body.error).toMatch(/tokens per minute \(40\)/);
      expect(await runsOf(tight.id)).toEqual([]);

      // 90 tokens: turns use 32 each; the third reserves 46 on top of 64 used, past 90, and is refused.
      const limited = await organization("ninety tokens", { tokensPerMinute: 90 });
      engine.queue.push(search, search, answer("Three turns."));
      const created = await server.call("POST", "/v1/runs", RUN_BODY, limited.key);
      expect(created.status).toBe(202);
      const run = await ended(created.body.runId, limited.key);
      expect(run).toMatchObject({ status: "failed", error: { code: "rate_limit", message: expect.stringContaining("tokens per minute (90)") } });
      expect(run.usage).toMatchObject({ inputTokens: 2 * SCRIPTED_PROMPT_TOKENS, outputTokens: 4 });
      expect(await usageOf(limited.id)).toEqual({ requests: 2, inputTokens: 2 * SCRIPTED_PROMPT_TOKENS, outputTokens: 4 });
      engine.queue.length = 0;
    });

    it("holds a run's turns to a hard daily allowance in tokens: the turn past it fails the run with rate_limit", async () => {
      // As with 90 tokens a minute: two turns of 32 tokens fit, the third's 46 more do not.
      const allowance = await organization("ninety a day", { allowanceBasis: "tokens", allowanceAmount: 90, allowanceHardCap: true });
      engine.queue.push(search, search, answer("Three turns."));
      const created = await server.call("POST", "/v1/runs", RUN_BODY, allowance.key);
      expect(created.status).toBe(202);
      const run = await ended(created.body.runId, allowance.key);
      expect(run).toMatchObject({ status: "failed", error: { code: "rate_limit", message: expect.stringContaining("daily allowance (90 tokens") } });
      expect(await usageOf(allowance.id)).toEqual({ requests: 2, inputTokens: 2 * SCRIPTED_PROMPT_TOKENS, outputTokens: 4 });
      engine.queue.length = 0;
    });

    it("refuses at creation, naming engine, a key that may not use the engine's model and a prepaid organization without a price for it (403)", async () => {
      const narrow = await organization("narrow key", {}, { allowedModels: ["service/another-model"] });
      const refused = await server.call("POST", "/v1/runs", RUN_BODY, narrow.key);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: expect.stringMatching(/may not use the model 'service\/tim-test-27b'.*engine 'tim'/), field: "engine" });
      const unpriced = await organization("unpriced", { billingMode: "prepaid", creditBalanceDollars: 5 });
      const noPrice = await server.call("POST", "/v1/runs", RUN_BODY, unpriced.key);
      expect(noPrice.status).toBe(403);
      expect(noPrice.body).toEqual({ error: expect.stringMatching(/has no price for this prepaid organization/), field: "engine" });
      expect([...(await runsOf(narrow.id)), ...(await runsOf(unpriced.id))]).toEqual([]);
    });

    it("stops a run whose key was revoked before its next turn: failed with permission, nothing billed", async () => {
      const revoked = await organization("revoked", {});
      await server.runs.worker.stop();
      let runId = "";
      try {
        const created = await server.call("POST", "/v1/runs", RUN_BODY, revoked.key);
        expect(created.status).toBe(202);
        runId = created.body.runId;
        expect(await server.platform.stores.keys.revoke(revoked.id, revoked.keyId)).toBe(true);
      } finally {
        server.runs.worker.start();
      }
      // Polled from the store: the revoked key can no longer read it over HTTP.
      const until = Date.now() + 15_000;
      let ended = await server.runs.store.get(runId);
      while (ended && ended.status !== "failed" && ended.status !== "succeeded" && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        ended = await server.runs.store.get(runId);
      }
      expect(ended).toMatchObject({ status: "failed", error: { code: "permission", message: expect.stringMatching(/revoked/) } });
      expect(await usageOf(revoked.id)).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0 });
    });

    it("does not bill a turn whose worker lost the run mid-turn (the next take asks again): only the retaken turn is billed, with its step", async () => {
      const prepaid = await organization("lost lease", { billingMode: "prepaid", creditBalanceDollars: 1, prices: { "*": PRICE } });
      const before = submitted();
      engine.queue.push({ deltas: ["Thinking", " slowly"], pauseBeforeFinishMs: 30_000 }, answer("Answered on the second take."));
      const created = await server.call("POST", "/v1/runs", RUN_BODY, prepaid.key);
      await turnRunning(before);
      expect(await availableNano(prepaid.id)).toBe(nano(1) - HOLD_NANO);
      // Another worker holds the run now (this one paused past its lease): this one stops at its next renewal, and
      // gives the turn's admission back.
      await server.platform.database.query("UPDATE runs SET lease_owner = 'another-worker' WHERE id = $1", [created.body.runId]);
      const until = Date.now() + 10_000;
      while ((await availableNano(prepaid.id)) !== nano(1)) {
        if (Date.now() > until) throw new Error("the lost turn's hold was never given back");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await usageOf(prepaid.id)).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0 });
      expect((await steps(created.body.runId, prepaid.key)).filter((step) => step.kind === "model")).toEqual([]);
      // The other worker is gone too: its lease runs out, the run is taken again and answers.
      const run = await ended(created.body.runId, prepaid.key);
      expect(run).toMatchObject({ status: "succeeded", result: { answer: "Answered on the second take." }, usage: { inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 1 } });
      expect(await usageOf(prepaid.id)).toEqual({ requests: 1, inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 1 });
      expect(nano(1) - (await balanceNano(prepaid.id))).toBe(costNano(SCRIPTED_PROMPT_TOKENS, 1));
      expect(await availableNano(prepaid.id)).toBe(await balanceNano(prepaid.id));
    }, 30_000);

    it("does not bill a turn cut by the worker stopping (a drain, an update): the run is queued again and its turn billed once, when it runs", async () => {
      const prepaid = await organization("stopped worker", { billingMode: "prepaid", creditBalanceDollars: 1, prices: { "*": PRICE } });
      const before = submitted();
      engine.queue.push({ deltas: ["Thinking", " slowly"], pauseBeforeFinishMs: 30_000 }, answer("Answered after the restart."));
      const created = await server.call("POST", "/v1/runs", RUN_BODY, prepaid.key);
      await turnRunning(before);
      await server.runs.worker.stop();
      try {
        expect(await server.runs.store.get(created.body.runId)).toMatchObject({ status: "queued" });
        expect(await usageOf(prepaid.id)).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0 });
        expect(await availableNano(prepaid.id)).toBe(nano(1));
        expect((await steps(created.body.runId, prepaid.key)).map((step) => [step.kind, step.event])).toEqual([["note", "released"]]);
      } finally {
        server.runs.worker.start();
      }
      const run = await ended(created.body.runId, prepaid.key);
      expect(run).toMatchObject({ status: "succeeded", result: { answer: "Answered after the restart." }, usage: { inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 1 } });
      expect(await usageOf(prepaid.id)).toEqual({ requests: 1, inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 1 });
      expect(nano(1) - (await balanceNano(prepaid.id))).toBe(costNano(SCRIPTED_PROMPT_TOKENS, 1));
      expect(await availableNano(prepaid.id)).toBe(await balanceNano(prepaid.id));
    }, 30_000);

    it("asks again for a turn refused because the limit store could not be reached, after its Retry-After, and the run goes on", async () => {
      const limited = await organization("limit store blip", { requestsPerMinute: 100 });
      engine.queue.push(answer("Answered once the store was back."));
      const limits = server.platform.limits;
      const reserve = limits.reserve;
      let refusals = 0;
      await server.runs.worker.stop();
      let runId = "";
      try {
        const created = await server.call("POST", "/v1/runs", RUN_BODY, limited.key);
        expect(created.status).toBe(202);
        runId = created.body.runId;
        // The limit store is down for the run's first two admissions of its turn.
        limits.reserve = async (buckets, now) => {
          if (refusals < 2) {
            refusals += 1;
            throw new LimitStoreUnavailableError("the test's limit store is down");
          }
          return reserve.call(limits, buckets, now);
        };
      } finally {
        server.runs.worker.start();
      }
      try {
        const run = await ended(runId, limited.key);
        expect(run).toMatchObject({ status: "succeeded", result: { answer: "Answered once the store was back." } });
        expect(refusals).toBe(2);
        expect(await usageOf(limited.id)).toEqual({ requests: 1, inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 1 });
      } finally {
        limits.reserve = reserve;
      }
    }, 30_000);

    it("runs a prepaid organization's run on a model priced at $0 with a balance of 0: no hold needed, billed $0", async () => {
      const free = await organization("free model", { billingMode: "prepaid", creditBalanceDollars: 0, prices: { "*": { inputPerMillion: 0, outputPerMillion: 0 } } });
      engine.queue.push(answer("Free."));
      const created = await server.call("POST", "/v1/runs", RUN_BODY, free.key);
      expect(created.status).toBe(202);
      const run = await ended(created.body.runId, free.key);
      expect(run).toMatchObject({ status: "succeeded", result: { answer: "Free." } });
      expect(await usageOf(free.id)).toEqual({ requests: 1, inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 1 });
      expect(await balanceNano(free.id)).toBe(0);
    });

    for (const cut of ["cancel", "timeout"] as const) {
      it(`bills a turn cut by ${cut === "cancel" ? "a cancel" : "options.timeout"} for what the engine computed, once: a usage row, the run's usage and a failed model step`, async () => {
        const start = nano(1);
        const prepaid = await organization(`cut by ${cut}`, { billingMode: "prepaid", creditBalanceDollars: 1, prices: { "*": PRICE } });
        const before = submitted();
        engine.queue.push({ deltas: ["Thinking", " slowly"], pauseBeforeFinishMs: 30_000 });
        const created = await server.call("POST", "/v1/runs", { ...RUN_BODY, ...(cut === "timeout" ? { options: { timeout: 1 } } : {}) }, prepaid.key);
        expect(created.status).toBe(202);
        await turnRunning(before);
        if (cut === "cancel") expect((await server.call("POST", `/v1/runs/${created.body.runId}/cancel`, undefined, prepaid.key)).status).toBe(200);
        const run = await ended(created.body.runId, prepaid.key);
        expect(run).toMatchObject({ status: "failed", error: { code: cut === "cancel" ? "cancelled" : "timeout" } });
        // The engine computed the prompt and two tokens before it was stopped.
        expect(run.usage).toMatchObject({ inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 2 });
        const logged = await steps(run.runId, prepaid.key);
        expect(logged).toEqual([expect.objectContaining({
          kind: "model", status: "failed", finish: "cut", cut: { code: cut === "cancel" ? "cancelled" : "timeout", message: expect.any(String) },
          text: "Thinking slowly", inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 2,
        })]);
        expect(await usageOf(prepaid.id)).toEqual({ requests: 1, inputTokens: SCRIPTED_PROMPT_TOKENS, outputTokens: 2 });
        expect(start - (await balanceNano(prepaid.id))).toBe(costNano(SCRIPTED_PROMPT_TOKENS, 2));
        expect(await availableNano(prepaid.id)).toBe(await balanceNano(prepaid.id));
      }, 20_000);
    }
  });
}
