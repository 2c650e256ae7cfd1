// The runs surface (spec 2.9, 4.6, plus what users need beyond it): create a run with a platform inference key, poll
// it, read its step log, cancel it. Only the owning organization sees a run (404 otherwise). Errors are `{error,
// field}` like the rest of the platform.
import type { ServerContext } from "../http/context.js";
import type { ErrorResponder } from "../http/guard.js";
import type { Routes, Surface } from "../http/routes.js";
import type { KeyAuthenticator, KeyPrincipal } from "../platform/keys/key-authenticator.js";
import { answer, authenticate, decodePathSegment, platformError, read, withBody } from "../platform/route-helpers.js";
import { checkConstraint } from "../protocol/constraint.js";
import { type InternalRequest, ProtocolError } from "../protocol/internal.js";
import type { RunRecord, RunSpec, RunStep } from "./contract.js";
import { parseLegacyRunBody, RUN_LIMITS } from "./create-request.js";
import type { AgentEngine, EngineName } from "./engines.js";
import type { CallbackDelivery } from "./callbacks/callback-store.js";
import type { RunStore, RunSummary } from "./run-store.js";

/** What the runs routes need. */
export interface RunServices {
  inferenceKeys: KeyAuthenticator;
  store: RunStore;
  engines: Readonly<Record<EngineName, AgentEngine>>;
  /** Whether a configured model slug (undefined: the default model) is served here. */
  serves(slug: string | undefined): boolean;
  /**
   * Refuses a run whose organization cannot pay for its first turn now (the turn admitted as a chat request is, then
   * given back): throws the admission's ProtocolError (429 rate_limit or insufficient_quota, 403 permission).
   */
  admitFirstTurn(spec: RunSpec, principal: KeyPrincipal): Promise<void>;
  /** Most runs an organization may have queued or processing at once. */
  maxActivePerOrganization: number;
  /** Wakes this process's worker (a run was created). */
  notify(): void;
  /** Stops a run processing in this process at once; false when it runs elsewhere. */
  cancelHere(runId: string): boolean;
  /** The run's callback delivery and its attempts, when it asked for a callback and has ended. */
  callbackOf(runId: string): Promise<CallbackDelivery | undefined>;
}

/** The poll shape of spec 2.10, with the run's timestamps and engine (a run's request plays no part in it). */
export function pollShape(run: RunSummary, now = Date.now()): Record<string, unknown> {
  const durationMs = run.finishedAt ? run.usage.durationMs : run.startedAt ? Math.max(0, now - run.startedAt.getTime()) : 0;
  return {
    runId: run.id,
    status: run.status,
    engine: run.engine,
    ...(run.result ? { result: run.result } : {}),
    ...(run.error ? { error: run.error } : {}),
    usage: { inputTokens: run.usage.inputTokens, outputTokens: run.usage.outputTokens, durationMs },
    createdAt: run.createdAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    finishedAt: run.finishedAt?.toISOString() ?? null,
  };
}

/** A step as the owner reads it (GET /v1/runs/{id}/steps). */
export function stepShape(step: RunStep): Record<string, unknown> {
  return {
    index: step.index,
    attempt: step.attempt,
    kind: step.kind,
    status: step.status,
    ...step.detail,
    inputTokens: step.inputTokens,
    outputTokens: step.outputTokens,
    startedAt: step.startedAt.toISOString(),
    durationMs: step.durationMs ?? null,
  };
}

/** A callback delivery as the owner reads it: where, its state, and every attempt. */
export function callbackShape(delivery: CallbackDelivery): Record<string, unknown> {
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  return {
    url: delivery.url,
    webhookId: delivery.webhookId,
    status: delivery.status,
    nextAttemptAt: iso(delivery.nextAttemptAt),
    deliveredAt: iso(delivery.deliveredAt),
    gaveUpAt: iso(delivery.gaveUpAt),
    attempts: delivery.attempts.map((attempt) => ({ attempt: attempt.attempt, at: iso(attempt.at), statusCode: attempt.statusCode, error: attempt.error, durationMs: attempt.durationMs })),
  };
}

/** Compiles a run's JSON Schema as structured output would, naming `field` when it cannot be used. */
export function checkRunSchema(schema: Record<string, unknown>, field: string): void {
  const probe = { responseFormat: { type: "json_schema", schema }, thinking: { enabled: false } } as InternalRequest;
  checkConstraint(probe, { tool: () => field, responseFormat: field });
}

/** The runs routes on a server. */
export function runsSurface(services: RunServices): (context: ServerContext) => Surface {
  return (context) => ({
    register(routes: Routes) {
      const shape = (): ErrorResponder => platformError;
      routes.add("POST", "/v1/runs", shape, (connection, req) => {
        const authenticated = authenticate(services.inferenceKeys, req);
        authenticated.catch(() => undefined); // answered by withBody
        withBody(context, "/v1/runs", connection, req, RUN_LIMITS.maxBodyBytes, async (body) => {
          const principal = await authenticated;
          const spec = parseLegacyRunBody(body, checkRunSchema);
          const engine = services.engines[spec.engine as EngineName];
          if (engine.model === null || !services.serves(engine.model)) {
            throw new ProtocolError("invalid_request", `engine '${spec.engine}' has no model to run on in this deployment (see docs/agent-runs.md: runs.engines in the config)`, "engine");
          }
          await services.admitFirstTurn(spec, principal);
          const run = await read("the run could not be created", () => services.store.create({ kind: "legacy", organizationId: principal.organizationId, keyId: principal.keyId, spec }, services.maxActivePerOrganization));
          if (!run) {
            throw new ProtocolError("rate_limit", `this organization already has ${services.maxActivePerOrganization} runs queued or processing, the most it may have; retry when some have ended`, undefined, 10);
          }
          services.notify();
          return { runId: run.id, status: run.status };
        }, 202);
      });
      routes.add("GET", "/v1/runs/:id", shape, (connection, req) => {
        const raw = req.getParameter(0) ?? "";
        const authenticated = authenticate(services.inferenceKeys, req);
        return answer(context, "/v1/runs/{id}", connection, async () => pollShape(await ownRun(services, raw, (await authenticated).organizationId)));
      }, "/v1/runs/{id}");
      routes.add("GET", "/v1/runs/:id/steps", shape, (connection, req) => {
        const raw = req.getParameter(0) ?? "";
        const authenticated = authenticate(services.inferenceKeys, req);
        return answer(context, "/v1/runs/{id}/steps", connection, async () => {
          const run = await ownRun(services, raw, (await authenticated).organizationId);
          const steps = await read("the run's steps could not be read", () => services.store.steps(run.id));
          const callback = await read("the run's callback could not be read", () => services.callbackOf(run.id));
          return { runId: run.id, status: run.status, steps: steps.map(stepShape), ...(callback ? { callback: callbackShape(callback) } : {}) };
        });
      }, "/v1/runs/{id}/steps");
      routes.add("POST", "/v1/runs/:id/cancel", shape, (connection, req) => {
        const raw = req.getParameter(0) ?? "";
        const authenticated = authenticate(services.inferenceKeys, req);
        return answer(context, "/v1/runs/{id}/cancel", connection, async () => {
          const { organizationId } = await authenticated;
          const id = decodePathSegment(raw, "run id");
          const run = await read("the run could not be cancelled", () => services.store.cancel(id, organizationId));
          if (!run) throw notFound(id);
          if (run.status === "processing") services.cancelHere(run.id);
          return pollShape(run);
        });
      }, "/v1/runs/{id}/cancel");
    },
    errorShapeFor(url) {
      return url === "/v1/runs" || url.startsWith("/v1/runs/") ? platformError : undefined;
    },
  });
}

/** The organization's run named by a path segment, or a 404 (another organization's run is not found either). */
async function ownRun(services: RunServices, raw: string, organizationId: string): Promise<RunRecord> {
  const id = decodePathSegment(raw, "run id");
  const run = await read("the run could not be read", () => services.store.get(id, organizationId));
  if (!run) throw notFound(id);
  return run;
}

function notFound(id: string): ProtocolError {
  return new ProtocolError("not_found", `no run ${JSON.stringify(id.slice(0, 100))} in this organization`, "id");
}
