// Who a request comes from, behind reverse proxies: the peer's address, unless the peer is one of the operator's
// `trustedProxies`; then X-Forwarded-For is read from its right end (what the nearest proxy appended), skipping
// trusted hops, and the first untrusted hop is the client. A client can write anything into the header's left part,
// so nothing left of that hop is believed. X-Forwarded-Proto is believed from a trusted peer only. A proxy may add
// its own header line rather than extend the client's, so the headers come in as every line joined in order.
// X-Forwarded-For from a peer that is not trusted is noticed in the log (once per peer, for a few peers): it is most
// often a proxy the operator forgot to list, behind which every client counts as one address.
import ipaddr from "ipaddr.js";

/** Where a request comes from, as this server believes it. */
export interface ClientOrigin {
  /** The client's address: the peer's, or the first untrusted X-Forwarded-For hop from the right (text, bounded). */
  address: string;
  /** The client reached a trusted proxy over HTTPS (that proxy's X-Forwarded-Proto says so). */
  https: boolean;
}

/** Hops of X-Forwarded-For read, from the right: a chain of proxies is never this long. */
const MAX_HOPS = 32;
/** The longest address text kept from a header (IPv6 with a zone fits). */
const MAX_ADDRESS_TEXT = 64;
/** The characters of X-Forwarded-For read, from the right: MAX_HOPS hops of the longest address text and a comma. */
const MAX_FORWARDED_TEXT = MAX_HOPS * (MAX_ADDRESS_TEXT + 1);
/** Untrusted peers whose X-Forwarded-For is noticed in the log: enough to name the forgotten proxy, never unbounded. */
const MAX_NOTICED_PEERS = 8;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An IPv4 or IPv6 address in its usual text form (no IPv4 shorthands such as `10.1`), or undefined. */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(":") && ipaddr.IPv6.isValid(text)) return ipaddr.process(text); // IPv4-mapped IPv6 as IPv4
  return undefined;
}

/** An address or CIDR range of the setting, or the reason it is not one. */
function parseRange(entry: string): Range | string {
  const slash = entry.indexOf("/");
  const address = parseAddress(slash < 0 ? entry : entry.slice(0, slash));
  if (!address) return `${JSON.stringify(entry.slice(0, 80))} is not an IPv4 or IPv6 address or CIDR range (such as 10.0.0.0/8 or fd00::/8)`;
  const maxBits = address.kind() === "ipv4" ? 32 : 128;
  if (slash < 0) return [address, maxBits];
  const bitsText = entry.slice(slash + 1);
  const bits = /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN;
  // An IPv4-mapped range (::ffff:10.0.0.0/104) was turned into IPv4 above: its prefix length loses the 96 bits.
  const mapped = address.kind() === "ipv4" && entry.includes(":");
  const prefix = mapped ? bits - 96 : bits;
  if (!(prefix >= 0 && prefix <= maxBits)) return `${JSON.stringify(entry.slice(0, 80))} has a prefix length outside ${mapped ? "96-128 (an IPv4-mapped range)" : `0-${maxBits}`}`;
  return [address, prefix];
}

/** Why `value` is not a list of addresses and CIDR ranges (the config file's rule), or undefined when it is one. */
export function trustedProxiesProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length > 1000) return "an array of up to 1000 IP addresses or CIDR ranges, such as [\"10.0.0.0/8\", \"::1\"]";
  for (const entry of value) {
    if (typeof entry !== "string") return `an array of IP addresses or CIDR ranges as strings (${JSON.stringify(entry)?.slice(0, 80)} is not one)`;
    const range = parseRange(entry.trim());
    if (typeof range === "string") return `an array of IP addresses or CIDR ranges: ${range}`;
  }
  return undefined;
}

/** The operator's reverse proxies (the config's `trustedProxies`), and what a request's peer and headers mean. */
export class TrustedProxies {
  readonly #ranges: Range[];
  readonly #notice: (line: string) => void;
  readonly #noticedPeers = new Set<string>();

  /**
   * @param notice where the line about X-Forwarded-For from an untrusted peer goes (default: stderr).
   * @throws Error naming an entry that is not an address or CIDR range.
   */
  constructor(entries: readonly string[] = [], notice: (line: string) => void = (line) => process.stderr.write(`loom: ${line}\n`)) {
    this.#notice = notice;
    this.#ranges = entries.map((entry) => {
      const range = parseRange(entry.trim());
      if (typeof range === "string") throw new Error(`trustedProxies: ${range}`);
      return range;
    });
  }

  /** Whether `address` (text) is one of the trusted proxies. */
  trusts(address: string): boolean {
    if (this.#ranges.length === 0) return false;
    const parsed = parseAddress(address);
    return parsed !== undefined && this.#ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  }

  /**
   * Where a request from the peer `peer` comes from, given its X-Forwarded-For and X-Forwarded-Proto: each header's
   * every line, joined with commas in the order received ("" when absent). From an untrusted peer both headers are
   * ignored (and X-Forwarded-For noticed in the log).
   */
  originOf(peer: string, forwardedFor: string, forwardedProto: string): ClientOrigin {
    const peerAddress = canonical(peer);
    if (!this.trusts(peerAddress)) {
      if (forwardedFor !== "") this.#noticeUntrusted(peerAddress);
      return { address: peerAddress, https: false };
    }
    let address = peerAddress;
    // The right end only: a hop cut in two at the left edge of what is read is dropped.
    const read = forwardedFor.length > MAX_FORWARDED_TEXT ? forwardedFor.slice(-MAX_FORWARDED_TEXT).replace(/^[^,]*,?/, "") : forwardedFor;
    const hops = read.split(",").slice(-MAX_HOPS).map((hop) => canonical(withoutPort(hop.trim()))).filter((hop) => hop !== "");
    for (let i = hops.length - 1; i >= 0; i--) {
      address = hops[i]!;
      if (!this.trusts(address)) break;
    }
    // The nearest proxy's word: a proxy that forwards the scheme it was reached by writes one value or appends its own.
    const proto = forwardedProto.split(",").at(-1)!.trim().toLowerCase();
    return { address, https: proto === "https" };
  }

  /** Says once per peer (for the first few) that `peer` sent X-Forwarded-For without being trusted. */
  #noticeUntrusted(peer: string): void {
    if (this.#noticedPeers.size >= MAX_NOTICED_PEERS || this.#noticedPeers.has(peer)) return;
    this.#noticedPeers.add(peer);
    this.#notice(
      `${peer} sent X-Forwarded-For but is not in trustedProxies, so the header is ignored and ${peer} counts as the client: ` +
        "if it is your reverse proxy, every client behind it shares that one address (and the dashboard's sign-in limit); " +
        "list it in trustedProxies (docs/reverse-proxy.md). Said once per address.",
    );
  }
}

/** An address as one text per host (`::ffff:1.2.3.4` as `1.2.3.4`, IPv6 compressed); other text bounded, as it is. */
function canonical(text: string): string {
  const parsed = parseAddress(text);
  return parsed ? parsed.toString() : text.slice(0, MAX_ADDRESS_TEXT);
}

/** An X-Forwarded-For hop without the port some proxies add (`1.2.3.4:5678`, `[2001:db8::1]:443`). */
function withoutPort(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (bracketed) return bracketed[1]!;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return v4 ? v4[1]! : hop;
}
