// StrykerJS's configuration for `npm run test:mutation` (scripts/mutation/run.mjs): which files to mutate (the groups
// of scripts/mutation/groups.mjs that LOOM_MUTATION_GROUPS selects, all by default) and how. Vitest runs the tests
// under stryker.vitest.config.ts, which includes only the selected groups' test files. Not part of `npm test`.
import { groupsFromEnvironment } from "./scripts/mutation/groups.mjs";

const groups = groupsFromEnvironment();
/**
 * Reports are named after the groups run, so that one group's run leaves the others' reports in place; a run of some
 * files only (`--mutate`) is "<group>.partial", so that it leaves the group's whole report in place too.
 */
const partial = process.argv.some((arg) => arg === "--mutate" || arg === "-m" || arg.startsWith("--mutate="));
const label = `${process.env.LOOM_MUTATION_GROUPS ? groups.map((group) => group.name).join("+") : "all"}${partial ? ".partial" : ""}`;

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "stryker.vitest.config.ts", related: true },
  mutate: groups.flatMap((group) => group.mutate),
  // Vitest strips types without checking them: no need for Stryker's @ts-nocheck pass (which also chokes on the
  // AssemblyScript kernels' decorators).
  disableTypeChecks: false,
  // Each mutant runs only the tests that reached its code in the first, instrumented run.
  coverageAnalysis: "perTest",
  // Two cores shared by several people: one test process by default (`-- --concurrency 2` for two).
  concurrency: 1,
  // Tests on PostgreSQL, Redis and PGlite take seconds, and a loaded machine slows them: a mutant that still times
  // out after this is an infinite loop, which Stryker counts as killed ("timeout").
  timeoutMS: 20_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 20,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: `reports/mutation/${label}.html` },
  jsonReporter: { fileName: `reports/mutation/${label}.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  thresholds: { high: 90, low: 80, break: null },
  // Build outputs, caches and the docs site: nothing a selected test reads (the sandbox copies the rest).
  ignorePatterns: ["/reports", "/build", "/.cache", "/test-artifacts", "/.gl", "/.whl", "/docs", "/bench"],
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
};
