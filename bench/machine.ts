// Describes the machine a benchmark ran on, and its physical limits, for every reported figure; and the CPU time of
// this process's main thread.
import { cpus } from "node:os";
import { readFileSync } from "node:fs";

/** CPU model, core count, clock and SIMD width as seen by the OS. */
export interface MachineDescription {
  cpu: string;
  cores: number;
  megahertz: number;
  /**
   * Peak f32 FLOP/s of all cores: 2 FMA pipes x lanes x 2 FLOP x clock, with 8 lanes for AVX2 and for AMD's
   * AVX-512 (Zen 4 executes 512-bit FMAs as two 256-bit halves), 16 for Intel's AVX-512.
   */
  peakFlops: number;
  date: string;
}

/** Reads the machine's description from the OS. */
export function describeMachine(): MachineDescription {
  const info = cpus();
  let cpuinfo = "";
  try {
    cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    // Not Linux: assume AVX2-class.
  }
  const flags = /^flags\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? "avx2";
  const amd = /AuthenticAMD/.test(cpuinfo);
  const lanes = /\bavx512f\b/.test(flags) && !amd ? 16 : /\bavx2\b/.test(flags) ? 8 : 4;
  // Virtual machines often report speed 0 through os.cpus(); /proc/cpuinfo still has the clock.
  const megahertz = info[0]?.speed || Math.round(Number(/^cpu MHz\s*:\s*([\d.]+)/m.exec(cpuinfo)?.[1] ?? 0));
  return {
    cpu: info[0]?.model.trim() ?? "unknown",
    cores: info.length,
    megahertz,
    peakFlops: info.length * 2 * lanes * 2 * megahertz * 1e6,
    date: new Date().toISOString().slice(0, 10),
  };
}

/**
 * CPU seconds (user + system) of this process's main thread so far, from /proc (Node 20 has no per-thread CPU
 * clock; the event-loop utilisation API misreads uWebSockets.js's polling as busy time). 10 ms ticks; NaN off Linux.
 */
export function mainThreadCpuSeconds(): number {
  return statCpuSeconds(`/proc/self/task/${process.pid}/stat`);
}

/**
 * Seconds this process's main thread has spent on a CPU so far, from /proc's schedstat (nanoseconds, where
 * mainThreadCpuSeconds has 10 ms ticks: a run's few milliseconds per request are read to the microsecond); falls back
 * to mainThreadCpuSeconds where the kernel keeps no schedstat; NaN off Linux.
 */
export function mainThreadOnCpuSeconds(): number {
  try {
    const nanoseconds = Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]);
    if (Number.isFinite(nanoseconds)) return nanoseconds / 1e9;
  } catch {
    // no schedstat: the ticks below
  }
  return mainThreadCpuSeconds();
}

/**
 * CPU seconds (user + system, every thread) of another process so far, e.g. a server a bench started as a child,
 * from /proc. 10 ms ticks; NaN off Linux or once the process has exited.
 */
export function processCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** utime + stime of a /proc stat file, in seconds. */
function statCpuSeconds(path: string): number {
  try {
    const stat = readFileSync(path, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return Number.NaN;
  }
}
