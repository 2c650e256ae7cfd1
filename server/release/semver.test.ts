// Versions compare as semver says, not as strings.
import { describe, expect, it } from "vitest";
import { compareSemVer, parseSemVer } from "./semver.js";

describe("compareSemVer", () => {
  it("orders numerically and puts pre-releases before their release", () => {
    const ordered = ["0.9.0", "0.10.0-alpha", "0.10.0-alpha.1", "0.10.0-alpha.beta", "0.10.0-beta.2", "0.10.0-beta.11", "0.10.0-rc.1", "0.10.0", "1.0.0"];
    const shuffled = [...ordered].reverse();
    expect(shuffled.sort(compareSemVer)).toEqual(ordered);
    expect(compareSemVer("1.0.0+build.5", "1.0.0")).toBe(0);
  });

  it("refuses what is not a version", () => {
    expect(parseSemVer("1.0")).toBeUndefined();
    expect(parseSemVer("01.0.0")).toBeUndefined();
    expect(() => compareSemVer("v1.0.0", "1.0.0")).toThrow("'v1.0.0' is not a semantic version");
  });
});
