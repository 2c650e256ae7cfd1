// Choosing a uWebSockets.js build: the right one for each Node.js release, platform and glibc, a refusal that says
// what to change where none loads, and the table checked against the binaries the installed packages ship.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";
import { UWS_BUILDS, type UwsRuntime, chooseUwsBuild, compareVersions, currentRuntime } from "./uws-builds.js";

const NODE_20 = { nodeVersion: "v20.20.2", abi: 115 };
const NODE_22 = { nodeVersion: "v22.23.3", abi: 127 };
const NODE_23 = { nodeVersion: "v23.11.1", abi: 131 };
const NODE_24 = { nodeVersion: "v24.21.0", abi: 137 };
const linux = (glibc: string | undefined, arch = "x64") => ({ platform: "linux", arch, glibc });

/** The chosen package, or the refusal. */
function choose(runtime: UwsRuntime): string {
  const choice = chooseUwsBuild(runtime);
  return "build" in choice ? choice.build.package : choice.refusal;
}

describe("chooseUwsBuild", () => {
  it("takes uws-pack on Node.js 20 and 22 wherever its glibc 2.27 is met, the newer build on none of them", () => {
    for (const node of [NODE_20, NODE_22]) {
      expect(choose({ ...node, ...linux("2.36") })).toBe("uws-pack 20.0.8");
      expect(choose({ ...node, ...linux("2.41") })).toBe("uws-pack 20.0.8");
      expect(choose({ ...node, ...linux("2.27", "arm64") })).toBe("uws-pack 20.0.8");
      expect(choose({ ...node, platform: "darwin", arch: "arm64" })).toBe("uws-pack 20.0.8");
      expect(choose({ ...node, platform: "win32", arch: "x64" })).toBe("uws-pack 20.0.8");
    }
  });

  it("takes the Node 24 build from glibc 2.38 on, and off Linux", () => {
    expect(choose({ ...NODE_24, ...linux("2.38") })).toBe("@btc-vision/uwebsockets.js 20.57.0");
    expect(choose({ ...NODE_24, ...linux("2.41", "arm64") })).toBe("@btc-vision/uwebsockets.js 20.57.0");
    expect(choose({ ...NODE_24, platform: "darwin", arch: "arm64" })).toBe("@btc-vision/uwebsockets.js 20.57.0");
  });

  it("refuses Node.js 24 on glibc 2.37 and older, naming the releases that work there and the glibc that would", () => {
    expect(choose({ ...NODE_24, ...linux("2.36") })).toBe(
      "no uWebSockets.js build for Node.js v24.21.0 (ABI 137) loads on linux-x64 with glibc 2.36: use Node.js 20 or 22, " +
        "or a system with glibc 2.38 or newer (Debian 13, Ubuntu 24.04, Fedora 39) for @btc-vision/uwebsockets.js 20.57.0",
    );
    // 32-bit ARM has no Node 24 build at all: only the releases that work.
    expect(choose({ ...NODE_24, ...linux("2.41", "arm") })).toBe(
      "no uWebSockets.js build for Node.js v24.21.0 (ABI 137) loads on linux-arm with glibc 2.41: use Node.js 20 or 22",
    );
  });

  it("refuses a release no build covers, offering the supported ones that load here", () => {
    expect(choose({ ...NODE_23, ...linux("2.41") })).toBe(
      "no uWebSockets.js build for Node.js v23.11.1 (ABI 131) loads on linux-x64 with glibc 2.41: use Node.js 20, 22 or 24",
    );
    expect(choose({ ...NODE_23, platform: "darwin", arch: "x64" })).toBe(
      "no uWebSockets.js build for Node.js v23.11.1 (ABI 131) loads on darwin-x64: use Node.js 20, 22 or 24",
    );
  });

  it("names the glibc every build needs on an older system, and the platforms on an unknown one", () => {
    expect(choose({ ...NODE_20, ...linux("2.17") })).toBe(
      "no uWebSockets.js build for Node.js v20.20.2 (ABI 115) loads on linux-x64 with glibc 2.17: use a system with glibc " +
        "2.27 or newer (Debian 10, Ubuntu 18.04, RHEL 8) for uws-pack 20.0.8",
    );
    expect(choose({ ...NODE_23, ...linux("2.17") })).toBe(
      "no uWebSockets.js build for Node.js v23.11.1 (ABI 131) loads on linux-x64 with glibc 2.17: use a system with glibc " +
        "2.27 or newer (Debian 10, Ubuntu 18.04, RHEL 8)",
    );
    expect(choose({ ...NODE_22, ...linux("2.41", "riscv64") })).toMatch(
      /loads on linux-riscv64 with glibc 2\.41: use one of linux-x64, linux-arm64, linux-arm, darwin-x64, darwin-arm64, win32-x64$/,
    );
  });

  it("refuses a Linux without glibc, saying so", () => {
    expect(choose({ ...NODE_22, ...linux(undefined) })).toBe(
      "no uWebSockets.js build for Node.js v22.23.3 (ABI 127) loads on linux-x64 without glibc (musl, as on Alpine): its " +
        "Linux binaries link against glibc; run loom serve on a glibc system (Debian, Ubuntu, Fedora)",
    );
  });

  it("reads this process's runtime", () => {
    const runtime = currentRuntime();
    expect(runtime.abi).toBe(Number(process.versions.modules));
    expect(runtime.nodeVersion).toBe(process.version);
    if (process.platform === "linux") expect(runtime.glibc).toMatch(/^2\.\d+$/);
  });

  it("compares versions by number", () => {
    expect(compareVersions("2.36", "2.38")).toBeLessThan(0);
    expect(compareVersions("2.100", "2.38")).toBeGreaterThan(0);
    expect(compareVersions("2.38", "2.38.0")).toBe(0);
  });
});

/** The binaries a package ships: uws_<platform>_<arch>_<abi>.node anywhere under its folder. */
function shippedBinaries(folder: string): Array<{ target: string; abi: number; path: string }> {
  return readdirSync(folder, { recursive: true, encoding: "utf8" }).flatMap((file) => {
    const match = /uws_([a-z0-9]+)_([a-z0-9]+)_(\d+)\.node$/.exec(file);
    return match ? [{ target: `${match[1]}-${match[2]}`, abi: Number(match[3]), path: join(folder, file) }] : [];
  });
}

/** The newest glibc symbol version an ELF binary asks for (its version strings are plain text in .dynstr). */
function neededGlibc(path: string): string {
  const versions = [...readFileSync(path).toString("latin1").matchAll(/GLIBC_(2\.\d+)\0/g)].map((match) => match[1]!);
  return versions.sort(compareVersions).at(-1)!;
}

describe("UWS_BUILDS against the installed packages", () => {
  for (const build of UWS_BUILDS) {
    const folder = join(REPOSITORY_ROOT, "node_modules", build.module);
    const installed = existsSync(folder);
    // An optional dependency may be left out locally; npm ci installs it, so under CI it must be there.
    it.skipIf(!installed && process.env.CI !== "true")(`${build.package}: ABIs, platforms and glibc as its binaries are`, () => {
      expect(installed, `${build.module} is not installed in node_modules`).toBe(true);
      const binaries = shippedBinaries(folder);
      expect(new Set(binaries.map((binary) => binary.abi))).toEqual(new Set(build.abis));
      expect(new Set(binaries.map((binary) => binary.target))).toEqual(new Set(Object.keys(build.targets)));
      expect(binaries).toHaveLength(build.abis.length * Object.keys(build.targets).length);
      for (const binary of binaries.filter((binary) => binary.target.startsWith("linux-"))) {
        expect(neededGlibc(binary.path), binary.path).toBe(build.targets[binary.target]!.glibc);
      }
    });
  }
});
