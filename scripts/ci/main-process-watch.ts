// vitest global setup: watches the event loop of vitest's main process (scripts/ci/event-loop-watch.ts), which
// answers every test process's progress reports.
import { watchEventLoop } from "./event-loop-watch.js";

const STARTED = Symbol.for("loom.mainProcessWatch");

/** Starts the watch, once: vitest calls this in its main process for each project. */
export default function setup(): void {
  const global = globalThis as { [STARTED]?: boolean };
  if (global[STARTED]) return;
  global[STARTED] = true;
  watchEventLoop(() => "vitest's main process");
}
