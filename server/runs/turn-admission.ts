// Agent-run turns as requests of their organization: each model turn is admitted by the platform's accountant exactly
// as a chat request is (requests and tokens per minute, tokens per day, a hard daily allowance, the prepaid balance
// held for the turn's most expensive outcome), with its prompt counted as a chat request's is, and settled with its
// step. Creating a run admits its first turn and gives it back at once: a run no one can pay a turn of is refused.
import type { PlatformAccountant, PlatformAdmission } from "../platform/accountant.js";
import type { KeyPrincipal } from "../platform/keys/key-authenticator.js";
import type { KeyRecord } from "../platform/contract.js";
import { admissionRequestOf } from "../inference/admission-request.js";
import type { ServedModel } from "../models.js";
import { type InternalRequest, ProtocolError } from "../protocol/internal.js";
import { RunFailure } from "./agent-loop.js";
import type { RunErrorCode, RunRecord } from "./contract.js";
import type { RunModel, TurnAdmitter } from "./worker.js";

/** What admitting run turns needs of the platform. */
export interface TurnAdmissionServices {
  accountant: PlatformAccountant;
  /** The run's key (revoked ones included), or undefined when it no longer exists. */
  key(organizationId: string, keyId: string): Promise<KeyRecord | undefined>;
}

/**
 * Admits `request` as a request of `principal` on `served` (its counting errors named by the run body's own field
 * names, which a turn's engine fields are not: none is named).
 * @throws ProtocolError as the chat routes' admission does (rate_limit, insufficient_quota, permission, overloaded, bad_gateway).
 */
export function admitRunRequest(accountant: PlatformAccountant, principal: KeyPrincipal, served: ServedModel, request: InternalRequest): Promise<PlatformAdmission> {
  return accountant.admit(admissionRequestOf(served, request, principal, "openai", (field) => field, true));
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
    admission = await admitRunRequest(accountant, principal, served, request);
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

/** The worker's TurnAdmitter: legacy runs' turns admitted under their key; runs without one (paid machine runs) are not metered. */
export function runTurnAdmitter(services: TurnAdmissionServices): TurnAdmitter {
  return async (run: RunRecord, model: RunModel, request: InternalRequest) => {
    if (run.organizationId === undefined || run.keyId === undefined || model.served === undefined) return undefined;
    const key = await services.key(run.organizationId, run.keyId).catch((error: unknown) => {
      throw new RunFailure("internal", `the run's API key could not be read: ${(error as Error).message}`);
    });
    // A revoked key stops its runs at their next turn, as it stops its chat requests.
    if (!key || !key.isActive) throw new RunFailure("permission", "the run's API key was revoked; its remaining turns were not run");
    try {
      return await admitRunRequest(services.accountant, { keyId: key.id, organizationId: key.organizationId, key }, model.served, request);
    } catch (error) {
      if (error instanceof ProtocolError) throw new RunFailure(runErrorCodeOf(error), `a model turn was refused: ${error.message}`);
      throw error;
    }
  };
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
