// Vitest's configuration under StrykerJS (`npm run test:mutation`): only the test files of the selected mutation groups
// (scripts/mutation/groups.mjs), none of vitest.config.ts's projects or whole-machine files. Stryker's vitest runner
// sets the pool (threads, one worker) and, with `related`, narrows these files to those importing the mutated code.
import { defineConfig } from "vitest/config";
import { groupsFromEnvironment } from "./scripts/mutation/groups.mjs";
import { LoadFailuresFailTests } from "./scripts/mutation/load-failures.js";

export default defineConfig({
  test: {
    include: [...new Set(groupsFromEnvironment().flatMap((group) => group.tests))],
    exclude: ["**/node_modules/**", ".stryker-tmp/**"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // A test file that fails as it loads fails a test, so that Stryker counts the mutant that broke it as killed.
    reporters: [new LoadFailuresFailTests()],
  },
});
