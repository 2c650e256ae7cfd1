// Moving the running loom processes of an install from one package root to another. Two ways:
// - stop, then start (`restartInPlace`): every process drains and exits before the new ones start (the embedded
//   database admits one process, and the data is backed up and migrated in between);
// - one at a time (`rollProcesses`): workers drain and restart one by one (the gateways send their work to the
//   others meanwhile); gateways and servers start their replacement first, on the same port (SO_REUSEPORT), and
//   drain once it is healthy, so the address never stops answering.
import type { InstallLayout } from "./layout.js";
import { type StartedProcess, processEnvironment, startProcess, stopProcess, waitHealthy } from "./process-control.js";
import type { RunningProcess } from "./running-processes.js";
import type { InstalledVersion } from "./update-journal.js";

/** How long processes have to drain and to become healthy, and where progress goes. */
export interface SwitchTiming {
  drainMs: number;
  healthMs: number;
  onProgress: (line: string) => void;
}

/** A process to start again: how it was started, and the environment it had. */
export interface ProcessToStart {
  like: RunningProcess;
  environment: NodeJS.ProcessEnv;
}

/** Captures each process's environment (before it is stopped: /proc forgets it). */
export function processesToStart(processes: readonly RunningProcess[]): ProcessToStart[] {
  return processes.map((like) => ({ like, environment: processEnvironment(like.pid) ?? process.env }));
}

/**
 * Stops every process (they drain in parallel).
 * @throws Error (the first failure) once every stop has ended, so that none is still draining when the caller acts.
 */
export async function stopAll(processes: readonly RunningProcess[], timing: SwitchTiming): Promise<void> {
  const results = await Promise.allSettled(processes.map(async (running) => {
    timing.onProgress(`stopping ${running.role} ${running.pid} (${running.version}): draining for up to ${timing.drainMs / 1000} s`);
    const how = await stopProcess(running.pid, timing.drainMs);
    timing.onProgress(`${running.role} ${running.pid} ${how === "killed" ? "did not exit in time and was killed" : "stopped"}`);
  }));
  const failure = results.find((result) => result.status === "rejected");
  if (failure !== undefined) throw (failure as PromiseRejectedResult).reason;
}

/**
 * Starts each process from `to` and waits until all are healthy.
 * @returns the processes started.
 * @throws Error (the first failure) after stopping the ones it started.
 */
export async function startAll(layout: InstallLayout, toStart: readonly ProcessToStart[], to: InstalledVersion, timing: SwitchTiming): Promise<RunningProcess[]> {
  const started: StartedProcess[] = toStart.map(({ like, environment }) => startProcess(layout, like, to.root, to.version, environment));
  for (const process_ of started) timing.onProgress(`started ${to.version} as process ${process_.pid} (log ${process_.log})`);
  const results = await Promise.allSettled(started.map((process_) => waitHealthy(layout, process_, to.version, timing.healthMs)));
  const failure = results.find((result) => result.status === "rejected");
  if (failure !== undefined) {
    await Promise.all(started.map((process_) => stopProcess(process_.pid, 0, 2000)));
    throw (failure as PromiseRejectedResult).reason;
  }
  const healthy = results.map((result) => (result as PromiseFulfilledResult<RunningProcess>).value);
  for (const process_ of healthy) timing.onProgress(`${process_.role} ${process_.pid} runs ${to.version} and is healthy at ${process_.url}`);
  return healthy;
}

/** The order of a rolling update: workers first, then servers and gateways. */
export function rollingOrder(processes: readonly RunningProcess[]): RunningProcess[] {
  const rank = (process_: RunningProcess) => (process_.role === "worker" ? 0 : process_.role === "serve" ? 1 : 2);
  return [...processes].sort((a, b) => rank(a) - rank(b));
}

/**
 * Moves each process to `to`, one at a time, in rollingOrder.
 * @returns the processes replaced so far; on failure `failure` says why (the process whose replacement failed runs
 * its old version: a gateway or server was never stopped, a worker is started again from its old root).
 */
export async function rollProcesses(layout: InstallLayout, processes: readonly RunningProcess[], to: InstalledVersion, timing: SwitchTiming): Promise<{ replaced: ProcessToStart[]; failure?: Error }> {
  const replaced: ProcessToStart[] = [];
  for (const running of rollingOrder(processes)) {
    const [entry] = processesToStart([running]);
    try {
      if (running.role === "worker") {
        // Drain first: gateways send new work to the other workers meanwhile.
        await stopAll([running], timing);
        replaced.push(entry!);
        await startAll(layout, [entry!], to, timing);
      } else {
        // Its replacement listens on the same port before it stops listening.
        await startAll(layout, [entry!], to, timing);
        replaced.push(entry!);
        await stopAll([running], timing);
      }
    } catch (error) {
      let failure = error as Error;
      if (running.role === "worker" && replaced.includes(entry!)) {
        // It was stopped before its replacement failed: start it again as it was, so no capacity is lost.
        const old = { version: running.version, root: running.root };
        await startAll(layout, [entry!], old, timing).catch((again: Error) => {
          failure = new Error(`${failure.message}; starting worker ${running.pid}'s ${old.version} again failed too: ${again.message}`);
        });
        replaced.pop();
      }
      return { replaced, failure };
    }
  }
  return { replaced };
}
