// The limit on dashboard sign-in attempts: so many per minute per client address and credential prefix (a key's
// display prefix), and ten times as many per client address whatever the credential. The client address is the
// peer's, or behind a reverse proxy the one the trusted proxy reports (client-address.ts); where the proxy is not
// trusted, every client shares its address: ten bad attempts with one key then refuse that key's prefix only, but
// anyone's hundred attempts a minute refuse every sign-in through that proxy. The same limits hold for every address:
// a direct client and an unlisted proxy look alike (X-Forwarded-For from an untrusted peer is the client's to write,
// so it could only make a limit stricter, which is worse for the lockout), and credentials hold 256 random bits, so
// the per-address count bounds load rather than guessing. The cure is listing the proxy, which the log asks for.
// Counted in the platform's limit store (Redis when configured, so that every gateway shares the count), as window
// buckets like the request limits.
import ipaddr from "ipaddr.js";
import { logFailure } from "../http/log.js";
import { ProtocolError } from "../protocol/internal.js";
import { type LimitStore, LimitStoreUnavailableError } from "../platform/contract.js";
import { DISPLAY_SECRET_CHARACTERS } from "../platform/store/key-secret.js";

/** How sign-in attempts are limited. */
export interface SignInLimit {
  /** The platform's limit store. */
  limits: LimitStore;
  /** Attempts admitted per client address and credential prefix per minute (the README's 10); per address, ten times as many. */
  attemptsPerMinute: number;
  /** Admit attempts while the limit store cannot be reached (the platform's --limits-fail-open). */
  failOpen: boolean;
}

/** The README's limit: 10 attempts per minute per client address and credential prefix. */
export const SIGN_IN_ATTEMPTS_PER_MINUTE = 10;

/** How many times attemptsPerMinute one address may try over all credentials. */
export const ADDRESS_ATTEMPTS_FACTOR = 10;

const MINUTE_MS = 60_000;

/**
 * Counts one sign-in attempt from the client address `address` (as it arrives, whatever its body).
 * @throws ProtocolError 429 with Retry-After past the limit; 502 when the limit store cannot be reached (unless
 *   failOpen).
 */
export function admitSignIn(limit: SignInLimit, address: string, nowMs = Date.now()): Promise<void> {
  return admit(limit, `dashboard-signin:${signInClientKey(address)}`, limit.attemptsPerMinute * ADDRESS_ATTEMPTS_FACTOR, "from this address", nowMs);
}

/**
 * Counts one sign-in attempt with `credential` from `address` against that address and the credential's prefix
 * (signInCredentialKey). @throws as admitSignIn.
 */
export function admitSignInCredential(limit: SignInLimit, address: string, credential: string, nowMs = Date.now()): Promise<void> {
  const key = `dashboard-signin:${signInClientKey(address)}:${signInCredentialKey(credential)}`;
  return admit(limit, key, limit.attemptsPerMinute, "with this credential from this address", nowMs);
}

async function admit(limit: SignInLimit, key: string, attempts: number, whose: string, nowMs: number): Promise<void> {
  const bucket = { kind: "window" as const, key, limit: attempts, windowMs: MINUTE_MS, cost: 1 };
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
  throw new ProtocolError("rate_limit", `too many sign-in attempts ${whose} (${attempts} a minute): retry in ${retryAfterSeconds} s`, undefined, retryAfterSeconds);
}

/**
 * Which credential an attempt counts against: its kind's prefix and the next 6 characters, as the dashboard shows
 * keys (`sk-mgmt-AbCdEf`, `lop_AbCdEf`): what someone guessing at one known key keeps, and too little of a secret
 * to help a guess. Other text counts by its first 6 characters.
 */
export function signInCredentialKey(credential: string): string {
  const kind = /^(sk-mgmt-|sk-gw-|lop_)/.exec(credential)?.[1] ?? "";
  return credential.slice(0, kind.length + DISPLAY_SECRET_CHARACTERS);
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
