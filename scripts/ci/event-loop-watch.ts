// Reports where a process's event loop stood still for long. vitest's test processes report progress to its main
// process over RPC calls that time out after 60 s of the caller's timers, so synchronous work that long on either
// side (shader compilation on a crowded lavapipe, a large synchronous load) fails the run with an unattributed
// `[vitest-worker]: Timeout calling "onTaskUpdate"`. The watch says which process stalled, for how long, and where.

const TICK_MS = 250;
/** Stalls at least this long are reported (LOOM_EVENT_LOOP_WARN_MS overrides). */
const WARN_MS = Number(process.env.LOOM_EVENT_LOOP_WARN_MS) || 15_000;

/**
 * Writes a line to stderr after each stall of the event loop of at least WARN_MS.
 * @param where says which process and what it was doing, read when a stall ends.
 */
export function watchEventLoop(where: () => string): void {
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const stalled = now - last - TICK_MS;
    last = now;
    if (stalled >= WARN_MS) process.stderr.write(`[event-loop-watch] ${where()}: the event loop stood still ${(stalled / 1000).toFixed(1)} s\n`);
  }, TICK_MS).unref();
}
