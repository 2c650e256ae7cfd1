// Waiting for the GPU without spinning a core. While any of its promises is pending (mapAsync, onSubmittedWorkDone,
// popErrorScope, createComputePipelineAsync, getCompilationInfo), Dawn's Node binding polls the device from a
// setImmediate loop (its AsyncRunner), so the event loop never blocks and the thread runs at 100% for the whole wait:
// on a CPU driver such as lavapipe, which runs the GPU work on its own threads, that busy loop takes a core from the
// work it waits for (and on any adapter it burns a core per token). gpuWait naps briefly between Dawn's polls instead.

/** How long each turn of the event loop sleeps while a GPU wait is pending: the most it delays noticing completion. */
const NAP_MS = 0.2;

const napCell = new Int32Array(new SharedArrayBuffer(4));
/** GPU waits pending now; the nap loop runs while there are any. */
let pending = 0;
/** A turn of the nap loop is scheduled. */
let napping = false;

function napLoop(): void {
  if (pending === 0) {
    napping = false;
    return;
  }
  Atomics.wait(napCell, 0, 0, NAP_MS); // a timed sleep: nothing ever notifies the cell
  setImmediate(napLoop);
}

/**
 * Resolves (or rejects) as `promise` does, a Dawn promise settled by polling: meanwhile every turn of the event loop
 * sleeps NAP_MS, so Dawn's polling loop costs little CPU. Other callbacks still run on every turn.
 */
export async function gpuWait<T>(promise: Promise<T>): Promise<T> {
  pending++;
  if (!napping) {
    napping = true;
    setImmediate(napLoop);
  }
  try {
    return await promise;
  } finally {
    pending--;
  }
}
