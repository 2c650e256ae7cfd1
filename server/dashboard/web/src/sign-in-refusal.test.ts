// The sign-in page's refusals: an unknown management key is called unknown, not "use a management key".
import { describe, expect, it } from "vitest";
import { signInRefusal } from "./sign-in-refusal";

describe("signInRefusal", () => {
  it("calls an unknown or revoked management key that, and asks for a management key only when an inference key was given", () => {
    expect(signInRefusal("organization", `sk-mgmt-${"a".repeat(43)}`)).toBe("That management key is unknown or revoked.");
    expect(signInRefusal("organization", `sk-gw-${"a".repeat(43)}`)).toBe("That is an inference key (sk-gw-…), which calls the API: sign in with a management key (sk-mgmt-…).");
    expect(signInRefusal("organization", "hunter2")).toBe("That is not a management key: they start with sk-mgmt-.");
  });

  it("tells an operator token from an organization's key", () => {
    expect(signInRefusal("operator", `lop_${"a".repeat(40)}`)).toBe("That operator token is unknown or revoked.");
    expect(signInRefusal("operator", `sk-mgmt-${"a".repeat(43)}`)).toMatch(/an organization's key, not an operator token/);
    expect(signInRefusal("operator", "hunter2")).toBe("That is not an operator token: they start with lop_.");
  });
});
