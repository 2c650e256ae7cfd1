// A vitest reporter for mutation runs (stryker.vitest.config.ts): a test file that fails outside its tests (while it
// loads, in a describe body, in a file-level hook) gets one failed test carrying the file's error. StrykerJS's vitest
// runner counts only failed tests, and such a file reports none (no tests, or tests skipped), so a mutant that breaks
// the code a test file runs as it loads (release keys made at the top of a file, say) would count as survived.
import type { RunnerTask, RunnerTestCase, RunnerTestFile } from "vitest";
import type { Reporter } from "vitest/reporters";

/** Adds a failed test "(loading the file)" to each failed file none of whose tests failed. */
export class LoadFailuresFailTests implements Reporter {
  onFinished(files: RunnerTestFile[] = []): void {
    for (const file of files) {
      if (file.result?.state !== "fail" || testsOf(file).some((test) => test.result?.state === "fail")) continue;
      const errors = file.result.errors?.length ? file.result.errors : [{ name: "Error", message: `${file.name} failed outside its tests` }];
      const failed = { type: "test", id: `${file.id}_load`, name: "(loading the file)", mode: "run", file, meta: {}, timeout: 0, annotations: [], result: { state: "fail", errors } };
      file.tasks.push(failed as unknown as RunnerTestCase);
    }
  }
}

function testsOf(task: RunnerTask): RunnerTestCase[] {
  if (task.type === "test") return [task];
  return "tasks" in task ? task.tasks.flatMap(testsOf) : [];
}
