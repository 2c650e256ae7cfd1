// Which uWebSockets.js build can run here: the npm builds loom depends on, the Node.js ABIs, platforms and glibc
// versions their binaries cover, and the choice for a given runtime, or a refusal that says what to change.
// Plain data and pure functions: loading the chosen module is uws.ts's job.

/** Where a build's binary can load: its platform-arch, and on Linux the oldest glibc it links against. */
export interface UwsTarget {
  /** The oldest glibc the Linux binary loads on (its highest GLIBC_x.y symbol version); undefined off Linux. */
  readonly glibc?: string;
  /** Common systems with that glibc or a newer one, for messages. */
  readonly systems?: string;
}

/** One npm build of uWebSockets.js and what its native binaries cover. */
export interface UwsBuild {
  /** The module name loom imports (its name in package.json). */
  readonly module: string;
  /** The npm package and version behind that name, for messages. */
  readonly package: string;
  /** The uWebSockets.js release its binaries were built from. */
  readonly release: string;
  /** Node.js ABI versions (process.versions.modules) it ships a binary for. */
  readonly abis: readonly number[];
  /** `${process.platform}-${process.arch}` it ships binaries for. */
  readonly targets: Readonly<Record<string, UwsTarget>>;
  /** How to get it when it is missing. */
  readonly install: string;
}

/**
 * The builds loom depends on, the preferred first. NOTE: the ABIs, targets and glibc versions are read from the
 * packages' binaries (uws-builds.test.ts checks them against the installed files); change them together.
 */
export const UWS_BUILDS: readonly UwsBuild[] = [
  {
    module: "uWebSockets.js",
    package: "uws-pack 20.0.8",
    release: "v20.49",
    abis: [108, 115, 120, 127],
    targets: {
      "linux-x64": { glibc: "2.27", systems: "Debian 10, Ubuntu 18.04, RHEL 8" },
      "linux-arm64": { glibc: "2.27", systems: "Debian 10, Ubuntu 18.04, RHEL 8" },
      "linux-arm": { glibc: "2.28", systems: "Debian 10, Ubuntu 20.04" },
      "darwin-x64": {},
      "darwin-arm64": {},
      "win32-x64": {},
    },
    install: "npm install (it is a dependency)",
  },
  {
    module: "@btc-vision/uwebsockets.js",
    package: "@btc-vision/uwebsockets.js 20.57.0",
    release: "v20.57",
    abis: [115, 127, 137, 141],
    targets: {
      "linux-x64": { glibc: "2.38", systems: "Debian 13, Ubuntu 24.04, Fedora 39" },
      "linux-arm64": { glibc: "2.38", systems: "Debian 13, Ubuntu 24.04, Fedora 39" },
      "darwin-x64": {},
      "darwin-arm64": {},
      "win32-x64": {},
    },
    install: "npm install without --omit=optional (it is an optional dependency)",
  },
];

/** The Node.js release lines loom supports (package.json engines), offered in messages. */
export const SUPPORTED_NODE_RELEASES: readonly number[] = [20, 22, 24];

/** Node.js release line of each ABI version (https://github.com/nodejs/node/blob/main/doc/abi_version_registry.json). */
const RELEASE_OF_ABI: Readonly<Record<number, number>> = { 108: 18, 115: 20, 120: 21, 127: 22, 131: 23, 137: 24, 141: 25 };

/** What the choice depends on: the running Node.js and the machine. */
export interface UwsRuntime {
  /** process.version, e.g. "v24.11.0". */
  readonly nodeVersion: string;
  /** process.versions.modules as a number. */
  readonly abi: number;
  readonly platform: string;
  readonly arch: string;
  /** The C library's glibc version on Linux ("2.36"); undefined off Linux and on a Linux without glibc (musl). */
  readonly glibc?: string;
}

/** The running process's {@link UwsRuntime}. */
export function currentRuntime(): UwsRuntime {
  const header = process.platform === "linux" ? (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header : undefined;
  return {
    nodeVersion: process.version,
    abi: Number(process.versions.modules),
    platform: process.platform,
    arch: process.arch,
    glibc: header?.glibcVersionRuntime,
  };
}

/** A build to load, or why none can. */
export type UwsChoice = { readonly build: UwsBuild } | { readonly refusal: string };

/**
 * The first build with a binary for this runtime's ABI and platform that loads on its glibc; otherwise a refusal
 * naming the Node.js version, the platform or glibc, and the Node.js releases or glibc version that would work.
 */
export function chooseUwsBuild(runtime: UwsRuntime, builds: readonly UwsBuild[] = UWS_BUILDS): UwsChoice {
  const target = `${runtime.platform}-${runtime.arch}`;
  const node = `Node.js ${runtime.nodeVersion} (ABI ${runtime.abi})`;
  if (runtime.platform === "linux" && runtime.glibc === undefined) {
    return {
      refusal: `no uWebSockets.js build for ${node} loads on ${target} without glibc (musl, as on Alpine): its Linux ` +
        `binaries link against glibc; run loom serve on a glibc system (Debian, Ubuntu, Fedora)`,
    };
  }
  const loadsHere = (build: UwsBuild, abi: number) => build.abis.includes(abi) && glibcSuffices(build.targets[target], runtime.glibc);
  const chosen = builds.find((build) => loadsHere(build, runtime.abi));
  if (chosen) return { build: chosen };

  const place = runtime.platform === "linux" ? `${target} with glibc ${runtime.glibc}` : target;
  const releasesHere = SUPPORTED_NODE_RELEASES.filter((release) =>
    builds.some((build) => build.abis.some((abi) => RELEASE_OF_ABI[abi] === release && loadsHere(build, abi))));
  // A build for this ABI and platform whose glibc is newer than this one's: the other way out.
  const newerGlibc = builds
    .filter((build) => build.abis.includes(runtime.abi) && build.targets[target]?.glibc !== undefined)
    .map((build) => ({ build, target: build.targets[target]! }))
    .sort((a, b) => compareVersions(a.target.glibc!, b.target.glibc!))[0];
  const ways = [
    ...(releasesHere.length > 0 ? [`Node.js ${joinOr(releasesHere.map(String))}`] : []),
    ...(newerGlibc ? [`a system with glibc ${newerGlibc.target.glibc} or newer (${newerGlibc.target.systems}) for ${newerGlibc.build.package}`] : []),
  ];
  if (ways.length === 0) {
    // Nothing for this ABI on this platform, nor any supported release here: a newer glibc, or another platform.
    const oldest = builds.flatMap((build) => (build.targets[target]?.glibc ? [build.targets[target]!] : []))
      .sort((a, b) => compareVersions(a.glibc!, b.glibc!))[0];
    const targets = [...new Set(builds.flatMap((build) => Object.keys(build.targets)))];
    ways.push(oldest ? `a system with glibc ${oldest.glibc} or newer (${oldest.systems})` : `one of ${targets.join(", ")}`);
  }
  return { refusal: `no uWebSockets.js build for ${node} loads on ${place}: use ${ways.join(", or ")}` };
}

/** Whether a target exists and, on Linux, the running glibc is at least the one it needs. */
function glibcSuffices(target: UwsTarget | undefined, glibc: string | undefined): boolean {
  if (!target) return false;
  if (target.glibc === undefined) return true;
  return glibc !== undefined && compareVersions(glibc, target.glibc) >= 0;
}

/** Compares dotted version numbers ("2.36" < "2.38" < "2.100"). */
export function compareVersions(a: string, b: string): number {
  const left = a.split(".").map(Number);
  const right = b.split(".").map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** "20", "20 or 22", "20, 22 or 24". */
function joinOr(items: string[]): string {
  return items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}
