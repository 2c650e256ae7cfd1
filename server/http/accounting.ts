// Accounting and limits as the inference path sees them: admit a request against every limit that applies to its
// key (or refuse it with a ProtocolError and rate-limit headers), then settle what it used, durably, before the
// response's last byte. The platform implements it (server/platform/accountant.ts); without the platform nothing is
// metered.
import type { InternalUsage, WireFormat } from "../protocol/internal.js";
import type { Principal } from "./auth.js";

/** A request about to run, as admission sees it. */
export interface AdmissionRequest {
  principal: Principal;
  format: WireFormat;
  /** The model slug the client asked for. */
  model: string;
  /** The prompt's token count (asked only when a token limit applies: it costs a tokenization). */
  inputTokens: () => Promise<number>;
  /** The most output tokens the request may produce (its max_tokens, else what the context leaves). */
  maxOutputTokens: (inputTokens: number) => number;
}

/** An admitted request: headers for its response, and the settlement of what it used. */
export interface Admission {
  /** Rate-limit headers for the response (none when nothing is metered). */
  readonly headers: Readonly<Record<string, string>>;
  /** The dedicated pool of engine workers the request must run on (gateways); absent: the shared pool. */
  readonly pool?: string;
  /**
   * Records what the request used (finished, cut, aborted or failed: the tokens computed) and corrects its
   * reservations; resolves once the usage is durable. Called exactly once.
   * @throws ProtocolError (bad_gateway) when the usage cannot be recorded.
   */
  settle(usage: InternalUsage): Promise<void>;
}

/** Admission and settlement of requests. */
export interface Accountant {
  /** Reserves every limit that applies, or throws a ProtocolError (rate_limit, insufficient_quota, permission, bad_gateway) with rate-limit headers. */
  admit(request: AdmissionRequest): Promise<Admission>;
}

const UNMETERED_ADMISSION: Admission = { headers: {}, settle: async () => undefined };

/** Nothing metered: the local runtime and static keys. */
export const unmetered: Accountant = { admit: async () => UNMETERED_ADMISSION };
