// Who a request comes from behind reverse proxies: X-Forwarded-For read from the right past trusted hops only, both
// forwarded headers ignored from an untrusted peer, and the setting's entries checked.
import { describe, expect, it } from "vitest";
import { TrustedProxies, trustedProxiesProblem } from "./client-address.js";

describe("TrustedProxies", () => {
  const proxies = new TrustedProxies(["10.0.0.0/8", "192.168.1.7", "fd00::/8"], () => undefined);

  it("ignores X-Forwarded-For and X-Forwarded-Proto from a peer it does not trust", () => {
    expect(proxies.originOf("203.0.113.9", "198.51.100.1", "https")).toEqual({ address: "203.0.113.9", https: false });
    expect(new TrustedProxies([], () => undefined).originOf("127.0.0.1", "198.51.100.1", "https")).toEqual({ address: "127.0.0.1", https: false });
  });

  it("takes the first untrusted hop from the right, so that what a client writes on the left is never believed", () => {
    expect(proxies.originOf("10.0.0.2", "198.51.100.1", "https")).toEqual({ address: "198.51.100.1", https: true });
    // The client wrote "1.1.1.1, 10.9.9.9"; the proxy appended the address it saw.
    expect(proxies.originOf("10.0.0.2", "1.1.1.1, 10.9.9.9, 198.51.100.1", "http").address).toBe("198.51.100.1");
    // Two trusted proxies in a row: both skipped.
    expect(proxies.originOf("192.168.1.7", "198.51.100.1, 10.4.4.4", "").address).toBe("198.51.100.1");
    // Only trusted hops: the leftmost one is the client (a proxy's own health check).
    expect(proxies.originOf("10.0.0.2", "10.0.0.3", "").address).toBe("10.0.0.3");
    expect(proxies.originOf("10.0.0.2", "", "").address).toBe("10.0.0.2");
  });

  it("reads addresses as one text per host: IPv4-mapped and full-form IPv6 peers, hops with ports, garbage bounded", () => {
    expect(proxies.originOf("0000:0000:0000:0000:0000:ffff:0a00:0002", "198.51.100.1:5123", "").address).toBe("198.51.100.1");
    expect(proxies.originOf("fd00:0000:0000:0000:0000:0000:0000:0001", "[2001:db8::1]:443", "").address).toBe("2001:db8::1");
    expect(proxies.originOf("10.0.0.2", `${"x".repeat(500)}`, "").address).toHaveLength(64);
    expect(proxies.originOf("10.0.0.2", "not-an-address", "").address).toBe("not-an-address");
  });

  it("believes the nearest proxy's X-Forwarded-Proto: its last value", () => {
    expect(proxies.originOf("10.0.0.2", "198.51.100.1", "http, https").https).toBe(true);
    expect(proxies.originOf("10.0.0.2", "198.51.100.1", "https, http").https).toBe(false);
    expect(proxies.originOf("10.0.0.2", "198.51.100.1", " HTTPS ").https).toBe(true);
  });

  it("reads a header of any length from its right end only, cutting no hop in two", () => {
    const long = `${"198.51.100.1, ".repeat(5000)}203.0.113.5`;
    expect(proxies.originOf("10.0.0.2", long, "").address).toBe("203.0.113.5");
    // 31 trusted hops of 64 characters, and left of them a client's hop that the 2080 characters read cut in two
    // ("113.77" and spaces): that piece is dropped, never taken for the client.
    const trustedHops = Array.from({ length: 31 }, () => `,${" ".repeat(56)}10.1.2.3`).join("");
    const cutHop = `203.0.113.77${" ".repeat(59)}`;
    expect(proxies.originOf("10.0.0.2", `198.51.100.1, ${cutHop}${trustedHops}`, "").address).toBe("10.1.2.3");
    expect(proxies.originOf("10.0.0.2", `${cutHop.slice(6)}${trustedHops}`, "").address).toBe("113.77");
  });

  it("notices X-Forwarded-For from an untrusted peer once per peer, for a few peers (a proxy not listed)", () => {
    const lines: string[] = [];
    const unlisted = new TrustedProxies([], (line) => lines.push(line));
    expect(unlisted.originOf("127.0.0.1", "203.0.113.1", "https")).toEqual({ address: "127.0.0.1", https: false });
    unlisted.originOf("127.0.0.1", "203.0.113.2", "");
    unlisted.originOf("::ffff:127.0.0.1", "203.0.113.2", "");
    expect(lines).toEqual([expect.stringMatching(/^127\.0\.0\.1 sent X-Forwarded-For but is not in trustedProxies.*every client behind it shares that one address/)]);
    // Without the header, nothing to say; from a trusted peer, nothing either.
    unlisted.originOf("192.0.2.1", "", "");
    proxies.originOf("10.0.0.2", "203.0.113.1", "");
    expect(lines).toHaveLength(1);
    // A client spraying the header from many addresses gets a few lines, not one per request.
    for (let i = 0; i < 100; i++) unlisted.originOf(`192.0.2.${i}`, "203.0.113.1", "");
    expect(lines).toHaveLength(8);
  });

  it("matches ranges of the address's own family only", () => {
    expect(proxies.trusts("10.255.255.255")).toBe(true);
    expect(proxies.trusts("11.0.0.0")).toBe(false);
    expect(proxies.trusts("192.168.1.8")).toBe(false);
    expect(proxies.trusts("fdff::1")).toBe(true);
    expect(proxies.trusts("fe80::1")).toBe(false);
    expect(proxies.trusts("::ffff:10.1.2.3")).toBe(true);
    expect(new TrustedProxies(["::ffff:10.0.0.0/104"]).trusts("10.2.3.4")).toBe(true);
    expect(new TrustedProxies(["::ffff:10.0.0.0/104"]).trusts("11.2.3.4")).toBe(false);
  });

  it("refuses entries that are no address or range, naming them", () => {
    expect(() => new TrustedProxies(["10.0.0.0/8", "proxy"])).toThrow(/trustedProxies: "proxy" is not an IPv4 or IPv6 address/);
    expect(trustedProxiesProblem(["0.0.0.0/0", "::/0"])).toBeUndefined();
    expect(trustedProxiesProblem("10.0.0.0/8")).toMatch(/an array/);
    expect(trustedProxiesProblem(Array.from({ length: 1001 }, () => "10.0.0.1"))).toMatch(/up to 1000/);
    expect(trustedProxiesProblem(["10.0.0.0/-1"])).toMatch(/prefix length/);
    expect(trustedProxiesProblem(["::ffff:10.0.0.0/95"])).toMatch(/prefix length outside 96-128 \(an IPv4-mapped range\)/);
  });
});
