// The limit on dashboard sign-in attempts: so many per minute per client address, counted in the platform's limit
// store (Redis when configured, so that every gateway shares the count), as a window bucket like the request limits.
import ipaddr from "ipaddr.js";
import { logFailure } from "../http/log.js";
import { ProtocolError } from "../protocol/internal.js";
import { type LimitStore, LimitStoreUnavailableError } from "../platform/contract.js";

/** How sign-in attempts are limited. */
export interface SignInLimit {
  /** The platform's limit store. */
  limits: LimitStore;
  /** Attempts admitted per client address per minute (the README's 10). */
  attemptsPerMinute: number;
  /** Admit attempts while the limit store cannot be reached (the platform's --limits-fail-open). */
  failOpen: boolean;
}

/** The README's limit: 10 attempts per minute per client address. */
export const SIGN_IN_ATTEMPTS_PER_MINUTE = 10;

const MINUTE_MS = 60_000;

/**
 * Counts one sign-in attempt from `address` (the peer's address as uWS writes it).
 * @throws ProtocolError 429 with Retry-After past the limit; 502 when the limit store cannot be reached (unless
 *   failOpen).
 */
export async function admitSignIn(limit: SignInLimit, address: string, nowMs = Date.now()): Promise<void> {
  const bucket = { kind: "window" as const, key: `dashboard-signin:${signInClientKey(address)}`, limit: limit.attemptsPerMinute, windowMs: MINUTE_MS, cost: 1 };
  let result;
  try {
    result = await limit.limits.reserve([bucket], nowMs);
  } catch (error) {
    if (!(error instanceof LimitStoreUnavailableError)) throw error;
    // The store's address and the driver's words go to the log; the client gets loom's own message.
    logFailure(`sign-in attempts cannot be counted (${limit.failOpen ? "admitted: --limits-fail-open" : "refused"})`, error);
    if (limit.failOpen) return;
    throw new ProtocolError("bad_gateway", "sign-in attempts cannot be counted: the rate-limit store did not answer");
  }
  if (result.admitted) return;
  const retryAfterSeconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
  throw new ProtocolError("rate_limit", `too many sign-in attempts from this address (${limit.attemptsPerMinute} a minute): retry in ${retryAfterSeconds} s`, undefined, retryAfterSeconds);
}

/**
 * Whose attempts count together: an IPv4 address, or an IPv6 address's /64 (one host usually holds a whole /64, and
 * would otherwise get a fresh count per address); IPv4-mapped IPv6 counts as its IPv4 address. Text that does not
 * parse counts as itself, bounded.
 */
export function signInClientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address.slice(0, 64);
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(":")}::/64`;
}
