// What `loom update apply` and `rollback` do first with an update a crash cut off: recover it (update-journal.ts),
// then start again, from the version `current` names, the processes the journal says were running and that no longer
// are (the cut-off update had stopped them), and wait until they are healthy. A recovery that cannot start them fails,
// saying what the operator must start: it never reports a service that is not running as recovered.
import { installedVersion } from "./installed-version.js";
import { type InstallLayout, currentRoot } from "./layout.js";
import { cliOf } from "./process-control.js";
import { type RunningProcess, runningProcesses } from "./running-processes.js";
import { type SwitchTiming, startAll } from "./switch-processes.js";
import { type RecoveredUpdate, recoverInterruptedUpdate } from "./update-journal.js";

/** A recovery and the processes it started. */
export interface RecoveryRestart {
  recovered: RecoveredUpdate;
  /** The processes started again, healthy. */
  restarted: RunningProcess[];
}

/**
 * Recovers a cut-off update and starts what it had stopped (see the file's comment). Call it holding the update lock.
 * The processes get this process's environment: the one they had is gone with them.
 * @returns undefined when no update was cut off.
 * @throws Error naming each process to start by hand (its folder and command line) when the journal does not say
 * what was running, or a start or health check failed.
 */
export async function recoverAndRestart(layout: InstallLayout, timing: SwitchTiming): Promise<RecoveryRestart | undefined> {
  const recovered = await recoverInterruptedUpdate(layout);
  if (recovered === undefined) return undefined;
  timing.onProgress(recovered.said);
  const current = currentRoot(layout);
  const listed = recovered.journal.processes;
  if (listed === undefined) {
    throw new Error(`${recovered.said}; its journal (written by an older loom) does not say which loom processes were running, so none was started: start them from ${current === undefined ? "the package loom runs from" : cliOf(current)} (e.g. your service manager's loom serve), then run this command again`);
  }
  const missing = stoppedProcesses(listed, runningProcesses(layout));
  if (missing.length === 0) {
    timing.onProgress(listed.length === 0 ? "no loom process was running when the update began" : "the processes that were running still run");
    return { recovered, restarted: [] };
  }
  try {
    if (current === undefined) throw new Error(`${layout.current} names no version`);
    const version = installedVersion(current);
    const restarted = await startAll(layout, missing.map((like) => ({ like, environment: process.env })), version, timing);
    return { recovered, restarted };
  } catch (error) {
    const commands = missing.map((like) => `cd ${like.cwd} && ${like.execPath} ${cliOf(current ?? like.root)} ${like.argv.join(" ")}`);
    throw new Error(`${recovered.said}; starting the processes it had stopped failed: ${(error as Error).message}\nstart them yourself (with their environment: LOOM_CLUSTER_TOKEN, LOOM_DATABASE_URL, ...), then run this command again:\n  ${commands.join("\n  ")}`);
  }
}

/**
 * Those of `listed` that no live record of the install (`running`) shows: neither the process itself (a pid reused
 * by another program has no record) nor one of the same role at the same address (started since, e.g. by a service
 * manager).
 */
export function stoppedProcesses(listed: readonly RunningProcess[], running: readonly RunningProcess[]): RunningProcess[] {
  return listed.filter((process_) => !running.some((other) => other.pid === process_.pid || (other.role === process_.role && other.url === process_.url)));
}
