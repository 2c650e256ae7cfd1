// How a long-running loom process (serve, gateway, worker) stops on SIGTERM or SIGINT: gracefully on the first signal,
// at once on a second. It exits 0 when the drain was clean (every request in flight finished, everything closed), so
// that a service manager (systemd's Restart=on-failure) counts an ordinary stop as one, and non-zero otherwise.
import { UsageError, parseInteger } from "../../engine/cli/arguments.js";
import type { DrainEnd } from "../http/drain.js";

/** How a graceful stop went: the requests it cut (still running when the drain stopped waiting). */
export interface StopOutcome {
  cut: number;
}

/** Exit status of a stop that cut requests in flight (the drain timed out, or a second signal hurried it). */
export const EXIT_REQUESTS_CUT = 3;
/** Exit status of a stop whose closing failed (pending usage may not be committed: see the log). */
export const EXIT_CLOSE_FAILED = 1;

/** The exit status after a stop: 0 when clean, {@link EXIT_REQUESTS_CUT} or {@link EXIT_CLOSE_FAILED} when not. */
export function exitStatusOf(outcome: StopOutcome | Error): number {
  if (outcome instanceof Error) return EXIT_CLOSE_FAILED;
  return outcome.cut > 0 ? EXIT_REQUESTS_CUT : 0;
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
 * On the first SIGTERM or SIGINT, runs `stop` (a graceful stop: it resolves once everything is closed, saying how many
 * requests it cut); a second one aborts the `hurry` signal `stop` got (stop waiting, close at once). Then the process
 * exits with {@link exitStatusOf} the outcome (0 for a clean drain), after `onError` reported a failure.
 * NOTE: the handlers stay installed until the exit: without one, a second signal would kill the process at once,
 * before its parts are closed (pending usage committed, runs given back).
 */
export function stopOnSignals(stop: (hurry: AbortSignal, signal: NodeJS.Signals) => Promise<StopOutcome>, onError: (error: Error) => void): void {
  const hurry = new AbortController();
  let first: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (first !== undefined) {
      hurry.abort();
      return;
    }
    first = signal;
    stop(hurry.signal, signal).then(
      (outcome) => process.exit(exitStatusOf(outcome)),
      (error: unknown) => {
        onError(error as Error);
        process.exit(exitStatusOf(error instanceof Error ? error : new Error(String(error))));
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
