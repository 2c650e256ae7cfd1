// Sums a V8 CPU profile (.cpuprofile, as node:inspector's Profiler gives it) by named parts of the code: each sample
// goes to the innermost frame on its stack that a part claims, so a database driver called by the usage writer called
// by the accountant counts as the driver. For bench/platform-overhead.ts: where the platform's main-thread CPU goes.

/** The parts of a .cpuprofile this reads. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  /** When sampling began, in microseconds of the monotonic clock (process.hrtime's, on Linux). */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A span of the monotonic clock, in microseconds. */
export interface Window {
  start: number;
  end: number;
}

/** A named part of the code: the frames whose script URL (and function name, when given) match. */
export interface CodePart {
  name: string;
  url: RegExp;
  functionName?: RegExp;
}

/**
 * Sampled CPU milliseconds per part, in the parts' order, then "idle" and "other" (samples no part claims); only the
 * samples taken within `windows`, when given.
 */
export function cpuByPart(profile: CpuProfile, parts: readonly CodePart[], windows?: readonly Window[]): Map<string, number> {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // Each node's part, found once: its own, else its caller's.
  const partOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = partOf.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)!.callFrame;
    const own = frame.functionName === "(idle)" ? "idle" : parts.find((part) => part.url.test(frame.url) && (!part.functionName || part.functionName.test(frame.functionName)))?.name;
    const callerId = parent.get(id);
    const part = own ?? (callerId === undefined ? "other" : resolve(callerId));
    partOf.set(id, part);
    return part;
  };
  const totals = new Map<string, number>([...parts.map((part) => [part.name, 0] as [string, number]), ["idle", 0], ["other", 0]]);
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (windows && !windows.some((window) => at >= window.start && at < window.end)) return;
    const part = resolve(id);
    totals.set(part, totals.get(part)! + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return totals;
}
