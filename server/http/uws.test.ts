// Loading uWebSockets.js: on a Node.js release it has no build for, `loom serve` says which release to use.
import { describe, expect, it } from "vitest";
import { loadUws } from "./uws.js";

describe("loadUws", () => {
  it("loads the module on this release", async () => {
    expect(typeof (await loadUws()).App).toBe("function");
  });

  it("names the release, its ABI and the releases that work when the package has no build for it", async () => {
    const missing = () => Promise.reject(new Error("This version of uWS.js supports only Node.js versions 18, 20, 21 and 22 ...\n\nError: Cannot find module"));
    const error = await loadUws(missing).catch((caught: unknown) => caught as Error);
    expect(error.message).toContain(`no build for Node.js ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch})`);
    expect(error.message).toContain("run loom serve on Node.js 20 or 22 (This version of uWS.js supports only");
  });
});
