// Text the database cannot store (U+0000, %00 in a path, and lone UTF-16 surrogates), sent over HTTP to the dashboard's
// organization and operator endpoints and its sign-in, on PGlite and on PostgreSQL: each is a 400 naming the field as
// the client wrote it (a 401 for a credential, which is only ever hashed), never a 500, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { TEST_BACKENDS, freshPlatform } from "../platform/testing/test-databases.js";
import { type DashboardServer, startDashboardServer } from "./testing/dashboard-server.js";

/** U+0000 and a lone high and low surrogate: what neither PostgreSQL text nor jsonb holds. */
const BAD_TEXT = ["a\u0000b", "a\ud800b", "\udc00"];

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`the dashboard refuses text the database cannot store on ${backend.name}`, backend.reason), () => {
    let server: DashboardServer;
    let remove: () => Promise<void>;
    let organizationId: string;
    let management: string;
    let operator: string;

    async function call(method: string, path: string, bearer: string | undefined, body?: unknown): Promise<{ status: number; body: any }> {
      const response = await fetch(`${server.base}${path}`, {
        method,
        headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    }
    const expectRefused = (answer: { status: number; body: any }, field: string, what: string) => {
      expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body, what).toEqual({ error: expect.any(String), field });
    };

    beforeAll(async () => {
      failIfMissing(backend.reason);
      const fresh = await freshPlatform(backend);
      remove = fresh.remove;
      server = await startDashboardServer({ platform: fresh.options });
      const stores = server.platform.stores;
      organizationId = (await stores.organizations.create("Acme")).id;
      management = (await stores.keys.create(organizationId, "management", "ops")).key;
      operator = (await stores.operatorTokens.create("tests")).token;
    }, 60_000);
    afterAll(async () => {
      await server?.close();
      await remove?.();
    });

    it("refuses %00 in an organization's key and run ids, naming id", async () => {
      for (const id of ["%00", "key_%00", "run_1%002"]) {
        expectRefused(await call("DELETE", `/api/v1/dashboard/keys/${id}`, management), "id", `revoke ${id}`);
        expectRefused(await call("GET", `/api/v1/dashboard/runs/${id}`, management), "id", `run ${id}`);
        expectRefused(await call("POST", `/api/v1/dashboard/runs/${id}/cancel`, management), "id", `cancel ${id}`);
      }
      expect((await call("GET", "/api/v1/dashboard/runs/run_missing", management)).status).toBe(404);
    });

    it("refuses U+0000 and lone surrogates in an organization's new key name, naming name", async () => {
      for (const bad of BAD_TEXT) expectRefused(await call("POST", "/api/v1/dashboard/keys", management, { name: bad }), "name", `name ${JSON.stringify(bad)}`);
    });

    it("refuses %00 in the operator's organization and key ids, naming id or keyId", async () => {
      const organizations = "/api/v1/operator/organizations";
      expectRefused(await call("GET", `${organizations}/org_%00`, operator), "id", "GET org");
      expectRefused(await call("PATCH", `${organizations}/org_%00`, operator, { closedBeta: true }), "id", "PATCH org");
      expectRefused(await call("GET", `${organizations}/org_%00/keys`, operator), "id", "GET keys");
      expectRefused(await call("POST", `${organizations}/org_%00/keys`, operator, { kind: "inference", name: "app" }), "id", "POST key");
      expectRefused(await call("DELETE", `${organizations}/org_%00/keys/key_1`, operator), "id", "DELETE key, bad organization");
      expectRefused(await call("DELETE", `${organizations}/${organizationId}/keys/key_%00`, operator), "keyId", "DELETE key, bad key");
      expect((await call("GET", `${organizations}/org_missing`, operator)).status).toBe(404);
    });

    it("refuses U+0000 and lone surrogates in the operator's organization and key fields, naming the field", async () => {
      const organizations = "/api/v1/operator/organizations";
      for (const bad of BAD_TEXT) {
        const shown = JSON.stringify(bad);
        expectRefused(await call("POST", organizations, operator, { name: bad }), "name", `create ${shown}`);
        expectRefused(await call("PATCH", `${organizations}/${organizationId}`, operator, { name: bad }), "name", `rename ${shown}`);
        expectRefused(await call("PATCH", `${organizations}/${organizationId}`, operator, { planLabel: bad }), "planLabel", `planLabel ${shown}`);
        expectRefused(await call("PATCH", `${organizations}/${organizationId}`, operator, { prices: { [bad]: { inputPerMillion: 1, outputPerMillion: 1 } } }), "prices", `price slug ${shown}`);
        expectRefused(await call("POST", `${organizations}/${organizationId}/keys`, operator, { kind: "inference", name: bad }), "name", `key ${shown}`);
      }
      const names = (await server.platform.stores.organizations.page({ limit: 100 })).items.map((organization) => organization.name);
      expect(names).toEqual(["Acme"]);
    });

    it("answers a sign-in credential holding U+0000 or a lone surrogate as an unknown one (401), not a 500", async () => {
      for (const bad of BAD_TEXT) {
        for (const field of ["managementKey", "operatorToken"]) {
          const answer = await call("POST", "/api/v1/dashboard/session", undefined, { [field]: `${field === "managementKey" ? "sk-mgmt-" : "lop_"}${bad}` });
          expect(answer.status, `${field} ${JSON.stringify(bad)}: ${JSON.stringify(answer.body)}`).toBe(401);
          expect(answer.body.field).toBe(field);
        }
      }
    });
  });
}
