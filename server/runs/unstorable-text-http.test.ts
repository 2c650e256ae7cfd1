// Text the database cannot store (U+0000, %00 in a path, and lone UTF-16 surrogates), sent over HTTP to the runs API,
// the machine endpoints and the management API on PGlite and on PostgreSQL: each is a 400 naming the field as the
// client wrote it, never a 500, and nothing is created.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { resolvePaymentsConfig } from "../machines/payments-config.js";
import { utcDay } from "../platform/limits/daily.js";
import { TEST_BACKENDS } from "../platform/testing/test-databases.js";
import { ScriptedEngine } from "../testing/scripted-engine.js";
import { fixedTools as tools } from "./testing/fixed-tools.js";
import { type RunsServer, startRunsServer } from "./testing/runs-server.js";

/** U+0000 and a lone high and low surrogate: what neither PostgreSQL text nor jsonb holds. */
const BAD_TEXT = ["a\u0000b", "a\ud800b", "\udc00"];

/** Payment settings whose facilitator is never reached: a body is checked before any payment is asked for. */
const PAYMENTS = resolvePaymentsConfig({ payTo: `0x${"1".repeat(40)}`, settlement: { mode: "facilitator", url: "http://127.0.0.1:9" } });

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`text the database cannot store, over HTTP on ${backend.name}`, backend.reason), () => {
    let server: RunsServer;
    let engine: ScriptedEngine;
    let management: string;
    const expectRefused = (answer: { status: number; body: any }, field: string, what: string) => {
      expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body, what).toEqual({ error: expect.any(String), field });
    };

    beforeAll(async () => {
      failIfMissing(backend.reason);
      engine = new ScriptedEngine();
      server = await startRunsServer(backend, { engine, runs: { tools }, payments: PAYMENTS });
      management = (await server.platform.stores.keys.create(server.owner.organizationId, "management", "ops")).key;
    }, 60_000);
    afterAll(async () => server?.close());

    it("refuses %00 in a run id on every runs route, naming id", async () => {
      for (const id of ["%00", "run_%00", "run_1%002"]) {
        expectRefused(await server.call("GET", `/v1/runs/${id}`), "id", `GET ${id}`);
        expectRefused(await server.call("GET", `/v1/runs/${id}/steps`), "id", `GET ${id}/steps`);
        expectRefused(await server.call("POST", `/v1/runs/${id}/cancel`), "id", `cancel ${id}`);
      }
      // An id that merely does not exist is still a 404.
      expect((await server.call("GET", "/v1/runs/run_missing")).status).toBe(404);
    });

    it("refuses U+0000 and lone surrogates in every string of a run's body, naming the field, and creates no run", async () => {
      const input = (extra: Record<string, unknown>) => ({ engine: "tim", input: { instructions: "Find it.", ...extra } });
      for (const bad of BAD_TEXT) {
        const shown = JSON.stringify(bad);
        expectRefused(await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: bad } }), "input.instructions", `instructions ${shown}`);
        expectRefused(await server.call("POST", "/v1/runs", input({ content: [{ text: "fine" }, { text: bad }] })), "input.content[1].text", `content ${shown}`);
        expectRefused(await server.call("POST", "/v1/runs", input({ resources: [bad] })), "input.resources[0]", `resources ${shown}`);
        expectRefused(await server.call("POST", "/v1/runs", input({ skills: ["fine", bad] })), "input.skills[1]", `skills ${shown}`);
        expectRefused(await server.call("POST", "/v1/runs", input({ agentId: bad })), "input.agentId", `agentId ${shown}`);
        const schema = { type: "object", properties: { answer: { type: "string", description: bad } } };
        expectRefused(await server.call("POST", "/v1/runs", input({ answerFormat: schema })), "input.answerFormat.properties.answer.description", `answerFormat ${shown}`);
        const keyed = { type: "object", properties: { [`x${bad}`]: { type: "string" } } };
        expectRefused(await server.call("POST", "/v1/runs", input({ reasoningFormat: keyed })), "input.reasoningFormat.properties", `reasoningFormat key ${shown}`);
        expectRefused(await server.call("POST", "/v1/runs", { ...input({}), output: { callbackUrl: `https://hooks.example/${bad}` } }), "output.callbackUrl", `callbackUrl ${shown}`);
      }
      expect(await server.platform.database.query("SELECT id FROM runs")).toEqual([]);
    });

    it("stores a model's answer holding U+0000 and lone surrogates with U+FFFD in their place: the run succeeds and its usage counts", async () => {
      engine.queue.push({ deltas: ["Half\u0000", " a\ud800 pair", " \ud83d\ude00\udc00."] });
      const created = await server.call("POST", "/v1/runs", { engine: "tim", input: { instructions: "Answer." } });
      expect(created.status).toBe(202);
      let run: any;
      for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 20))) {
        run = (await server.call("GET", `/v1/runs/${created.body.runId}`)).body;
        if (run.status === "succeeded" || run.status === "failed") break;
      }
      expect(run).toMatchObject({ status: "succeeded", result: { answer: "Half\ufffd a\ufffd pair \ud83d\ude00\ufffd." } });
      const steps = (await server.call("GET", `/v1/runs/${created.body.runId}/steps`)).body.steps;
      expect(steps.map((step: any) => [step.kind, step.status])).toEqual([["model", "finished"]]);
      const rows = await server.platform.stores.usage.rows(server.owner.organizationId, utcDay(Date.now()));
      expect(rows.reduce((sum, row) => sum + row.outputTokens, 0)).toBe(3);
    });

    it("refuses U+0000 and lone surrogates in a machine endpoint's body before any payment, naming the field", async () => {
      for (const bad of BAD_TEXT) {
        expectRefused(await server.call("POST", "/v1/machines/searches", { instructions: bad }), "instructions", `search ${JSON.stringify(bad)}`);
        expectRefused(await server.call("POST", "/v1/machines/runs", { engine: "tim", input: { instructions: bad } }), "input.instructions", `run ${JSON.stringify(bad)}`);
      }
    });

    it("refuses %00 in a machine poll's id (no key needed), naming runId", async () => {
      for (const path of ["/v1/machines/searches", "/v1/machines/runs"]) {
        const answer = await fetch(`${server.url}${path}/run_%00`);
        expectRefused({ status: answer.status, body: await answer.json() }, "runId", path);
        expect((await fetch(`${server.url}${path}/run_missing`)).status).toBe(404);
      }
    });

    it("refuses %00 in a management key id and U+0000 or a lone surrogate in a key's name, naming the field", async () => {
      const keysPath = "/api/v1/management/api-keys";
      expectRefused(await server.call("DELETE", `${keysPath}/key_%00`, undefined, management), "id", "revoke key_%00");
      expect((await server.call("DELETE", `${keysPath}/key_missing`, undefined, management)).status).toBe(404);
      for (const bad of BAD_TEXT) expectRefused(await server.call("POST", keysPath, { name: bad }, management), "name", `name ${JSON.stringify(bad)}`);
      const listed = await server.call("GET", keysPath, undefined, management);
      expect(listed.body.apiKeys.map((key: { name: string }) => key.name)).toEqual(["owner key"]);
    });
  });
}
