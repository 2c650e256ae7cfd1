// The platform surface (spec 4.3-4.5, plus revocation and the operator's admin endpoint): GET /api/v1/usage with an
// inference key; create, list and revoke inference keys with a management key; and POST /admin/v1/command, by which
// `loom admin` reaches a server that holds the embedded database. Errors are `{error: string}` (spec 2.7).
import type { HttpRequest } from "uWebSockets.js";
import { readJsonBody } from "../http/body.js";
import type { ServerContext } from "../http/context.js";
import type { ErrorResponder } from "../http/guard.js";
import type { Connection } from "../http/reply.js";
import type { Routes, Surface } from "../http/routes.js";
import { ProtocolError } from "../protocol/internal.js";
import { type KeyRecord, type Organization, PlatformInputError } from "./contract.js";
import { utcDay } from "./limits/daily.js";
import type { KeyAuthenticator } from "./keys/key-authenticator.js";
import { answer, authenticate, decodePathSegment, platformError, read, withBody } from "./route-helpers.js";
import type { ModelUsage } from "./store/usage-store.js";
import { requireName } from "./store/validate.js";
import { usageSnapshot } from "./usage-snapshot.js";

/** What the platform routes need. */
export interface PlatformServices {
  inferenceKeys: KeyAuthenticator;
  managementKeys: KeyAuthenticator;
  /** A fresh read of the organization. */
  organization(id: string): Promise<Organization | undefined>;
  /** The organization's usage of a UTC day per model, summed over its keys. */
  usageOf(organizationId: string, day: string): Promise<ModelUsage[]>;
  createInferenceKey(organizationId: string, name: string): Promise<{ record: KeyRecord; key: string }>;
  /** The organization's inference keys (no digests, no secrets). */
  listInferenceKeys(organizationId: string): Promise<KeyRecord[]>;
  /** Revokes one of the organization's keys; false when it has no such key. */
  revokeKey(organizationId: string, keyId: string): Promise<boolean>;
  /**
   * The admin endpoint, when this server offers one (embedded database): answers one request (token checked there).
   * Undefined until the server listens and has written its admin.json.
   */
  admin?: () => ((authorization: string, body: string) => Promise<{ status: number; body: unknown; cause?: unknown }>) | undefined;
}

/** Bodies of platform requests are small: a key name, an admin command. */
const MAX_PLATFORM_BODY_BYTES = 64 * 1024;
/** Admin commands carry corpus documents too (`loom admin corpus add` sends batches of up to 4 MiB). */
const MAX_ADMIN_BODY_BYTES = 8 * 1024 * 1024;

/** The platform's routes on a server. */
export function platformSurface(services: PlatformServices): (context: ServerContext) => Surface {
  return (context) => ({
    register(routes: Routes) {
      const shape = (): ErrorResponder => platformError;
      routes.add("GET", "/api/v1/usage", shape, (connection, req) => answer(context, "/api/v1/usage", connection, async () => {
        const principal = await authenticate(services.inferenceKeys, req);
        const organization = await read("usage could not be read", () => services.organization(principal.organizationId));
        if (!organization) throw new ProtocolError("authentication", "invalid API key (its organization no longer exists)");
        if (!organization.closedBeta) throw new ProtocolError("permission", "Closed-beta access is required");
        const now = Date.now();
        const today = await read("usage could not be read", () => services.usageOf(organization.id, utcDay(now)));
        return usageSnapshot(organization, today, now);
      }));
      const keysPath = "/api/v1/management/api-keys";
      routes.add("POST", keysPath, shape, (connection, req) => {
        const authenticated = authenticate(services.managementKeys, req);
        withBody(context, keysPath, connection, req, MAX_PLATFORM_BODY_BYTES, async (body) => {
          const principal = await authenticated;
          const name = keyName(body);
          const { record, key } = await read("the key could not be created", () => services.createInferenceKey(principal.organizationId, name));
          return { apiKey: { id: record.id, name: record.name, key, keyPrefix: record.keyPrefix, createdAt: record.createdAt.toISOString() } };
        });
        authenticated.catch(() => undefined); // answered by withBody
      });
      routes.add("GET", keysPath, shape, (connection, req) => answer(context, keysPath, connection, async () => {
        const principal = await authenticate(services.managementKeys, req);
        const keys = await read("the keys could not be read", () => services.listInferenceKeys(principal.organizationId));
        return {
          apiKeys: keys.map((key) => ({ id: key.id, name: key.name, keyPrefix: key.keyPrefix, isActive: key.isActive, createdAt: key.createdAt.toISOString(), lastUsedAt: key.lastUsedAt?.toISOString() ?? null })),
        };
      }));
      routes.add("DELETE", `${keysPath}/:id`, shape, (connection, req) => {
        const raw = req.getParameter(0) ?? "";
        const authenticated = authenticate(services.managementKeys, req);
        return answer(context, `${keysPath}/{id}`, connection, async () => {
          const principal = await authenticated;
          const id = decodePathSegment(raw, "key id");
          const revoked = await read("the key could not be revoked", () => services.revokeKey(principal.organizationId, id));
          if (!revoked) throw new ProtocolError("not_found", `no API key ${JSON.stringify(id.slice(0, 100))} in this organization`, "id");
          // This process stops accepting it now; others within their cache's lifetime (a second).
          services.inferenceKeys.forget();
          return { apiKey: { id, isActive: false } };
        });
      }, `${keysPath}/{id}`);
      routes.add("POST", "/admin/v1/command", shape, (connection, req) => {
        const run = services.admin?.();
        const remote = Buffer.from(connection.res.getRemoteAddressAsText()).toString();
        const refusal = !run
          ? new ProtocolError("not_found", "this server has no admin endpoint (it runs on PostgreSQL: run loom admin with --database-url)")
          : !isLoopback(remote) ? new ProtocolError("permission", "the admin endpoint answers only on loopback") : undefined;
        if (refusal) return answer(context, "/admin/v1/command", connection, async () => { throw refusal; }, true);
        const authorization = req.getHeader("authorization");
        readRawBody(context, connection, req, (text, complete) => {
          if (text instanceof ProtocolError) return void answer(context, "/admin/v1/command", connection, async () => { throw text; }, !complete);
          run!(authorization, text).then(({ status, body, cause }) => {
            if (cause !== undefined) context.options.log.requestError(connection.requestId, "/admin/v1/command", cause);
            context.metrics.request("/admin/v1/command", status);
            connection.sendJson(status, body);
          }, (error: unknown) => connection.fail(error));
        });
      });
    },
    errorShapeFor(url) {
      // Narrower families under /api/ (the dashboard's /api/v1/dashboard/ and /api/v1/operator/) belong to surfaces
      // listed after this one, which the server asks first (server/http/app.ts): the platform names none of them.
      return url.startsWith("/api/") || url.startsWith("/admin/") ? platformError : undefined;
    },
  });
}

/** The `name` of a key to create: 1 to 255 characters, not blank (spec 4.4). */
function keyName(body: unknown): string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ProtocolError("invalid_request", "the body must be a JSON object: {\"name\": \"...\"}");
  const unknown = Object.keys(body).filter((field) => field !== "name");
  if (unknown.length > 0) throw new ProtocolError("invalid_request", `unknown field ${JSON.stringify(unknown[0])}: the body takes only "name"`, unknown[0]);
  const name = (body as { name?: unknown }).name;
  if (name === undefined) throw new ProtocolError("invalid_request", "name is required", "name");
  try {
    return requireName("name", name);
  } catch (error) {
    if (error instanceof PlatformInputError) throw new ProtocolError("invalid_request", error.message, error.field);
    throw error;
  }
}

/** Reads a body of up to MAX_ADMIN_BODY_BYTES as text, for the admin endpoint (which parses it itself). NOTE: call synchronously from the handler. */
function readRawBody(context: ServerContext, connection: Connection, req: HttpRequest, onBody: (text: string | ProtocolError, complete: boolean) => void): void {
  const head = { contentType: req.getHeader("content-type"), contentLength: req.getHeader("content-length") };
  readJsonBody(connection, { ...context.bodyLimits, maxBytes: MAX_ADMIN_BODY_BYTES }, head, (body, complete) => onBody(body instanceof ProtocolError ? body : JSON.stringify(body), complete));
}

/** Whether a peer address (as uWS writes it) is this machine's loopback. */
function isLoopback(address: string): boolean {
  return address === "127.0.0.1" || address === "::1" || address.startsWith("127.") || address === "0000:0000:0000:0000:0000:0000:0000:0001" || address.startsWith("::ffff:127.");
}
