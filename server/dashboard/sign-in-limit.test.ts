// Whose sign-in attempts count together: addresses as uWebSockets.js writes them, and credentials by their prefix.
import { describe, expect, it } from "vitest";
import { signInClientKey, signInCredentialKey } from "./sign-in-limit.js";

describe("signInCredentialKey", () => {
  it("counts a credential by its kind's prefix and 6 more characters, as the dashboard shows keys", () => {
    expect(signInCredentialKey(`sk-mgmt-AbCdEf${"x".repeat(37)}`)).toBe("sk-mgmt-AbCdEf");
    expect(signInCredentialKey(`sk-gw-AbCdEfGh`)).toBe("sk-gw-AbCdEf");
    expect(signInCredentialKey(`lop_AbCdEf${"x".repeat(37)}`)).toBe("lop_AbCdEf");
    expect(signInCredentialKey("wrong-credential")).toBe("wrong-");
    expect(signInCredentialKey("ab")).toBe("ab");
  });
});

describe("signInClientKey", () => {
  it("counts an IPv4 address alone, and an IPv4-mapped IPv6 address as that IPv4 address", () => {
    expect(signInClientKey("203.0.113.7")).toBe("203.0.113.7");
    expect(signInClientKey("0000:0000:0000:0000:0000:ffff:cb00:7107")).toBe("203.0.113.7");
  });

  it("counts every IPv6 address of one /64 together, and different /64s apart", () => {
    const a = signInClientKey("2001:0db8:0001:0002:0000:0000:0000:0001");
    expect(a).toBe("2001:db8:1:2::/64");
    expect(signInClientKey("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe(a);
    expect(signInClientKey("2001:db8:1:3::1")).not.toBe(a);
    expect(signInClientKey("0000:0000:0000:0000:0000:0000:0000:0001")).toBe("0:0:0:0::/64");
  });

  it("keeps text that is no address as itself, bounded", () => {
    expect(signInClientKey("not an address")).toBe("not an address");
    expect(signInClientKey("x".repeat(500))).toHaveLength(64);
  });
});
