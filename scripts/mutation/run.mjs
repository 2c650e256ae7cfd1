// `npm run test:mutation`: StrykerJS over the mutation groups (scripts/mutation/groups.mjs), all of them or those
// named. Group names come first; every option after them goes to `stryker run` as it is. With `--mutate` and no group
// named, the groups holding the named files are selected, so that vitest runs only their tests.
// Usage: node scripts/mutation/run.mjs [group ...] [stryker options]
//   npm run test:mutation -- limits keys
//   npm run test:mutation -- --mutate server/platform/pricing.ts
//   npm run test:mutation -- callbacks --concurrency 2 --incremental
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { GROUPS_VARIABLE, MUTATION_GROUPS, groupsForPattern, selectGroups } from "./groups.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);
const usage = `Usage: npm run test:mutation -- [group ...] [stryker options]
  groups: ${MUTATION_GROUPS.map((group) => group.name).join(", ")} (all when none is named)
  e.g. --mutate server/platform/pricing.ts   one file (its group's tests), --concurrency 2, --incremental
`;
if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(usage);
  process.exit(0);
}

const firstOption = args.findIndex((arg) => arg.startsWith("-"));
const names = firstOption < 0 ? args : args.slice(0, firstOption);
const strykerArgs = firstOption < 0 ? [] : args.slice(firstOption);

let groups;
try {
  groups = selectGroups(names);
} catch (error) {
  process.stderr.write(`test:mutation: ${error.message}\n${usage}`);
  process.exit(2);
}
if (names.length === 0) {
  const mutate = mutateOption(strykerArgs);
  if (mutate !== undefined) {
    const matched = mutate.split(",").map((pattern) => groupsForPattern(pattern));
    // A pattern of no group (a glob, another file): every group's tests stay in, vitest's `related` narrows them.
    if (matched.every((found) => found.length > 0)) groups = [...new Set(matched.flat())];
  }
}

const env = { ...process.env };
if (groups.length < MUTATION_GROUPS.length) env[GROUPS_VARIABLE] = groups.map((group) => group.name).join(",");
else delete env[GROUPS_VARIABLE];
// Stryker runs the tests in a copy of the repository (.stryker-tmp/sandbox-*), where `../shared` is not beside it.
env.LOOM_SHARED_DIR ??= resolve(root, "..", "shared");

process.stdout.write(`test:mutation: groups ${groups.map((group) => group.name).join(", ")}\n`);
const stryker = join(root, "node_modules", "@stryker-mutator", "core", "bin", "stryker.js");
if (!existsSync(stryker)) {
  process.stderr.write("test:mutation: @stryker-mutator/core is not installed (npm install)\n");
  process.exit(1);
}
const child = spawn(process.execPath, [stryker, "run", "stryker.config.mjs", ...strykerArgs], { cwd: root, env, stdio: "inherit" });
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));

/** The value of `--mutate`/`-m` among Stryker's options, if given. */
function mutateOption(options) {
  for (let index = 0; index < options.length; index++) {
    const option = options[index];
    if (option === "--mutate" || option === "-m") return options[index + 1];
    if (option.startsWith("--mutate=")) return option.slice("--mutate=".length);
  }
  return undefined;
}
