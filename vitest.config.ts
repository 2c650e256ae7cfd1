import { defineConfig } from "vitest/config";

// Conformance and llama.cpp comparison tests load real models: give them room on a 2-core machine.
export default defineConfig({
  test: {
    include: ["engine/**/*.test.ts", "kernels/**/*.test.ts", "server/**/*.test.ts", "scripts/**/*.test.ts", "bench/**/*.test.ts", "deploy/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    fileParallelism: false,
  },
});
