// Waits for the machine's cores to be idle before a timed run: on shared cores another tenant's test suite can take
// most of the CPU for minutes, and a run started then measures the tenant, not the engine. Reads /proc/stat (Linux).
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Idle and total jiffies of all cores so far, or undefined where /proc/stat is absent. */
function cpuJiffies(): { idle: number; total: number } | undefined {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number);
    // user nice system idle iowait irq softirq steal
    return { idle: fields[3] + fields[4], total: fields.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

/** The idle fraction of all cores over the next `milliseconds` (1 where it cannot be read). */
export async function idleFraction(milliseconds = 1000): Promise<number> {
  const before = cpuJiffies();
  await sleep(milliseconds);
  const after = cpuJiffies();
  if (before === undefined || after === undefined || after.total === before.total) return 1;
  return (after.idle - before.idle) / (after.total - before.total);
}

/**
 * Waits until the cores were at least `threshold` idle over one second, or `timeoutSeconds` passed; call it while
 * this process is idle itself. Returns the seconds waited and the last idle fraction seen.
 */
export async function waitForIdleCores(threshold: number, timeoutSeconds: number): Promise<{ waitedSeconds: number; idle: number }> {
  const start = performance.now();
  let idle = await idleFraction();
  while (idle < threshold && performance.now() - start < timeoutSeconds * 1000) idle = await idleFraction();
  return { waitedSeconds: (performance.now() - start) / 1000, idle };
}
