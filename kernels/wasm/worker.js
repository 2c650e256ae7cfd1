// Worker thread of the WebAssembly runtime: instantiates the kernel module over each shared memory it serves (one,
// or several for runtimes that share their threads), then loops: wait for a job (spinning briefly before sleeping),
// claim and run shares until none is left (see the protocol in control-block.js). Plain JavaScript: workers cannot
// load TypeScript when tests run the sources.
import { parentPort, workerData } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import {
  ACTIVE, ARGUMENTS_OFFSET, ARGUMENT_COUNT, COUNT, EXIT_KERNEL, FAILED, GENERATION, GRAIN, KERNEL, MEMORY, MESSAGE_BYTES,
  MESSAGE_LENGTH, MESSAGE_OFFSET, SHARE_CLAIM, SLEEPERS, SPIN_MICROSECONDS, shareStart,
} from "./control-block.js";

const { module, memories, control, index, kernelNames } = workerData;
// kernelsByMemory[m][k]: kernel k of the instance over memory m.
const kernelsByMemory = memories.map((memory) => {
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  return kernelNames.map((name) => instance.exports[name]);
});
const ints = new Int32Array(control);
const floats = new Float64Array(control);
const message = new Uint8Array(control, MESSAGE_OFFSET, MESSAGE_BYTES);
const encoder = new TextEncoder();

/** Calls fn with the job's arguments followed by (start, end), without allocating for common arities. */
function invoke(fn, argc, start, end) {
  const a = ARGUMENTS_OFFSET;
  switch (argc) {
    case 0: return fn(start, end);
    case 1: return fn(floats[a], start, end);
    case 2: return fn(floats[a], floats[a + 1], start, end);
    case 3: return fn(floats[a], floats[a + 1], floats[a + 2], start, end);
    case 4: return fn(floats[a], floats[a + 1], floats[a + 2], floats[a + 3], start, end);
    case 5: return fn(floats[a], floats[a + 1], floats[a + 2], floats[a + 3], floats[a + 4], start, end);
    case 6: return fn(floats[a], floats[a + 1], floats[a + 2], floats[a + 3], floats[a + 4], floats[a + 5], start, end);
    case 7: return fn(floats[a], floats[a + 1], floats[a + 2], floats[a + 3], floats[a + 4], floats[a + 5], floats[a + 6], start, end);
    case 8: return fn(floats[a], floats[a + 1], floats[a + 2], floats[a + 3], floats[a + 4], floats[a + 5], floats[a + 6], floats[a + 7], start, end);
    default: {
      const args = Array.from(floats.subarray(a, a + argc));
      args.push(start, end);
      return fn(...args);
    }
  }
}

/** Records the first failure of this job so the main thread can throw it. */
function fail(error) {
  if (Atomics.compareExchange(ints, FAILED, 0, 1) !== 0) return;
  const text = `worker ${index + 1}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  const { written } = encoder.encodeInto(text, message);
  Atomics.store(ints, MESSAGE_LENGTH, written);
}

/** Leaves the ACTIVE count, waking the main thread if it was the last one. */
function leave() {
  if (Atomics.sub(ints, ACTIVE, 1) === 1) Atomics.notify(ints, ACTIVE);
}

// NOTE: read the generation before reporting ready: the first job may be published the moment "ready" arrives.
let seen = Atomics.load(ints, GENERATION);
parentPort.postMessage("ready");

for (;;) {
  let generation = Atomics.load(ints, GENERATION);
  if (generation === seen) {
    const spinUntil = performance.now() + Atomics.load(ints, SPIN_MICROSECONDS) / 1000;
    let spins = 0;
    while ((generation = Atomics.load(ints, GENERATION)) === seen) {
      if ((++spins & 255) === 0 && performance.now() > spinUntil) {
        Atomics.add(ints, SLEEPERS, 1);
        Atomics.wait(ints, GENERATION, seen);
        Atomics.sub(ints, SLEEPERS, 1);
        spins = 0;
      }
    }
  }
  seen = generation;
  if (Atomics.load(ints, KERNEL) === EXIT_KERNEL) break;
  for (;;) {
    Atomics.add(ints, ACTIVE, 1);
    const claim = Atomics.add(ints, SHARE_CLAIM, 1);
    const share = claim & 0xffff;
    const shares = claim >>> 16;
    if (share >= shares) {
      leave();
      break;
    }
    // The claim synchronises with the main thread's store of SHARE_CLAIM, made after the job was written.
    const count = floats[COUNT];
    const grain = floats[GRAIN];
    try {
      invoke(kernelsByMemory[ints[MEMORY]][ints[KERNEL]], ints[ARGUMENT_COUNT], shareStart(count, grain, shares, share), shareStart(count, grain, shares, share + 1));
    } catch (error) {
      fail(error);
    }
    leave();
  }
}
