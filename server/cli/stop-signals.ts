// How a long-running loom process (serve, gateway, worker) stops on SIGTERM or SIGINT: gracefully on the first signal,
// at once on a second, then exits with the signal's conventional status.
import { UsageError, parseInteger } from "../../engine/cli/arguments.js";
import type { DrainEnd } from "../http/drain.js";

/** The exit status after a stop on `signal`: 128 + its number (130 for SIGINT, 143 for SIGTERM). */
export function exitStatusOf(signal: NodeJS.Signals): number {
  return signal === "SIGINT" ? 130 : 143;
}

/** The default of --drain-seconds: how long a stopping process waits for the requests in flight. */
export const DEFAULT_DRAIN_SECONDS = 30;

/** --drain-seconds in milliseconds (default {@link DEFAULT_DRAIN_SECONDS}; 0: no wait). @throws UsageError */
export function drainMsOf(value: string | undefined): number {
  const seconds = parseInteger("--drain-seconds", value, DEFAULT_DRAIN_SECONDS, 0);
  // setTimeout fires at once past 2^31 ms (about 24 days).
  if (seconds > 24 * 3600) throw new UsageError(`--drain-seconds must be at most a day (86400), got ${seconds}`);
  return seconds * 1000;
}

/** Why a drain stopped waiting, for the log line that counts the requests it cut. */
export function describeDrainEnd(ended: DrainEnd, signal: NodeJS.Signals, drainMs: number): string {
  if (ended === "stopped") return `a second ${signal}`;
  return drainMs === 0 ? "--drain-seconds 0" : `--drain-seconds ${drainMs / 1000} passed`;
}

/**
 * On the first SIGTERM or SIGINT, runs `stop` (a graceful stop: it resolves once everything is closed); a second one
 * aborts the `hurry` signal `stop` got (stop waiting, close at once). Then the process exits 130 (SIGINT) or 143
 * (SIGTERM), or 1 when `stop` failed, after `onError` reported it.
 * NOTE: the handlers stay installed until the exit: without one, a second signal would kill the process at once,
 * before its parts are closed (pending usage committed, runs given back).
 */
export function stopOnSignals(stop: (hurry: AbortSignal, signal: NodeJS.Signals) => Promise<void>, onError: (error: Error) => void): void {
  const hurry = new AbortController();
  let first: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (first !== undefined) {
      hurry.abort();
      return;
    }
    first = signal;
    stop(hurry.signal, signal).then(
      () => process.exit(exitStatusOf(signal)),
      (error: unknown) => {
        onError(error as Error);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
