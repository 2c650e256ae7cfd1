// Per-kernel time of the CPU runtime's dispatches, for profiling benches (bench/decode-profile.ts): nothing is
// recorded unless a profile is set, and then one performance.now() pair per dispatch.
import { performance } from "node:perf_hooks";

/** What one kernel's dispatches took, summed. */
export interface KernelTiming {
  /** Dispatches (parallel() and call()). */
  calls: number;
  /** Wall time on the calling thread, from dispatch to the last share's end. */
  milliseconds: number;
  /** Shares the dispatches were cut into, and how many of them the calling thread ran itself. */
  shares: number;
  mainShares: number;
}

/** Timings by kernel name, filled while it is the active profile. */
export class KernelProfile {
  readonly kernels = new Map<string, KernelTiming>();

  /** Adds one dispatch of `kernel` begun at `startedAt` (performance.now()). */
  record(kernel: string, startedAt: number, shares: number, mainShares: number): void {
    const milliseconds = performance.now() - startedAt;
    const timing = this.kernels.get(kernel);
    if (timing === undefined) this.kernels.set(kernel, { calls: 1, milliseconds, shares, mainShares });
    else {
      timing.calls += 1;
      timing.milliseconds += milliseconds;
      timing.shares += shares;
      timing.mainShares += mainShares;
    }
  }

  /** Total wall time of every kernel recorded. */
  totalMilliseconds(): number {
    let total = 0;
    for (const timing of this.kernels.values()) total += timing.milliseconds;
    return total;
  }
}

let active: KernelProfile | undefined;

/** Makes `profile` the one every runtime of this thread records into (undefined: stop recording). */
export function setKernelProfile(profile: KernelProfile | undefined): void {
  active = profile;
}

/** The profile being recorded, if any. */
export function activeKernelProfile(): KernelProfile | undefined {
  return active;
}
