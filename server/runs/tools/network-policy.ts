// Which hosts and addresses the run tools may reach: public unicast addresses only, unless the operator's policy
// allows private ones or names a host. The check runs on the address actually connected to (see safe-http.ts).
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** What the operator allows beyond the public internet. */
export interface NetworkPolicy {
  /** Allow every address, loopback and private ranges included (tests, a trusted network). Default false. */
  allowPrivate?: boolean;
  /**
   * Hosts allowed whatever they resolve to: host names (`searxng.internal`, case-insensitive, a trailing dot ignored)
   * or IP addresses (`10.0.0.5`, `::1` or `[::1]`), matched exactly against the URL's host.
   */
  allowHosts?: readonly string[];
}

/** The refusal of one address: its range, in words fit for an error message. */
export interface AddressRefusal {
  /** The address as ipaddr.js writes it (an IPv4-mapped address as its IPv4 address). */
  address: string;
  /** The ipaddr.js range name (`loopback`, `private`, `linkLocal`...), `nonGlobalIPv6` or `invalid`. */
  range: string;
  /** What the range is, after an article: "a loopback address". */
  description: string;
}

/** Words for the ranges ipaddr.js names, for messages ("a loopback address"). */
const RANGE_WORDS: Record<string, string> = {
  unspecified: "an unspecified address",
  broadcast: "a broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address (169.254.0.0/16 holds cloud metadata services)",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT address",
  private: "a private address",
  reserved: "a reserved address",
  uniqueLocal: "a unique-local IPv6 address",
  ipv4Mapped: "an IPv4-mapped IPv6 address",
  rfc6052: "an IPv4/IPv6 translation (NAT64) address",
  rfc6145: "an IPv4-translated IPv6 address",
  "6to4": "a 6to4 address",
  teredo: "a Teredo address",
  nonGlobalIPv6: "an IPv6 address outside global unicast (2000::/3)",
};

/** The canonical form of a host for matching: lower case, no trailing dot, no IPv6 brackets, IPs normalised. */
export function canonicalHost(host: string): string {
  let canonical = host.trim().toLowerCase();
  if (canonical.startsWith("[") && canonical.endsWith("]")) canonical = canonical.slice(1, -1);
  if (canonical.endsWith(".")) canonical = canonical.slice(0, -1);
  if (isIP(canonical) !== 0) canonical = ipaddr.parse(canonical).toString();
  return canonical;
}

/** Whether `policy.allowHosts` names `host` (a URL's hostname). */
export function isAllowedHost(host: string, policy: NetworkPolicy): boolean {
  const canonical = canonicalHost(host);
  return (policy.allowHosts ?? []).some((allowed) => canonicalHost(allowed) === canonical);
}

const GLOBAL_UNICAST_IPV6 = ipaddr.parseCIDR("2000::/3");

/**
 * Why `address` (an IP literal) may not be connected to, or undefined when it may: only public unicast addresses
 * pass. IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 */
export function refuseAddress(address: string): AddressRefusal | undefined {
  if (isIP(address) === 0) return { address, range: "invalid", description: "not an IP address" };
  // process() turns ::ffff:a.b.c.d into a.b.c.d, so a mapped loopback is judged as loopback.
  const parsed = ipaddr.process(address);
  let range: string = parsed.range();
  // IPv4-compatible (::a.b.c.d) and other odd IPv6 space is "unicast" to ipaddr.js: public IPv6 is 2000::/3.
  if (range === "unicast" && parsed.kind() === "ipv6" && !parsed.match(GLOBAL_UNICAST_IPV6)) range = "nonGlobalIPv6";
  if (range === "unicast") return undefined;
  return { address: parsed.toString(), range, description: RANGE_WORDS[range] ?? `an address of the special range '${range}'` };
}
