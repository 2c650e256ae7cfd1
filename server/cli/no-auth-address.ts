// `--no-auth` serves every route to whoever can connect: on a loopback address that is the local user; on any other
// address it is the network, which must be asked for by a second flag, never by accident.
import ipaddr from "ipaddr.js";
import { UsageError } from "../../engine/cli/arguments.js";

/** The flag that allows `--no-auth` on an address other than loopback. */
export const NO_AUTH_ON_NETWORK_FLAG = "--allow-no-auth-on-network";

/**
 * Whether `host` is a loopback address: 127.0.0.0/8, ::1 (also IPv4-mapped, ::ffff:127.x.y.z) or `localhost`. Any
 * other name is not: what it resolves to is not known here, and may change.
 */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true;
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.process(bare); // an IPv4-mapped IPv6 address as the IPv4 address it maps
  return address.range() === "loopback";
}

/**
 * Checks `--no-auth` against the listening address.
 * @returns the warning to print when `--no-auth` serves a non-loopback address by request, else undefined.
 * @throws UsageError for `--no-auth` on a non-loopback address without {@link NO_AUTH_ON_NETWORK_FLAG}, and for that
 *   flag without `--no-auth` (it would mean nothing).
 */
export function checkNoAuthAddress(host: string, noAuth: boolean, allowOnNetwork: boolean): string | undefined {
  if (allowOnNetwork && !noAuth) throw new UsageError(`${NO_AUTH_ON_NETWORK_FLAG} goes with --no-auth, which is not given: without --no-auth every request needs a key anyway`);
  if (!noAuth || isLoopbackHost(host)) return undefined;
  if (!allowOnNetwork) {
    throw new UsageError(
      `--no-auth on --host ${host}, which is not a loopback address: anyone who can reach it could use every route without a key. ` +
        `Listen on 127.0.0.1 or ::1, use API keys (the config's apiKeys, LOOM_API_KEYS, or the platform), or add ${NO_AUTH_ON_NETWORK_FLAG} if that is what you want`,
    );
  }
  return `WARNING: no authentication on ${host} (${NO_AUTH_ON_NETWORK_FLAG}): anyone who can reach this address can use every route without a key`;
}
