// Semantic versions (semver.org 2.0.0): parsed and ordered, so that "0.10.0" is newer than "0.9.0" and a
// pre-release ("1.0.0-rc.1") older than its release.

/** A parsed version; `build` metadata is kept but never affects the order. */
export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: string[];
  text: string;
}

const PATTERN = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** Parses `text`, or returns undefined when it is not a semantic version. */
export function parseSemVer(text: string): SemVer | undefined {
  const match = PATTERN.exec(text);
  if (match === null) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), prerelease: match[4]?.split(".") ?? [], text };
}

/** Negative when `a` is older than `b`, positive when newer, 0 when equal in precedence. @throws Error naming a bad version. */
export function compareSemVer(a: string, b: string): number {
  const x = parseSemVer(a);
  const y = parseSemVer(b);
  if (x === undefined) throw new Error(`'${a}' is not a semantic version (MAJOR.MINOR.PATCH)`);
  if (y === undefined) throw new Error(`'${b}' is not a semantic version (MAJOR.MINOR.PATCH)`);
  const core = x.major - y.major || x.minor - y.minor || x.patch - y.patch;
  if (core !== 0) return Math.sign(core);
  // A version without a pre-release outranks one with.
  if (x.prerelease.length === 0 || y.prerelease.length === 0) return y.prerelease.length - x.prerelease.length === 0 ? 0 : x.prerelease.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(x.prerelease.length, y.prerelease.length); i++) {
    const order = compareIdentifier(x.prerelease[i]!, y.prerelease[i]!);
    if (order !== 0) return order;
  }
  return Math.sign(x.prerelease.length - y.prerelease.length);
}

/** Numeric identifiers compare as numbers and rank below alphanumeric ones, which compare in ASCII order. */
function compareIdentifier(a: string, b: string): number {
  const numeric = /^\d+$/;
  if (numeric.test(a) && numeric.test(b)) return Math.sign(Number(a) - Number(b));
  if (numeric.test(a)) return -1;
  if (numeric.test(b)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
