// The operator's dashboard endpoints (`/api/v1/operator/`, README.md in this folder): organizations (listed, created
// and patched as `loom admin org create/set` do), any organization's keys, the live load of what serves models here,
// and the machine endpoints' payments.
import type { ServerContext } from "../http/context.js";
import type { Routes, Surface } from "../http/routes.js";
import type { WorkerLoadSource } from "../cluster/worker-load.js";
import { gaugesOf } from "../inference/routes.js";
import { ProtocolError } from "../protocol/internal.js";
import { organizationJson } from "../platform/admin/run-admin-command.js";
import type { KeyKind } from "../platform/contract.js";
import type { KeyAuthenticator } from "../platform/keys/key-authenticator.js";
import { read } from "../platform/route-helpers.js";
import type { PaymentStatus } from "../platform/store/payment-ledger.js";
import type { PlatformStores } from "../platform/store/platform-stores.js";
import { decodeOrderCursor, decodeTimeCursor, encodeOrderCursor, encodeTimeCursor } from "./cursor.js";
import type { DashboardAuth } from "./dashboard-auth.js";
import { dashboardError } from "./dashboard-reply.js";
import { type DashboardEndpoint, addDashboardEndpoint } from "./dashboard-route.js";
import { keyBody, operatorKeyJson } from "./shapes.js";

/** What the operator's dashboard endpoints need. */
export interface OperatorServices {
  auth: DashboardAuth;
  stores: Pick<PlatformStores, "organizations" | "keys" | "payments">;
  /** Every key authenticator of this process (inference and management): a key revoked here stops working at once. */
  keyAuthenticators: readonly KeyAuthenticator[];
  /** Each engine worker's load, behind a gateway; absent on `loom serve` (its models run in this process). */
  workers?: WorkerLoadSource;
}

const KEY_KINDS: readonly KeyKind[] = ["inference", "management"];
const PAYMENT_STATUSES: readonly PaymentStatus[] = ["settling", "settled", "failed"];
/** The longest organization search: a name is at most 255 characters. */
const MAX_SEARCH_CHARS = 255;

/** The `/api/v1/operator/` endpoints on a server. */
export function operatorSurface(services: OperatorServices): (context: ServerContext) => Surface {
  return (context) => ({
    register(routes: Routes) {
      const authorize = (req: Parameters<DashboardAuth["operator"]>[0], changesState: boolean) => services.auth.operator(req, changesState);
      for (const endpoint of operatorEndpoints(services, context)) addDashboardEndpoint(context, routes, authorize, endpoint);
    },
    errorShapeFor(url) {
      return url.startsWith("/api/v1/operator/") ? dashboardError : undefined;
    },
  });
}

function operatorEndpoints(services: OperatorServices, context: ServerContext): DashboardEndpoint<void>[] {
  const { stores } = services;
  const existing = async (id: string) => {
    const organization = await read("the organization could not be read", () => stores.organizations.get(id));
    if (!organization) throw new ProtocolError("not_found", `no organization ${JSON.stringify(id.slice(0, 100))}`, "id");
    return organization;
  };
  return [
    {
      method: "GET",
      pattern: "/api/v1/operator/organizations",
      query: ["limit", "cursor", "search"],
      work: async ({ query }) => {
        const limit = query.limit();
        const after = query.cursor(decodeOrderCursor);
        // A name (at most 255 characters) or an id: longer text matches nothing.
        const search = query.text("search", MAX_SEARCH_CHARS);
        const page = await read("the organizations could not be read", () => stores.organizations.page({ limit, ...(after ? { after } : {}), ...(search !== undefined ? { search } : {}) }));
        return { organizations: page.items.map(organizationJson), nextCursor: page.next ? encodeOrderCursor(page.next) : null };
      },
    },
    {
      method: "POST",
      pattern: "/api/v1/operator/organizations",
      body: true,
      status: 201,
      work: async ({ body }) => {
        const { name, ...fields } = objectBody(body);
        // As `loom admin org create`: the store checks the name and the patch, naming the bad field.
        return { organization: organizationJson(await read("the organization could not be created", () => stores.organizations.create(name as string, fields))) };
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/operator/organizations/:id",
      work: async ({ params: [id] }) => ({ organization: organizationJson(await existing(id!)) }),
    },
    {
      method: "PATCH",
      pattern: "/api/v1/operator/organizations/:id",
      body: true,
      work: async ({ params: [id], body }) => {
        const patch = objectBody(body);
        // As `loom admin org set`: validateOrganizationPatch, then the change in one transaction.
        const organization = await read("the organization could not be changed", () => stores.organizations.update(id!, patch)).catch((error: unknown) => {
          // The store names the organization `organizationId`; here the path's `id` names it.
          throw error instanceof ProtocolError && error.param === "organizationId" ? new ProtocolError(error.kind, error.message, "id") : error;
        });
        return { organization: organizationJson(organization) };
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/operator/organizations/:id/keys",
      query: ["kind", "limit", "cursor"],
      work: async ({ params: [id], query }) => {
        const kind = query.choice("kind", KEY_KINDS);
        const limit = query.limit();
        const after = query.cursor(decodeTimeCursor);
        await existing(id!);
        const page = await read("the keys could not be read", () => stores.keys.page(id!, { limit, ...(kind ? { kind } : {}), ...(after ? { after } : {}) }));
        return { keys: page.items.map(operatorKeyJson), nextCursor: page.next ? encodeTimeCursor(page.next) : null };
      },
    },
    {
      method: "POST",
      pattern: "/api/v1/operator/organizations/:id/keys",
      body: true,
      status: 201,
      work: async ({ params: [id], body }) => {
        const { name, kind } = keyBody(body, ["kind", "name"]);
        await existing(id!);
        const { record, key } = await read("the key could not be created", () => stores.keys.create(id!, kind!, name));
        return { key: { ...operatorKeyJson(record), secret: key } };
      },
    },
    {
      method: "DELETE",
      pattern: "/api/v1/operator/organizations/:id/keys/:keyId",
      work: async ({ params: [id, keyId] }) => {
        if (!(await read("the key could not be revoked", () => stores.keys.revoke(id!, keyId!)))) {
          throw new ProtocolError("not_found", `organization ${JSON.stringify(id!.slice(0, 100))} has no key ${JSON.stringify(keyId!.slice(0, 100))}`, "keyId");
        }
        for (const keys of services.keyAuthenticators) keys.forget();
        return { key: { id: keyId, isActive: false } };
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/operator/workers",
      work: async () => {
        const now = Date.now();
        // As /metrics: an engine that cannot answer (unavailable, restarting) is left out rather than failing the page.
        const [gauges, workers] = await Promise.all([
          Promise.allSettled(context.options.registry.entries.map(gaugesOf)),
          services.workers ? services.workers.workers() : Promise.resolve([]),
        ]);
        const models = gauges.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
        return {
          models: models.map((gauge) => ({
            model: gauge.model,
            running: gauge.running,
            waiting: gauge.waiting,
            kvBlocksUsed: gauge.kvBlocksUsed,
            kvBlocksCached: gauge.kvBlocksCached,
            kvBlocksFree: gauge.kvBlocksFree,
            tokensPerSecond: context.metrics.generated.perSecond(gauge.model, now),
            workers: workers.filter((worker) => worker.model === gauge.model).map(({ id, address, running, waiting, kvBlocksUsed, kvBlocksFree }) => ({ id, address, running, waiting, kvBlocksUsed, kvBlocksFree })),
          })),
        };
      },
    },
    {
      method: "GET",
      pattern: "/api/v1/operator/payments",
      query: ["status", "limit", "cursor"],
      work: async ({ query }) => {
        const status = query.choice("status", PAYMENT_STATUSES);
        const limit = query.limit();
        const after = query.cursor(decodeTimeCursor);
        const page = await read("the payments could not be read", () => stores.payments.page({ limit, ...(status ? { status } : {}), ...(after ? { after } : {}) }));
        return { payments: page.items, nextCursor: page.next ? encodeTimeCursor(page.next) : null };
      },
    },
  ];
}

/** A body that must be a JSON object (the fields are checked by the store). */
function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ProtocolError("invalid_request", "the body must be a JSON object", "body");
  return body as Record<string, unknown>;
}
