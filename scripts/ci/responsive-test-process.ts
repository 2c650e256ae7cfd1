// vitest setup file: keeps each test process answering vitest's RPC between tests, and names what stalls it.
// - Before each test it yields one turn of the event loop. A file whose tests await only synchronous work never
//   reaches the event loop otherwise, so its whole run is one stall (a file of model generation ran 327 s so), and
//   the replies to vitest's progress reports wait behind it until their 60 s timeout fails the run.
// - It watches the event loop (scripts/ci/event-loop-watch.ts), naming the file and the hook or test of a stall.
import { afterEach, beforeAll, beforeEach, expect } from "vitest";
import { watchEventLoop } from "./event-loop-watch.js";

// The real setImmediate, taken before any test can install fake timers.
const realSetImmediate = setImmediate;

let file = expect.getState().testPath ?? "(a test file)";
let stage = "loading the file";
watchEventLoop(() => `${file}, up to ${stage}`);

beforeAll((suite) => {
  file = suite.file?.filepath ?? file;
  stage = "its beforeAll hooks";
});
beforeEach(async (context) => {
  stage = `test "${context.task.name}"`;
  // setImmediate runs after the poll phase, where RPC replies (and other I/O) are read.
  await new Promise((resolve) => realSetImmediate(resolve));
});
afterEach((context) => {
  stage = `the end of test "${context.task.name}"`;
});
