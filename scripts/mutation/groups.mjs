// The module groups that mutation testing (StrykerJS, `npm run test:mutation`) covers: code where a silent bug costs
// money or access, each group with the source files it mutates and the test files that may kill its mutants. Read by
// stryker.config.mjs (what to mutate), stryker.vitest.config.ts (which tests vitest may run) and scripts/mutation/run.mjs.

/**
 * @typedef {object} MutationGroup
 * @property {string} name the group's name on the command line (`npm run test:mutation -- limits`)
 * @property {string} title what the group guards, for reports
 * @property {string[]} mutate source files, relative to the repository root
 * @property {string[]} tests test files or globs (vitest's include) whose tests may kill the group's mutants; Stryker
 *   then runs, for each mutant, only the tests that reached its code
 */

/** @type {readonly MutationGroup[]} */
export const MUTATION_GROUPS = Object.freeze([
  {
    name: "pricing",
    title: "Prices and the cost of a request",
    mutate: ["server/platform/pricing.ts"],
    tests: ["server/platform/pricing.test.ts", "server/platform/accounting.test.ts"],
  },
  {
    name: "limits",
    title: "Rate and daily limits (GCRA buckets, memory and Redis stores, headers)",
    mutate: [
      "server/platform/limits/buckets.ts",
      "server/platform/limits/daily.ts",
      "server/platform/limits/gcra.ts",
      "server/platform/limits/headers.ts",
      "server/platform/limits/memory-store.ts",
      "server/platform/limits/outcome.ts",
      "server/platform/limits/redis-script.ts",
      "server/platform/limits/redis-store.ts",
      "server/platform/limits/seeds.ts",
    ],
    tests: ["server/platform/limits/*.test.ts"],
  },
  {
    name: "keys",
    title: "Key authentication and key secrets",
    mutate: ["server/platform/keys/key-authenticator.ts", "server/platform/store/key-secret.ts"],
    tests: ["server/platform/keys/*.test.ts", "server/platform/store/key-secret.test.ts", "server/platform/store/key-store.test.ts"],
  },
  {
    name: "usage",
    title: "Usage writing (group commit of usage rows and credit settlement)",
    mutate: ["server/platform/store/usage-writer.ts"],
    tests: ["server/platform/store/usage-writer.test.ts"],
  },
  {
    name: "payments",
    title: "The x402 payment gate, checkout, its per-payer queue and its reading of the chain",
    mutate: ["server/machines/payment-gate.ts", "server/machines/checkout.ts", "server/machines/payer-queue.ts", "server/machines/chain-state.ts"],
    tests: ["server/machines/*.test.ts"],
  },
  {
    name: "callbacks",
    title: "Run callbacks: the signature, the signing secrets and the signed body",
    mutate: [
      "server/runs/callbacks/callback-signing.ts",
      "server/runs/callbacks/callback-secrets.ts",
      "server/runs/callbacks/callback-payload.ts",
      "server/platform/store/webhook-secret-store.ts",
    ],
    tests: ["server/runs/callbacks/*.test.ts", "server/platform/store/webhook-secret-store.test.ts"],
  },
  {
    name: "release",
    title: "Release verification (keys, DSSE envelopes, manifests, verified fetches)",
    mutate: [
      "server/release/keys.ts",
      "server/release/dsse.ts",
      "server/release/manifest.ts",
      "server/release/model-manifest.ts",
      "server/release/check-updates.ts",
      "server/release/fetch-model.ts",
      "server/release/hashed-file.ts",
    ],
    tests: [
      "server/release/keys.test.ts",
      "server/release/dsse.test.ts",
      "server/release/manifest.test.ts",
      "server/release/model-manifest.test.ts",
      "server/release/release.test.ts",
      "server/release/model-release.test.ts",
    ],
  },
  {
    name: "prefix-index",
    title: "The KV cache's prefix index",
    mutate: ["engine/kv/prefix-index.ts"],
    tests: ["engine/kv/*.test.ts"],
  },
]);

/** The environment variable naming the selected groups (comma-separated), set by scripts/mutation/run.mjs. */
export const GROUPS_VARIABLE = "LOOM_MUTATION_GROUPS";

/**
 * The groups `names` selects (all of them when empty).
 * @param {readonly string[]} names
 * @returns {MutationGroup[]}
 * @throws {Error} naming an unknown group and the known ones
 */
export function selectGroups(names) {
  if (names.length === 0) return [...MUTATION_GROUPS];
  return names.map((name) => {
    const group = MUTATION_GROUPS.find((candidate) => candidate.name === name);
    if (!group) throw new Error(`unknown mutation group "${name}"; the groups are ${MUTATION_GROUPS.map((known) => known.name).join(", ")}`);
    return group;
  });
}

/**
 * The groups the environment selects (`LOOM_MUTATION_GROUPS`, comma-separated; all when unset or empty).
 * @param {NodeJS.ProcessEnv} env
 * @returns {MutationGroup[]}
 */
export function groupsFromEnvironment(env = process.env) {
  const names = (env[GROUPS_VARIABLE] ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  return selectGroups(names);
}

/**
 * The groups holding the files a `--mutate` pattern names: a file of a group, or a folder above one (a line range
 * suffix, `file.ts:10-20`, is ignored). A glob matches nothing here, and the caller falls back to every group.
 * @param {string} pattern
 * @returns {MutationGroup[]}
 */
export function groupsForPattern(pattern) {
  const path = pattern.replace(/:\d+(:\d+)?-\d+(:\d+)?$/, "").replace(/^\.\//, "").replace(/\/+$/, "");
  return MUTATION_GROUPS.filter((group) => group.mutate.some((file) => file === path || file.startsWith(`${path}/`)));
}
