import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Test files run in parallel, each in a process of its own and isolated (ports from 0, its own databases, schemas,
// data dirs and Redis key prefixes). Most of a file's time is spent waiting (on child processes, sockets, a model
// worker's thread), so two files per core keep the cores busy; LOOM_TEST_WORKERS overrides the count.
const workers = Number(process.env.LOOM_TEST_WORKERS) || Math.min(8, 2 * availableParallelism());

// Files that need the machine to themselves: a browser driving the dashboard, and clusters of loom processes whose
// timing (drains, rolling restarts) a crowded machine would distort. They run one after another, after the rest.
const WHOLE_MACHINE = [
  "server/dashboard/dashboard.browser.test.ts",
  "server/cluster/cluster.test.ts",
  "server/cluster/worker-drain.test.ts",
  "server/release/update-rolling.test.ts",
];

const INCLUDE = [
  "engine/**/*.test.ts",
  "kernels/**/*.test.ts",
  "server/**/*.test.ts",
  "scripts/**/*.test.ts",
  "bench/**/*.test.ts",
  "deploy/**/*.test.ts",
  "docs/**/*.test.ts",
];

export default defineConfig({
  test: {
    // Conformance and llama.cpp comparison tests load real models: give them room on a 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    // Keep test processes answering vitest's RPC between tests, and name the process, file and test behind any long
    // stall of an event loop (scripts/ci/responsive-test-process.ts, scripts/ci/main-process-watch.ts).
    globalSetup: ["scripts/ci/main-process-watch.ts"],
    setupFiles: ["scripts/ci/responsive-test-process.ts"],
    maxWorkers: workers,
    minWorkers: 1,
    projects: [
      { extends: true, test: { name: "parallel", include: INCLUDE, exclude: [...WHOLE_MACHINE, "**/node_modules/**"], sequence: { groupOrder: 0 } } },
      // groupOrder runs each of these after the one before, alone: one project per file.
      ...WHOLE_MACHINE.map((file, index) => ({
        extends: true as const,
        test: { name: file.replace(/^.*\//, "").replace(/\.test\.ts$/, ""), include: [file], sequence: { groupOrder: index + 1 } },
      })),
    ],
  },
});
