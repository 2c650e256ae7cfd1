// Pinning one llama.cpp CPU build: the copy of node-llama-cpp's prebuilt package holds that build's library alone, and
// a child process running it maps that library, not the one ggml would pick from the full package.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { DEFAULT_BUILD, LlamaCppBuildError, availableBuilds, cpuBuildsIn, missingBuildsReason, pinnedPackage, prebuiltPackage, runBuild } from "./llama-cpp-builds.js";

const pkg = prebuiltPackage();
const reason = missingBuildsReason(pkg);

describe.skipIf(skipOutsideCi(reason))(titled("pinned llama.cpp CPU builds", reason), () => {
  let defaultBuild: string;
  let other: string;

  beforeAll(async () => {
    failIfMissing(reason);
    const run = await runBuild(DEFAULT_BUILD, undefined, pkg);
    defaultBuild = run.loaded;
    // The baseline build loads on every x86-64 processor and is never ggml's choice on one with AVX.
    const others = availableBuilds(pkg).filter((build) => build !== defaultBuild);
    other = others.includes("x64") ? "x64" : others[0];
  });

  it("runs the installed package with one CPU library mapped, ggml's choice among those it ships", () => {
    expect(availableBuilds(pkg)).toContain(defaultBuild);
    expect(availableBuilds(pkg).length).toBeGreaterThan(1);
  });

  it("pins a build with a copy holding that build's library alone and every other file of the package", () => {
    const copy = pinnedPackage(other, pkg!);
    expect(cpuBuildsIn(copy, pkg!)).toEqual([other]);
    const notCpu = (folder: string) => readdirSync(folder).filter((file) => !file.startsWith("libggml-cpu-")).sort();
    expect(notCpu(join(copy, pkg!.binsFolder))).toEqual(notCpu(join(pkg!.directory, pkg!.binsFolder)));
    expect(notCpu(join(copy, pkg!.binsFolder))).toContain("llama-addon.node");
  });

  it("maps the pinned build's library from the copy in the child, not ggml's choice", async () => {
    const run = await runBuild(other, undefined, pkg);
    expect(run.loaded).toBe(other);
    expect(run.loaded).not.toBe(defaultBuild);
    expect(run.library).toBe(join(pinnedPackage(other, pkg!), pkg!.binsFolder, `libggml-cpu-${other}.so`));
  });

  it("refuses a build the package does not ship", async () => {
    await expect(runBuild("no-such-build", undefined, pkg)).rejects.toThrow(LlamaCppBuildError);
  });
});
