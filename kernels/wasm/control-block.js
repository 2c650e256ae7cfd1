// Layout of the shared control block through which the main thread hands kernel calls to worker threads.
// Plain JavaScript so that worker.js (which cannot load TypeScript under vitest) and runtime.ts share it.
//
// Protocol (one job at a time, published only by the main thread):
//   main:   writes MEMORY, KERNEL, ARGUMENT_COUNT, the arguments, COUNT and GRAIN; stores SHARE_CLAIM = shares << 16;
//           bumps GENERATION (notifying sleeping workers); then claims shares itself like any worker; once no
//           share is left it waits until ACTIVE is 0.
//   worker: wakes on a GENERATION change; repeatedly increments ACTIVE, claims a share with
//           Atomics.add(SHARE_CLAIM, 1) (low 16 bits: share index, high bits: share count, read in one atomic
//           step so a late worker can never pair a stale index with a new count), runs it, decrements ACTIVE.
// A worker that wakes late finds no share left: the main thread never waits for a descheduled or sleeping worker.

/** Int32 slot: bumped by the main thread to publish a new job; idle workers wait on it. */
export const GENERATION = 0;
/** Int32 slot: index of the kernel to run (into the module's function exports), or EXIT_KERNEL. */
export const KERNEL = 1;
/** Int32 slot: number of arguments before the split range. */
export const ARGUMENT_COUNT = 2;
/** Int32 slot: (share count << 16) | next share index to hand out. */
export const SHARE_CLAIM = 3;
/** Int32 slot: workers between "about to claim" and "done with the claimed share"; 0 notifies. */
export const ACTIVE = 4;
/** Int32 slot: non-zero once a worker's kernel has thrown during the current job. */
export const FAILED = 5;
/** Int32 slot: number of workers blocked in Atomics.wait (the main thread notifies only when non-zero). */
export const SLEEPERS = 6;
/** Int32 slot: byte length of the UTF-8 error message in the message area. */
export const MESSAGE_LENGTH = 7;
/** Int32 slot: microseconds a worker spins on GENERATION before it sleeps. */
export const SPIN_MICROSECONDS = 8;
/** Int32 slot: which of the workers' memories (and their instances over it) the job runs in. */
export const MEMORY = 9;
/** Int32 slots in the header (a multiple of 2, so the Float64 area that follows is aligned). */
export const HEADER_INTS = 16;

/** Kernel index that tells workers to leave their loop. */
export const EXIT_KERNEL = -1;
/** Most arguments a kernel may take before its split range. */
export const MAX_ARGUMENTS = 30;
/** Float64 index of the range length being split. */
export const COUNT = HEADER_INTS / 2;
/** Float64 index of the split grain. */
export const GRAIN = COUNT + 1;
/** Float64 index of the first argument. */
export const ARGUMENTS_OFFSET = GRAIN + 1;
/** Most shares one job is split into (share indices must fit the low 16 bits of SHARE_CLAIM). */
export const MAX_SHARES = 4096;
/** Bytes reserved for the first failing worker's error message. */
export const MESSAGE_BYTES = 2048;
/** Byte offset of the error message area. */
export const MESSAGE_OFFSET = (ARGUMENTS_OFFSET + MAX_ARGUMENTS) * 8;
/** Bytes of a control block. */
export const CONTROL_BLOCK_BYTES = MESSAGE_OFFSET + MESSAGE_BYTES;

/**
 * Where share `part` of `parts` begins when [0, count) is split into contiguous shares as equal as grain-aligned
 * boundaries allow (share p is [shareStart(p), shareStart(p + 1)); the last one ends at count).
 */
export function shareStart(count, grain, parts, part) {
  if (part >= parts) return count;
  const units = Math.ceil(count / grain);
  return Math.min(count, Math.floor((units * part) / parts) * grain);
}
