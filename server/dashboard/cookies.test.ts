// The dashboard's session cookie and cross-site check: cookie values read only when well formed, the cookie's flags,
// and which request origins may change state.
import { describe, expect, it } from "vitest";
import { SECURE_SESSION_COOKIE, SESSION_COOKIE, clearedSessionCookie, clearedSessionCookies, cookieValue, cookieValues, crossSiteRefusal, sessionCookie } from "./cookies.js";

describe("cookieValue", () => {
  it("reads the named cookie among others, whatever the spacing", () => {
    expect(cookieValue(`a=1; ${SESSION_COOKIE}=ds_abc-_9;b=2`, SESSION_COOKIE)).toBe("ds_abc-_9");
    expect(cookieValue(`${SESSION_COOKIE}=ds_x`, SESSION_COOKIE)).toBe("ds_x");
    expect(cookieValue(`x${SESSION_COOKIE}=ds_x; ${SESSION_COOKIE}x=ds_y`, SESSION_COOKIE)).toBeUndefined();
  });

  it("ignores a malformed value, an empty one, and an oversized header", () => {
    for (const header of [`${SESSION_COOKIE}=`, `${SESSION_COOKIE}="ds_x"`, `${SESSION_COOKIE}=ds x`, `${SESSION_COOKIE}=${"a".repeat(201)}`, `${SESSION_COOKIE}=ds_%00`, `${"a=b; ".repeat(2000)}${SESSION_COOKIE}=ds_x`]) {
      expect(cookieValue(header, SESSION_COOKIE)).toBeUndefined();
    }
  });
});

describe("cookieValues", () => {
  it("reads every well-formed value of the name, in order, once each, at most four", () => {
    expect(cookieValues(`${SESSION_COOKIE}=ds_a; b=1; ${SESSION_COOKIE}=bad!; ${SESSION_COOKIE}=ds_b; ${SESSION_COOKIE}=ds_a`, SESSION_COOKIE)).toEqual(["ds_a", "ds_b"]);
    expect(cookieValues(Array.from({ length: 10 }, (_, i) => `${SESSION_COOKIE}=ds_${i}`).join("; "), SESSION_COOKIE)).toEqual(["ds_0", "ds_1", "ds_2", "ds_3"]);
    expect(cookieValues(`${"a=b; ".repeat(2000)}${SESSION_COOKIE}=ds_x`, SESSION_COOKIE)).toEqual([]);
    expect(cookieValues("", SESSION_COOKIE)).toEqual([]);
  });
});

describe("sessionCookie", () => {
  it("is HttpOnly and SameSite=Strict, over TLS Secure and named __Host- (Path=/, no Domain), for its lifetime", () => {
    expect(sessionCookie("ds_abc", { secure: false, maxAgeSeconds: 3600.7 })).toBe(`${SESSION_COOKIE}=ds_abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600`);
    expect(SECURE_SESSION_COOKIE).toBe("__Host-loom_session");
    expect(sessionCookie("ds_abc", { secure: true, maxAgeSeconds: 60 })).toBe("__Host-loom_session=ds_abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=60; Secure");
    expect(clearedSessionCookie({ secure: true })).toBe("__Host-loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure");
    expect(clearedSessionCookie({ secure: false })).toBe(`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    expect(() => sessionCookie("ds_a;b", { secure: false, maxAgeSeconds: 1 })).toThrow();
  });

  it("signing out clears both names, each on a line of its own", () => {
    const cleared = (secure: boolean) => Object.entries(clearedSessionCookies({ secure })).flatMap(([name, lines]) => lines.map((line) => [name.toLowerCase(), line]));
    expect(cleared(true)).toEqual([["set-cookie", "__Host-loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure"], ["set-cookie", "loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure"]]);
    expect(cleared(false)).toEqual([["set-cookie", "__Host-loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure"], ["set-cookie", "loom_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"]]);
  });
});

describe("crossSiteRefusal", () => {
  const host = "loom.internal:8080";
  it("lets the dashboard's own pages and non-browser clients through", () => {
    expect(crossSiteRefusal({ host, origin: "http://loom.internal:8080", secFetchSite: "same-origin" })).toBeUndefined();
    expect(crossSiteRefusal({ host, origin: "", secFetchSite: "" })).toBeUndefined();
    expect(crossSiteRefusal({ host: "LOOM.internal:8080", origin: "https://loom.internal:8080", secFetchSite: "" })).toBeUndefined();
  });

  it("refuses other sites, other origins of the same site, and a malformed Origin", () => {
    expect(crossSiteRefusal({ host, origin: "https://evil.example", secFetchSite: "cross-site" })).toMatch(/cross-site/);
    expect(crossSiteRefusal({ host, origin: "http://loom.internal:9090", secFetchSite: "same-site" })).toMatch(/same-site/);
    expect(crossSiteRefusal({ host, origin: "https://evil.example", secFetchSite: "" })).toMatch(/another origin/);
    expect(crossSiteRefusal({ host, origin: "null", secFetchSite: "" })).toMatch(/not a URL/);
  });
});
