// vitest global setup: watches the event loop of vitest's main process (scripts/ci/event-loop-watch.ts), which
// answers every test process's progress reports.
import { watchEventLoop } from "./event-loop-watch.js";

/** Starts the watch; vitest calls this once in its main process. */
export default function setup(): void {
  watchEventLoop(() => "vitest's main process");
}
