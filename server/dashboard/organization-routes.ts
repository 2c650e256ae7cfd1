// An organization's dashboard endpoints (`/api/v1/dashboard/`, README.md in this folder): its record, its inference
// keys, its usage (today and a daily series), its agent runs, and the models served here. The caller is whoever
// the DashboardAuth says; everything read is that organization's, and another organization's key or run is a 404.
import type { ServerContext } from "../http/context.js";
import type { Routes, Surface } from "../http/routes.js";
import { ProtocolError } from "../protocol/internal.js";
import type { RunStatus } from "../runs/contract.js";
import { callbackShape, pollShape, type RunServices, stepShape } from "../runs/routes.js";
import { organizationJson } from "../platform/admin/run-admin-command.js";
import type { Organization } from "../platform/contract.js";
import type { KeyAuthenticator } from "../platform/keys/key-authenticator.js";
import { utcDay } from "../platform/limits/daily.js";
import { read } from "../platform/route-helpers.js";
import type { PlatformStores } from "../platform/store/platform-stores.js";
import { usageSnapshot } from "../platform/usage-snapshot.js";
import { decodeOrderCursor, decodeTimeCursor, encodeOrderCursor, encodeTimeCursor } from "./cursor.js";
import type { DashboardAuth, OrganizationCaller } from "./dashboard-auth.js";
import { dashboardError } from "./dashboard-reply.js";
import { type DashboardEndpoint, addDashboardEndpoint } from "./dashboard-route.js";
import { servedModelNames } from "./model-names.js";
import { keyBody, organizationKeyJson } from "./shapes.js";

/** What an organization's dashboard endpoints need. */
export interface DashboardOrganizationServices {
  auth: DashboardAuth;
  stores: Pick<PlatformStores, "organizations" | "keys" | "usage">;
  /** The inference keys' authenticator: a key revoked here stops working in this process at once. */
  inferenceKeys: KeyAuthenticator;
  /** Agent runs, as POST /v1/runs/{id}/cancel and GET /v1/runs/{id}/steps use them. */
  runs: Pick<RunServices, "store" | "cancelHere" | "callbackOf">;
}

/** The statuses a run listing filters on. */
const RUN_STATUSES: readonly RunStatus[] = ["queued", "processing", "succeeded", "failed"];
/** `days` of the usage series: 1 to 90, default 30. */
const SERIES_DAYS = { min: 1, max: 90, default: 30 };
/** Keys listed in the usage per key (those that used the most tokens); `keysWithUse` says how many had use. */
const KEYS_IN_USAGE = 100;
/** Characters of a run's first content part shown as its question. */
const QUESTION_CHARS = 200;

/** The `/api/v1/dashboard/` data endpoints on a server. */
export function dashboardOrganizationSurface(services: DashboardOrganizationServices): (context: ServerContext) => Surface {
  return (context) => ({
    register(routes: Routes) {
      const authorize = (req: Parameters<DashboardAuth["organization"]>[0], changesState: boolean) => services.auth.organization(req, changesState);
      for (const endpoint of organizationEndpoints(services, context)) addDashboardEndpoint(context, routes, authorize, endpoint);
    },
    errorShapeFor(url) {
      return url.startsWith("/api/v1/dashboard/") ? dashboardError : undefined;
    },
  });
}

function organizationEndpoints(services: DashboardOrganizationServices, context: ServerContext): DashboardEndpoint<OrganizationCaller>[] {
  const { stores, runs } = services;
  const organizationOf = async (caller: OrganizationCaller): Promise<Organization> => {
    const organization = await read("the organization could not be read", () => stores.organizations.get(caller.organizationId));
    // Its key authenticated a moment ago: an organization gone since is no caller any more.
    if (!organization) throw new ProtocolError("authentication", "this organization no longer exists");
    return organization;
  };
  const ownRun = async (caller: OrganizationCaller, id: string) => {
    const run = await read("the run could not be read", () => runs.store.get(id, caller.organizationId));
    if (!run) throw runNotFound(id);
    return run;
  };
  return [
    {
      method: "GET",
      pattern: "/api/v1/dashboard/organization",
      work: async ({ caller }) => ({ organization: organizationJson(await organizationOf(caller)) }),
    },
    {
      method: "GET",
      pattern: "/api/v1/dashboard/keys",
      query: ["limit", "cursor"],
      work: async ({ caller, query }) => {
        const limit = query.limit();
        const after = query.cursor(decodeTimeCursor);
        const page = await read("the keys could not be read", () => stores.keys.page(caller.organizationId, { kind: "inference", limit, ...(after ? { after } : {}) }));
        return { keys: page.items.map(organizationKeyJson), nextCursor: page.next ? encodeTimeCursor(page.next) : null };
      },
    },
    {
      method: "POST",
      pattern: "/api/v1/dashboard/keys",
      body: true,
      status: 201,
      work: async ({ caller, body }) => {
        const { name } = keyBody(body, ["name"]);
        const { record, key } = await read("the key could not be created", () => stores.keys.create(caller.organizationId, "inference", name));
        return { key: { ...organizationKeyJson(record), secret: key } };
      },
    },
    {
      method: "DELETE",
      pattern: "/api/v1/dashboard/keys/:id",
      work: async ({ caller, params: [id] }) => {
        // The dashboard's keys are the organization's inference keys; its management keys are not among them.
        const record = await read("the key could not be read", () => stores.keys.get(caller.organizationId, id!));
        if (!record || record.kind !== "inference") throw new ProtocolError("not_found", `no API key ${JSON.stringify(id!.slice(0, 100))} in this organization`, "id");
        await read("the key could not be revoked", () => stores.keys.revoke(caller.organizationId, id!));
        // This process stops accepting it now; others within their cache's lifetime.
        services.inferenceKeys.forget();
        return { key: { id, isActive: false } };
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/dashboard/usage",
      query: ["days"],
      work: async ({ caller, query }) => {
        const days = query.integer("days", SERIES_DAYS.min, SERIES_DAYS.max, SERIES_DAYS.default);
        const organization = await organizationOf(caller);
        const now = Date.now();
        const to = utcDay(now);
        const from = utcDay(now - (days - 1) * 86_400_000);
        const [today, series] = await read("usage could not be read", () => Promise.all([
          stores.usage.today(organization.id, to),
          stores.usage.series(organization.id, from, to),
        ]));
        return { today: usageSnapshot(organization, today, now), series, from, to };
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/dashboard/usage/keys",
      query: ["days"],
      // Apart from /usage: it sums the per-key rows (keys x models x days of them), which an organization with
      // thousands of keys makes the slowest read here, so the usage page shows its other numbers without waiting.
      work: async ({ caller, query }) => {
        const days = query.integer("days", SERIES_DAYS.min, SERIES_DAYS.max, SERIES_DAYS.default);
        const now = Date.now();
        const to = utcDay(now);
        const from = utcDay(now - (days - 1) * 86_400_000);
        const perKey = await read("usage could not be read", () => stores.usage.keyTotals(caller.organizationId, from, to, KEYS_IN_USAGE));
        return { keys: perKey.keys, keysWithUse: perKey.keysWithUse, from, to };
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/dashboard/runs",
      query: ["status", "limit", "cursor"],
      work: async ({ caller, query }) => {
        const status = query.choice("status", RUN_STATUSES);
        const limit = query.limit();
        const before = query.cursor(decodeOrderCursor);
        const page = await read("the runs could not be read", () => runs.store.pageOfOrganization(caller.organizationId, { limit, ...(status ? { status } : {}), ...(before ? { before } : {}) }));
        const now = Date.now();
        return { runs: page.items.map(({ run, question }) => ({ ...pollShape(run, now), question })), nextCursor: page.next ? encodeOrderCursor(page.next) : null };
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/dashboard/runs/:id",
      work: async ({ caller, params: [id] }) => {
        const run = await ownRun(caller, id!);
        const [steps, callback] = await read("the run's steps could not be read", () => Promise.all([runs.store.steps(run.id), runs.callbackOf(run.id)]));
        const first = run.spec.content[0];
        return {
          run: { ...pollShape(run), question: first === undefined ? null : [...first].slice(0, QUESTION_CHARS).join(""), instructions: run.spec.instructions ?? null },
          steps: steps.map(stepShape),
          ...(callback ? { callback: callbackShape(callback) } : {}),
        };
      },
    },
    {
      method: "POST",
      pattern: "/api/v1/dashboard/runs/:id/cancel",
      work: async ({ caller, params: [id] }) => {
        // As POST /v1/runs/{id}/cancel: a queued run fails at once, a processing one is flagged and stopped here if it runs here.
        const run = await read("the run could not be cancelled", () => runs.store.cancel(id!, caller.organizationId));
        if (!run) throw runNotFound(id!);
        if (run.status === "processing") runs.cancelHere(run.id);
        return pollShape(run);
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/dashboard/models",
      work: async () => ({ models: servedModelNames(context.options.registry.entries) }),
    },
  ];
}

function runNotFound(id: string): ProtocolError {
  return new ProtocolError("not_found", `no run ${JSON.stringify(id.slice(0, 100))} in this organization`, "id");
}
