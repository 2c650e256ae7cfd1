// The dashboard's sign-in and DashboardAuth over real HTTP, on PGlite and PostgreSQL: sessions by management key and
// operator token, the cookie's flags, the CSRF token given again after a reload, sign-out, the cross-site and CSRF
// refusals, sessions ending with their credential, the two path families refusing each other's callers, the sign-in
// limit (in memory and shared through Redis), 502 when the database is gone, and the headers on every answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import type { SurfaceFactory } from "../http/app.js";
import { MemoryLimitStore } from "../platform/limits/memory-store.js";
import { TEST_REDIS_URL, deleteKeys, redisMissingReason, testKeyPrefix } from "../platform/limits/testing/redis.js";
import { TEST_BACKENDS, freshPlatform } from "../platform/testing/test-databases.js";
import { DASHBOARD_API_HEADERS } from "./api-headers.js";
import type { DashboardAuth } from "./dashboard-auth.js";
import { answerDashboard, dashboardError } from "./dashboard-reply.js";
import { rawExchange, rawRequest } from "../testing/raw-http.js";
import { type DashboardServer, startDashboardServer } from "./testing/dashboard-server.js";

const SESSION = "/api/v1/dashboard/session";
const HOUR_S = 3600;

/** Probe routes of the test: each answers what DashboardAuth made of the request. */
function probes(auth: DashboardAuth): SurfaceFactory[] {
  return [(context) => ({
    register(routes) {
      for (const method of ["GET", "POST", "PATCH", "DELETE"] as const) {
        routes.add(method, "/api/v1/dashboard/probe", () => dashboardError, (connection, req) => {
          const caller = auth.organization(req, method !== "GET");
          return answerDashboard(context, "probe", connection, () => caller);
        });
        routes.add(method, "/api/v1/operator/probe", () => dashboardError, (connection, req) => {
          const caller = auth.operator(req, method !== "GET");
          return answerDashboard(context, "probe", connection, async () => ({ operator: (await caller) === undefined }));
        });
      }
    },
  })];
}

/** The session cookie's value in a Set-Cookie header. */
function cookieOf(response: Response): string {
  const header = response.headers.get("set-cookie") ?? "";
  const token = /^loom_session=([^;]*);/.exec(header)?.[1];
  if (token === undefined) throw new Error(`no session cookie in ${JSON.stringify(header)}`);
  return token;
}

function expectDashboardHeaders(response: Response): void {
  for (const [name, value] of Object.entries(DASHBOARD_API_HEADERS)) expect(response.headers.get(name), `${response.url} ${name}`).toBe(value);
}

/** A response's JSON body, for assertions. */
async function json(response: Response): Promise<any> {
  return response.json();
}

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`dashboard sessions over HTTP on ${backend.name}`, backend.reason), () => {
    let server: DashboardServer;
    let remove: () => Promise<void>;
    let organizationId: string;
    let managementKey: string;
    let operatorToken: string;
    /** Every response the tests saw from the dashboard's API, for the header check at the end. */
    const answers: Response[] = [];

    async function call(method: string, path: string, options: { body?: unknown; cookie?: string; headers?: Record<string, string> } = {}): Promise<Response> {
      const headers: Record<string, string> = { ...(options.cookie !== undefined ? { cookie: `loom_session=${options.cookie}` } : {}), ...options.headers };
      if (options.body !== undefined) headers["content-type"] ??= "application/json";
      const response = await fetch(`${server.base}${path}`, { method, headers, ...(options.body !== undefined ? { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) } : {}) });
      answers.push(response);
      return response;
    }
    const signIn = (body: unknown, headers: Record<string, string> = {}) => call("POST", SESSION, { body, headers });
    async function signedIn(body: unknown): Promise<{ cookie: string; csrfToken: string }> {
      const response = await signIn(body);
      expect(response.status).toBe(200);
      return { cookie: cookieOf(response), csrfToken: (await json(response)).csrfToken };
    }

    beforeAll(async () => {
      failIfMissing(backend.reason);
      const fresh = await freshPlatform(backend);
      remove = fresh.remove;
      // A limit far above the tests' sign-ins: the limit has tests of its own, on servers of their own.
      server = await startDashboardServer({ platform: fresh.options, dashboard: { signInAttemptsPerMinute: 10_000 }, extraSurfaces: probes });
      const stores = server.platform.stores;
      organizationId = (await stores.organizations.create("Acme")).id;
      managementKey = (await stores.keys.create(organizationId, "management", "dashboard")).key;
      operatorToken = (await stores.operatorTokens.create("laptop")).token;
    }, 120_000);
    afterAll(async () => {
      await server?.close();
      await remove?.();
    });

    it("signs an organization in with a management key: its session, a CSRF token and the cookie", async () => {
      const before = Date.now();
      const response = await signIn({ managementKey });
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(body).toEqual({ session: { kind: "organization", organization: { id: organizationId, name: "Acme" }, expiresAt: expect.any(String) }, csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
      const expiresAt = Date.parse(body.session.expiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 12 * HOUR_S * 1000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 12 * HOUR_S * 1000 + 1000);
      const cookie = response.headers.get("set-cookie")!;
      expect(cookie).toMatch(/^loom_session=ds_[A-Za-z0-9_-]{43}; /);
      const flags = cookie.split("; ").slice(1);
      expect(flags.sort()).toEqual(["HttpOnly", `Max-Age=${12 * HOUR_S}`, "Path=/", "SameSite=Strict"].sort());
      expectDashboardHeaders(response);
    });

    it("sets the cookie Secure, named __Host-loom_session, when a proxy says the browser came over HTTPS", async () => {
      const response = await signIn({ managementKey }, { "x-forwarded-proto": "https" });
      expect(response.status).toBe(200);
      const cookie = response.headers.get("set-cookie")!;
      expect(cookie.split("; ")).toContain("Secure");
      const token = /^__Host-loom_session=(ds_[A-Za-z0-9_-]{43}); Path=\/; /.exec(cookie)?.[1];
      expect(token).toBeDefined();
      // The browser sends it back under that name.
      expect((await fetch(`${server.base}${SESSION}`, { headers: { cookie: `other=1; __Host-loom_session=${token}` } })).status).toBe(200);
      const plain = await signIn({ managementKey }, { "x-forwarded-proto": "http" });
      expect(plain.headers.get("set-cookie")!.split("; ")).not.toContain("Secure");
      expect(plain.headers.get("set-cookie")).toMatch(/^loom_session=/);
      // No trusted proxy said so (this server trusts none): no HSTS, whatever the header claims.
      expect(response.headers.get("strict-transport-security")).toBeNull();
    });

    it("signs the operator in with an operator token", async () => {
      const response = await signIn({ operatorToken });
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual({ session: { kind: "operator", expiresAt: expect.any(String) }, csrfToken: expect.any(String) });
      expect(cookieOf(response)).toMatch(/^ds_/);
    });

    it("refuses a wrong credential with 401 and a malformed body with 400 naming the field, setting no cookie", async () => {
      const { key: inferenceKey } = await server.platform.stores.keys.create(organizationId, "inference", "not for the dashboard");
      const revokedToken = await server.platform.stores.operatorTokens.create("revoked");
      await server.platform.stores.operatorTokens.revoke(revokedToken.record.id);
      for (const body of [
        { managementKey: `sk-mgmt-${"x".repeat(43)}` }, { managementKey: inferenceKey }, { managementKey: operatorToken },
        { operatorToken: `lop_${"x".repeat(43)}` }, { operatorToken: managementKey }, { operatorToken: revokedToken.token },
      ]) {
        const response = await signIn(body);
        expect(response.status, JSON.stringify(body)).toBe(401);
        expect(response.headers.get("set-cookie")).toBeNull();
        const error = await json(response);
        expect(error).toEqual({ error: expect.any(String), field: Object.keys(body)[0] });
      }
      const cases: Array<[unknown, string | undefined]> = [
        [{ managementKey, operatorToken }, "operatorToken"],
        [{}, "managementKey"],
        [{ managementKey, remember: true }, "remember"],
        [{ managementKey: 5 }, "managementKey"],
        [{ operatorToken: "" }, "operatorToken"],
        [{ operatorToken: "x".repeat(201) }, "operatorToken"],
        [[managementKey], undefined],
        ["{not json", undefined],
      ];
      for (const [body, field] of cases) {
        const response = await signIn(body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect((await json(response)).field).toBe(field);
        expect(response.headers.get("set-cookie")).toBeNull();
      }
      const wrongType = await signIn({ managementKey }, { "content-type": "text/plain" });
      expect(wrongType.status).toBe(400);
      const huge = await signIn({ managementKey: "x".repeat(2000) });
      expect(huge.status).toBe(413);
    });

    it("refuses a cross-site sign-in", async () => {
      const crossSite: Array<Record<string, string>> = [{ origin: "https://evil.example" }, { "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }];
      for (const headers of crossSite) {
        const response = await signIn({ managementKey }, headers);
        expect(response.status, JSON.stringify(headers)).toBe(403);
        expect(response.headers.get("set-cookie")).toBeNull();
      }
      const sameOrigin = await signIn({ managementKey }, { origin: server.base, "sec-fetch-site": "same-origin" });
      expect(sameOrigin.status).toBe(200);
    });

    it("GET gives the session and the same CSRF token again (a reloaded page); 401 without a live cookie", async () => {
      const response = await signIn({ managementKey });
      const { csrfToken, session } = await json(response);
      const cookie = cookieOf(response);
      const again = await call("GET", SESSION, { cookie });
      expect(again.status).toBe(200);
      expect(await json(again)).toEqual({ session, csrfToken });
      for (const options of [{}, { cookie: "ds_unknown" }, { cookie: "garbage!" }, { headers: { authorization: `Bearer ${managementKey}` } }]) {
        const refused = await call("GET", SESSION, options);
        expect(refused.status, JSON.stringify(options)).toBe(401);
        expect(Object.keys(await json(refused))).toEqual(["error"]);
      }
    });

    it("DELETE signs out only with the session's CSRF token, from the same site; the cookie is then dead", async () => {
      const { cookie, csrfToken } = await signedIn({ managementKey });
      const other = await signedIn({ managementKey });
      const refusals: Array<Record<string, string>> = [
        {},
        { "x-csrf-token": other.csrfToken },
        { "x-csrf-token": "wrong" },
        { "x-csrf-token": csrfToken, origin: "https://evil.example" },
        { "x-csrf-token": csrfToken, "sec-fetch-site": "cross-site" },
      ];
      for (const headers of refusals) {
        const refused = await call("DELETE", SESSION, { cookie, headers });
        expect(refused.status, JSON.stringify(headers)).toBe(403);
        expect(refused.headers.get("set-cookie")).toBeNull();
      }
      expect((await call("GET", SESSION, { cookie })).status).toBe(200);
      const signedOut = await call("DELETE", SESSION, { cookie, headers: { "x-csrf-token": csrfToken, origin: server.base, "sec-fetch-site": "same-origin" } });
      expect(signedOut.status).toBe(200);
      expect(await json(signedOut)).toEqual({ signedOut: true });
      // Both names cleared: the browser may hold either.
      expect(signedOut.headers.getSetCookie().sort()).toEqual(["__Host-loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure", "loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"]);
      expect((await call("GET", SESSION, { cookie })).status).toBe(401);
      expect((await call("DELETE", SESSION, { cookie, headers: { "x-csrf-token": csrfToken } })).status).toBe(401);
      // The other session lives on.
      expect((await call("GET", SESSION, { cookie: other.cookie })).status).toBe(200);
    });

    it("over HTTPS reads only the __Host- cookie: a plain loom_session (planted by a plain-HTTP page of the site) signs nobody in", async () => {
      const planted = await signedIn({ managementKey });
      const own = await signedIn({ operatorToken });
      const https = { "x-forwarded-proto": "https" };
      // Over HTTPS, the plain cookie alone is no session, live as it is; over plain HTTP it still is one.
      expect((await call("GET", SESSION, { cookie: planted.cookie, headers: https })).status).toBe(401);
      expect((await call("GET", SESSION, { cookie: planted.cookie })).status).toBe(200);
      // Beside the browser's own __Host- cookie, listed first or last, the planted one is never the session.
      for (const cookie of [`loom_session=${planted.cookie}; __Host-loom_session=${own.cookie}`, `__Host-loom_session=${own.cookie}; loom_session=${planted.cookie}`]) {
        const response = await call("GET", SESSION, { headers: { ...https, cookie } });
        expect(response.status, cookie).toBe(200);
        expect((await json(response)).session.kind).toBe("operator");
        // A change by cookie is the __Host- session's: the planted session's CSRF token is refused.
        expect((await call("POST", "/api/v1/operator/probe", { headers: { ...https, cookie, "x-csrf-token": own.csrfToken } })).status).toBe(200);
        expect((await call("POST", "/api/v1/dashboard/probe", { headers: { ...https, cookie, "x-csrf-token": planted.csrfToken } })).status).toBe(403);
      }
    });

    it("reads every Cookie and X-Forwarded-Proto line (a proxy that adds its own), over a raw socket", async () => {
      const plain = await signedIn({ managementKey });
      const own = await signedIn({ operatorToken });
      const request = rawRequest("GET", SESSION, { cookie: [`loom_session=${plain.cookie}`, `__Host-loom_session=${own.cookie}`], "x-forwarded-proto": ["http", "https"] });
      const { responses } = await rawExchange(server.port, request, { quietMs: 300 });
      expect(responses.map((response) => response.status)).toEqual([200]);
      expect(JSON.parse(responses[0]!.body).session.kind).toBe("operator");
    });

    it("signing out ends every session the browser presents, under both names, and clears both cookies", async () => {
      const old = await signedIn({ managementKey });
      const current = await signedIn({ operatorToken });
      const headers = { "x-forwarded-proto": "https", cookie: `__Host-loom_session=${current.cookie}; loom_session=${old.cookie}`, "x-csrf-token": current.csrfToken };
      const signedOut = await call("DELETE", SESSION, { headers });
      expect(signedOut.status).toBe(200);
      expect(signedOut.headers.getSetCookie().sort()).toEqual(["__Host-loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure", "loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure"]);
      // The plain cookie no longer signs in, even over plain HTTP.
      expect((await call("GET", SESSION, { cookie: old.cookie })).status).toBe(401);
      expect((await call("GET", SESSION, { headers: { cookie: `__Host-loom_session=${current.cookie}` } })).status).toBe(401);
    });

    it("ends an organization's sessions when the management key they signed in with is revoked", async () => {
      const stores = server.platform.stores;
      const doomed = await stores.keys.create(organizationId, "management", "doomed");
      const { cookie } = await signedIn({ managementKey: doomed.key });
      expect((await call("GET", "/api/v1/dashboard/probe", { cookie })).status).toBe(200);
      const revoked = await fetch(`${server.base}/api/v1/management/api-keys/${doomed.record.id}`, { method: "DELETE", headers: { authorization: `Bearer ${managementKey}` } });
      expect(revoked.status).toBe(200);
      expect((await call("GET", SESSION, { cookie })).status).toBe(401);
      expect((await call("GET", "/api/v1/dashboard/probe", { cookie })).status).toBe(401);
      // The management key's cache (half a second) forgets it too.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await call("GET", "/api/v1/dashboard/probe", { headers: { authorization: `Bearer ${doomed.key}` } })).status).toBe(401);
    });

    it("ends the operator's sessions when the operator token is revoked", async () => {
      const doomed = await server.platform.stores.operatorTokens.create("doomed");
      const { cookie } = await signedIn({ operatorToken: doomed.token });
      expect((await call("GET", "/api/v1/operator/probe", { cookie })).status).toBe(200);
      expect((await call("GET", "/api/v1/operator/probe", { headers: { authorization: `Bearer ${doomed.token}` } })).status).toBe(200);
      await server.platform.stores.operatorTokens.revoke(doomed.record.id);
      expect((await call("GET", SESSION, { cookie })).status).toBe(401);
      expect((await call("GET", "/api/v1/operator/probe", { cookie })).status).toBe(401);
      expect((await call("GET", "/api/v1/operator/probe", { headers: { authorization: `Bearer ${doomed.token}` } })).status).toBe(401);
    });

    it("each path family takes its own kind of caller only (401 otherwise), by cookie or bearer", async () => {
      const organization = await signedIn({ managementKey });
      const operator = await signedIn({ operatorToken });
      const orgBearer = { authorization: `Bearer ${managementKey}` };
      const operatorBearer = { authorization: `Bearer ${operatorToken}` };
      const dashboardProbe = await call("GET", "/api/v1/dashboard/probe", { cookie: organization.cookie });
      expect(dashboardProbe.status).toBe(200);
      expect(await json(dashboardProbe)).toEqual({ organizationId, keyId: expect.stringMatching(/^key_/) });
      expect((await call("GET", "/api/v1/dashboard/probe", { headers: orgBearer })).status).toBe(200);
      expect((await call("GET", "/api/v1/operator/probe", { cookie: operator.cookie })).status).toBe(200);
      expect(await json(await call("GET", "/api/v1/operator/probe", { headers: operatorBearer }))).toEqual({ operator: true });
      const wrongKind: Array<[string, { cookie?: string; headers?: Record<string, string> }]> = [
        ["/api/v1/operator/probe", { cookie: organization.cookie }],
        ["/api/v1/operator/probe", { headers: orgBearer }],
        ["/api/v1/dashboard/probe", { cookie: operator.cookie }],
        ["/api/v1/dashboard/probe", { headers: operatorBearer }],
        ["/api/v1/dashboard/probe", {}],
        ["/api/v1/operator/probe", {}],
        ["/api/v1/dashboard/probe", { headers: { authorization: "Basic abc" } }],
        ["/api/v1/operator/probe", { headers: { authorization: `Bearer lop_${"x".repeat(43)}` } }],
      ];
      for (const [path, options] of wrongKind) {
        const response = await call("GET", path, options);
        expect(response.status, `${path} ${JSON.stringify(options)}`).toBe(401);
        expect(Object.keys(await json(response))).toEqual(["error"]);
      }
    });

    it("changes by cookie need the CSRF token and the same site on every method; bearer changes need neither", async () => {
      const organization = await signedIn({ managementKey });
      const operator = await signedIn({ operatorToken });
      for (const method of ["POST", "PATCH", "DELETE"]) {
        expect((await call(method, "/api/v1/dashboard/probe", { cookie: organization.cookie })).status, method).toBe(403);
        expect((await call(method, "/api/v1/dashboard/probe", { cookie: organization.cookie, headers: { "x-csrf-token": operator.csrfToken } })).status, method).toBe(403);
        expect((await call(method, "/api/v1/dashboard/probe", { cookie: organization.cookie, headers: { "x-csrf-token": organization.csrfToken, "sec-fetch-site": "cross-site" } })).status, method).toBe(403);
        expect((await call(method, "/api/v1/dashboard/probe", { cookie: organization.cookie, headers: { "x-csrf-token": organization.csrfToken } })).status, method).toBe(200);
        expect((await call(method, "/api/v1/operator/probe", { cookie: operator.cookie })).status, method).toBe(403);
        expect((await call(method, "/api/v1/operator/probe", { cookie: operator.cookie, headers: { "x-csrf-token": operator.csrfToken, origin: server.base } })).status, method).toBe(200);
        expect((await call(method, "/api/v1/dashboard/probe", { headers: { authorization: `Bearer ${managementKey}`, origin: "https://evil.example" } })).status, method).toBe(200);
        expect((await call(method, "/api/v1/operator/probe", { headers: { authorization: `Bearer ${operatorToken}` } })).status, method).toBe(200);
      }
    });

    it("answers unknown paths and methods of the dashboard's API in its shape, with its headers; other /api/ paths as before", async () => {
      for (const path of ["/api/v1/dashboard/nothing", "/api/v1/operator/nothing", "/api/v1/dashboard"]) {
        const response = await call("GET", path);
        expect(response.status, path).toBe(404);
        expect(await json(response)).toEqual({ error: expect.stringContaining("no route for GET") });
      }
      const method = await call("PUT", SESSION);
      expect(method.status).toBe(405);
      expect(method.headers.get("allow")).toBe("POST, GET, DELETE, HEAD");
      expect(await json(method)).toEqual({ error: expect.stringContaining("PUT is not allowed") });
      const platform = await fetch(`${server.base}/api/v1/nothing`);
      expect(platform.status).toBe(404);
      expect(await json(platform)).toEqual({ error: expect.any(String) });
      expect(platform.headers.get("content-security-policy")).toBeNull();
    });

    it("every dashboard API answer carried the dashboard's headers", () => {
      expect(answers.length).toBeGreaterThan(50);
      for (const response of answers) expectDashboardHeaders(response);
    });
  });

  describe.skipIf(skipOutsideCi(backend.reason))(titled(`dashboard sign-in limit on ${backend.name}`, backend.reason), () => {
    /** A sign-in attempt with `body` as JSON (a string: a body of the wrong shape), as `headers` say (X-Forwarded-For, -Proto). */
    const attempt = (server: DashboardServer, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.base}${SESSION}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    const expectRefused = async (refused: Response, reason: RegExp) => {
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.headers.get("set-cookie")).toBeNull();
      expectDashboardHeaders(refused);
      expect((await json(refused)).error).toMatch(reason);
    };
    const wrong = `lop_${"y".repeat(43)}`;

    it("admits 10 attempts a minute per address and credential prefix, then answers 429 with Retry-After; other credentials go on", async () => {
      failIfMissing(backend.reason);
      const fresh = await freshPlatform(backend);
      const server = await startDashboardServer({ platform: fresh.options, dashboard: { platform: { limits: new MemoryLimitStore() } } });
      try {
        const { token } = await server.platform.stores.operatorTokens.create("limit");
        for (let i = 0; i < 10; i++) expect((await attempt(server, { operatorToken: wrong })).status).toBe(401);
        // The same prefix (lop_yyyyyy) with another secret counts with it.
        await expectRefused(await attempt(server, { operatorToken: `lop_${"y".repeat(6)}${"z".repeat(37)}` }), /too many sign-in attempts with this credential from this address \(10 a minute\)/);
        // Ten bad attempts through one address (a proxy not trusted) no longer lock everyone out: another credential signs in.
        expect((await attempt(server, { operatorToken: token })).status).toBe(200);
      } finally {
        await server.close();
        await fresh.remove();
      }
    });

    it("admits 100 attempts a minute from one address whatever the credentials, bodies of the wrong shape counted, then 429", async () => {
      failIfMissing(backend.reason);
      const fresh = await freshPlatform(backend);
      const server = await startDashboardServer({ platform: fresh.options, dashboard: { platform: { limits: new MemoryLimitStore() } } });
      try {
        const { token } = await server.platform.stores.operatorTokens.create("limit");
        const started = Date.now();
        const credential = (i: number) => ({ operatorToken: `lop_${String(i).padStart(6, "0")}${"y".repeat(37)}` });
        for (let i = 0; i < 50; i++) expect((await attempt(server, "{malformed")).status).toBe(400);
        for (let i = 0; i < 50; i++) expect((await attempt(server, credential(i))).status).toBe(401);
        // The window refills one attempt every 600 ms (GCRA): what refilled while these ran is admitted too, no more.
        let extra = 0;
        let refused: Response;
        while ((refused = await attempt(server, credential(100 + extra))).status === 401) extra++;
        expect(extra).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 600) + 1);
        await expectRefused(refused, /too many sign-in attempts from this address \(100 a minute\)/);
        // Further attempts are refused too, but for one refill (every 600 ms) a slow or busy machine may let come due
        // between two of them: then that one attempt is admitted, and the next is refused again.
        let refusedAt = Date.now();
        for (const body of [{ operatorToken: token }, "{malformed"]) {
          let response = await attempt(server, body);
          if (response.status !== 429 && Date.now() - refusedAt >= 600) response = await attempt(server, body);
          await expectRefused(response, /from this address/);
          refusedAt = Date.now();
        }
      } finally {
        await server.close();
        await fresh.remove();
      }
    });

    it("behind a trusted proxy, counts each client by the address the proxy reports, and sends HSTS over HTTPS", async () => {
      failIfMissing(backend.reason);
      const fresh = await freshPlatform(backend);
      // The test's requests come from 127.0.0.1: the proxy.
      const server = await startDashboardServer({ platform: fresh.options, dashboard: { platform: { limits: new MemoryLimitStore() } }, trustedProxies: ["127.0.0.0/8"] });
      try {
        const { token } = await server.platform.stores.operatorTokens.create("limit");
        const from = (client: string) => ({ "x-forwarded-for": `${client}, 127.0.0.2`, "x-forwarded-proto": "https" });
        for (let i = 0; i < 10; i++) expect((await attempt(server, { operatorToken: wrong }, from("203.0.113.1"))).status).toBe(401);
        await expectRefused(await attempt(server, { operatorToken: wrong }, from("203.0.113.1")), /too many sign-in attempts/);
        // A client writing another address on the left of the header is still the address the proxy saw.
        await expectRefused(await attempt(server, { operatorToken: wrong }, { "x-forwarded-for": "198.51.100.5, 203.0.113.1" }), /too many/);
        // Another client behind the same proxy is not locked out, even with the same bad credential.
        expect((await attempt(server, { operatorToken: wrong }, from("203.0.113.2"))).status).toBe(401);
        const signedIn = await attempt(server, { operatorToken: token }, from("203.0.113.2"));
        expect(signedIn.status).toBe(200);
        expect(signedIn.headers.get("strict-transport-security")).toBe("max-age=31536000");
        expect(signedIn.headers.get("set-cookie")).toMatch(/^__Host-loom_session=ds_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
        // Every answer over HTTPS carries it (a refusal, an unknown path); none over plain HTTP.
        expect((await fetch(`${server.base}${SESSION}`, { headers: from("203.0.113.3") })).headers.get("strict-transport-security")).toBe("max-age=31536000");
        expect((await fetch(`${server.base}/api/v1/nowhere`, { headers: from("203.0.113.3") })).headers.get("strict-transport-security")).toBe("max-age=31536000");
        expect((await fetch(`${server.base}${SESSION}`, { headers: { ...from("203.0.113.3"), "x-forwarded-proto": "http" } })).headers.get("strict-transport-security")).toBeNull();
      } finally {
        await server.close();
        await fresh.remove();
      }
    });

    it("ignores X-Forwarded-For and -Proto from a peer that is not a trusted proxy", async () => {
      failIfMissing(backend.reason);
      const fresh = await freshPlatform(backend);
      const server = await startDashboardServer({ platform: fresh.options, dashboard: { platform: { limits: new MemoryLimitStore() } }, trustedProxies: ["10.0.0.0/8"] });
      try {
        // A fresh spoofed address each time: all of them count as 127.0.0.1, the peer.
        for (let i = 0; i < 10; i++) expect((await attempt(server, { operatorToken: wrong }, { "x-forwarded-for": `203.0.113.${i}` })).status).toBe(401);
        const refused = await attempt(server, { operatorToken: wrong }, { "x-forwarded-for": "198.51.100.77", "x-forwarded-proto": "https" });
        await expectRefused(refused, /too many sign-in attempts/);
        expect(refused.headers.get("strict-transport-security")).toBeNull();
      } finally {
        await server.close();
        await fresh.remove();
      }
    });
  });
}

const redisReason = await redisMissingReason();
const postgresReason = TEST_BACKENDS[1]!.reason;

describe.skipIf(skipOutsideCi(redisReason))(titled("dashboard sign-in limit shared through Redis", redisReason), () => {
  it("counts the attempts of every server on one Redis together", async () => {
    failIfMissing(redisReason);
    const prefix = testKeyPrefix();
    // Two servers, each on a database of its own, sharing only Redis (as two gateways share it).
    const shared = { redisUrl: TEST_REDIS_URL, redisKeyPrefix: prefix };
    const freshFirst = await freshPlatform(TEST_BACKENDS[0]!, shared);
    const freshSecond = await freshPlatform(TEST_BACKENDS[0]!, shared);
    const first = await startDashboardServer({ platform: freshFirst.options });
    const second = await startDashboardServer({ platform: freshSecond.options }).catch(async (error: unknown) => {
      await first.close();
      throw error;
    });
    try {
      const attempt = (server: DashboardServer) =>
        fetch(`${server.base}${SESSION}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ operatorToken: "wrong" }) });
      for (let i = 0; i < 10; i++) expect((await attempt(i % 2 === 0 ? first : second)).status).toBe(401);
      expect((await attempt(first)).status).toBe(429);
      expect((await attempt(second)).status).toBe(429);
    } finally {
      await second.close();
      await first.close();
      await freshFirst.remove();
      await freshSecond.remove();
      await deleteKeys(prefix);
    }
  });
});

describe.skipIf(skipOutsideCi(postgresReason))(titled("the dashboard when its database goes away", postgresReason), () => {
  it("answers 502, never a 500 or a hang", async () => {
    failIfMissing(postgresReason);
    const fresh = await freshPlatform(TEST_BACKENDS[1]!);
    const server = await startDashboardServer({ platform: fresh.options, extraSurfaces: probes });
    try {
      const { token } = await server.platform.stores.operatorTokens.create("gone");
      const signedIn = await fetch(`${server.base}${SESSION}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ operatorToken: token }) });
      const cookie = `loom_session=${cookieOf(signedIn)}`;
      await server.platform.database.close();
      const answers = [
        await fetch(`${server.base}${SESSION}`, { headers: { cookie }, signal: AbortSignal.timeout(10_000) }),
        await fetch(`${server.base}/api/v1/operator/probe`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) }),
        await fetch(`${server.base}${SESSION}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ operatorToken: token }), signal: AbortSignal.timeout(10_000) }),
      ];
      for (const response of answers) {
        expect(response.status).toBe(502);
        expect((await json(response)).error).toMatch(/did not answer/);
        expectDashboardHeaders(response);
      }
    } finally {
      await server.close().catch(() => undefined);
      await fresh.remove();
    }
  });
});
