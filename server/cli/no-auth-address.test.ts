// --no-auth is for loopback: on any other address it needs a second flag, and then a warning.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../engine/cli/arguments.js";
import { NO_AUTH_ON_NETWORK_FLAG, checkNoAuthAddress, isLoopbackHost } from "./no-auth-address.js";

describe("--no-auth and the listening address", () => {
  it("takes 127.0.0.0/8, ::1 (bare, bracketed or IPv4-mapped) and localhost for loopback, and nothing else", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1", "localhost", "LOCALHOST"]) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "::ffff:10.0.0.1", "fe80::1", "example.com", "localhost.example.com", "128.0.0.1", ""]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it("lets --no-auth serve loopback quietly, refuses it elsewhere naming the way out, and warns when that is asked for", () => {
    expect(checkNoAuthAddress("127.0.0.1", true, false)).toBeUndefined();
    expect(checkNoAuthAddress("0.0.0.0", false, false)).toBeUndefined();
    expect(() => checkNoAuthAddress("0.0.0.0", true, false)).toThrow(UsageError);
    expect(() => checkNoAuthAddress("::", true, false)).toThrow(new RegExp(`--no-auth on --host ::, which is not a loopback address.*${NO_AUTH_ON_NETWORK_FLAG}`));
    expect(checkNoAuthAddress("0.0.0.0", true, true)).toMatch(/^WARNING: no authentication on 0\.0\.0\.0/);
    // On loopback the second flag changes nothing and needs no warning.
    expect(checkNoAuthAddress("::1", true, true)).toBeUndefined();
  });

  it("refuses the second flag without --no-auth, where it would mean nothing", () => {
    expect(() => checkNoAuthAddress("0.0.0.0", false, true)).toThrow(/goes with --no-auth/);
  });
});
