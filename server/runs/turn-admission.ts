// Agent-run turns as requests of their organization: each model turn is admitted by the platform's accountant exactly
// as a chat request is (requests and tokens per minute, tokens per day, a hard daily allowance, the prepaid balance
// held for the turn's most expensive outcome), with its prompt counted as a chat request's is, and settled with its
// step. Creating a run admits its first turn and gives it back at once: a run no one can pay a turn of is refused.
import type { PlatformAccountant, PlatformAdmission } from "../platform/accountant.js";
import type { KeyPrincipal } from "../platform/keys/key-authenticator.js";
import type { KeyRecord } from "../platform/contract.js";
import { admissionRequestOf } from "../inference/admission-request.js";
import { logFailure } from "../http/log.js";
import type { ServedModel } from "../models.js";
import { type InternalRequest, ProtocolError } from "../protocol/internal.js";
import { RunFailure } from "./agent-loop.js";
import type { RunErrorCode, RunRecord } from "./contract.js";
import type { AdmittedTurn, RunModel, TurnAdmitter } from "./worker.js";

/** What admitting run turns needs of the platform. */
export interface TurnAdmissionServices {
  accountant: PlatformAccountant;
  /** The run's key (revoked ones included), or undefined when it no longer exists. */
  key(organizationId: string, keyId: string): Promise<KeyRecord | undefined>;
  /** Times a turn refused for a passing reason (the limit store or the database down) is asked again (default 5). */
  transientRetries?: number;
}

/** A turn's credit hold outlives the run's timeout by this much: the cut turn's step and usage are written after it. */
const HOLD_MARGIN_MS = 60_000;
/** The longest wait before a transiently refused turn is asked again, whatever its Retry-After says. */
const MAX_RETRY_WAIT_MS = 30_000;

/**
 * Admits `request` as a request of `principal` on `served` (its counting errors named by the run body's own field
 * names, which a turn's engine fields are not: none is named). `holdMs`: the longest the turn may run, which its
 * credit hold must outlive.
 * @throws ProtocolError as the chat routes' admission does (rate_limit, insufficient_quota, permission, overloaded, bad_gateway).
 */
export async function admitRunRequest(accountant: PlatformAccountant, principal: KeyPrincipal, served: ServedModel, request: InternalRequest, holdMs?: number): Promise<AdmittedTurn> {
  const admissionRequest = admissionRequestOf(served, request, principal, "openai", (field) => field, true);
  const admission = await accountant.admit(admissionRequest, holdMs === undefined ? {} : { holdMs });
  const prepared = admissionRequest.prepared();
  return prepared ? { admission, prepared } : { admission };
}

/**
 * Refuses a run whose organization cannot pay for its first turn now: the turn is admitted, then given back at once.
 * A refusal naming a field of the turn names the run body's: the model is the `engine`'s, the prompt (one the engine
 * cannot count: longer than its context) is made of the `input`.
 * @throws ProtocolError as admitRunRequest does.
 */
export async function checkFirstTurn(accountant: PlatformAccountant, principal: KeyPrincipal, served: ServedModel, request: InternalRequest, engine: string): Promise<void> {
  let admission: PlatformAdmission;
  try {
    ({ admission } = await admitRunRequest(accountant, principal, served, request));
  } catch (error) {
    if (error instanceof ProtocolError && error.param !== undefined) {
      const model = error.param === "model";
      const named = new ProtocolError(error.kind, model ? `${error.message} (the model of engine '${engine}')` : `${error.message} (the run's first prompt, made of its input)`, model ? "engine" : "input", error.retryAfterSeconds);
      if (error.responseHeaders) named.responseHeaders = error.responseHeaders;
      throw named;
    }
    throw error;
  }
  await admission.release();
}

/**
 * The worker's TurnAdmitter: legacy runs' turns admitted under their key; runs without one (paid machine runs) are not
 * metered. A turn refused for a passing reason (the limit store or the database cannot be reached) is asked again
 * after its Retry-After (at least 1 s, at most 30 s), `transientRetries` times, while the run goes on; a lasting
 * refusal (the balance, a limit, the key) fails the run at once.
 */
export function runTurnAdmitter(services: TurnAdmissionServices): TurnAdmitter {
  const retries = services.transientRetries ?? 5;
  return async (run: RunRecord, model: RunModel, request: InternalRequest, signal: AbortSignal) => {
    if (run.organizationId === undefined || run.keyId === undefined || model.served === undefined) return undefined;
    const served = model.served;
    for (let attempt = 0; ; attempt++) {
      const refusal = await admitTurnOnce(services, run, { organizationId: run.organizationId, keyId: run.keyId }, served, request).catch((error: unknown) => {
        if (error instanceof TransientRefusal && attempt < retries) return error;
        throw error instanceof TransientRefusal ? error.failure : error;
      });
      if (!(refusal instanceof TransientRefusal)) return refusal;
      await abortableWait(Math.min(MAX_RETRY_WAIT_MS, Math.max(1000, (refusal.retryAfterSeconds ?? 1) * 1000)), signal);
    }
  };
}

/** A turn's refusal that may pass (the limit store or the database was down): asked again, else `failure` ends the run. */
class TransientRefusal extends Error {
  constructor(readonly failure: RunFailure, readonly retryAfterSeconds: number | undefined) {
    super(failure.message);
  }
}

/**
 * One admission of a turn of `run`, its credit hold living as long as the run may still go on.
 * @throws RunFailure for a lasting refusal, TransientRefusal for a passing one.
 */
async function admitTurnOnce(services: TurnAdmissionServices, run: RunRecord, owner: { organizationId: string; keyId: string }, served: ServedModel, request: InternalRequest): Promise<AdmittedTurn> {
  const key = await services.key(owner.organizationId, owner.keyId).catch((error: unknown) => {
    // The driver's words name the database: the log's, not the run's.
    logFailure("a run's API key could not be read", error);
    throw new TransientRefusal(new RunFailure("internal", "the run's API key could not be read: the platform database did not answer"), undefined);
  });
  // A revoked key stops its runs at their next turn, as it stops its chat requests.
  if (!key || !key.isActive) throw new RunFailure("permission", "the run's API key was revoked; its remaining turns were not run");
  // The worker cuts the turn at the run's timeout: its hold must last until then (and until its usage is written).
  const left = run.spec.timeoutSeconds * 1000 - (Date.now() - (run.startedAt?.getTime() ?? Date.now()));
  try {
    return await admitRunRequest(services.accountant, { keyId: key.id, organizationId: key.organizationId, key }, served, request, Math.max(0, left) + HOLD_MARGIN_MS);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    const failure = new RunFailure(runErrorCodeOf(error), `a model turn was refused: ${error.message}`);
    if (error.kind === "overloaded" || error.kind === "bad_gateway") throw new TransientRefusal(failure, error.retryAfterSeconds);
    throw failure;
  }
}

/** Resolves after `ms`, or rejects with `signal`'s reason when it aborts first. */
function abortableWait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The run error code of a turn's refused admission. */
function runErrorCodeOf(error: ProtocolError): RunErrorCode {
  switch (error.kind) {
    case "rate_limit":
    case "overloaded":
      return "rate_limit";
    case "insufficient_quota":
      return "insufficient_quota";
    case "permission":
    case "authentication":
      return "permission";
    case "invalid_request":
      return "model_error";
    default:
      return "internal";
  }
}
