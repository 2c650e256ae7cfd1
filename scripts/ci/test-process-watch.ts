// vitest setup file: watches each test process's event loop (scripts/ci/event-loop-watch.ts), naming the test file
// and the hook or test that ran when the loop stood still.
import { afterEach, beforeAll, beforeEach, expect } from "vitest";
import { watchEventLoop } from "./event-loop-watch.js";

let file = expect.getState().testPath ?? "(a test file)";
let stage = "loading the file";
watchEventLoop(() => `${file}, up to ${stage}`);

beforeAll((suite) => {
  file = suite.file?.filepath ?? file;
  stage = "its beforeAll hooks";
});
beforeEach((context) => {
  stage = `test "${context.task.name}"`;
});
afterEach((context) => {
  stage = `the end of test "${context.task.name}"`;
});
