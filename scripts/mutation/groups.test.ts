// The mutation groups (scripts/mutation/groups.mjs) name files that exist, each group has tests to run, and the
// selection by name, by environment and by a `--mutate` path finds the right groups; `npm test` never runs Stryker.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";
import { GROUPS_VARIABLE, MUTATION_GROUPS, groupsForPattern, groupsFromEnvironment, selectGroups } from "./groups.mjs";

/** The files a group's test entry names: the file itself, or `dir/*.test.ts`'s matches (the only glob used). */
function testFiles(entry: string): string[] {
  if (!entry.includes("*")) return existsSync(join(REPOSITORY_ROOT, entry)) ? [entry] : [];
  const folder = dirname(entry);
  const pattern = new RegExp(`^${entry.slice(folder.length + 1).replace(/\./g, "\\.").replace(/\*/g, "[^/]*")}$`);
  return readdirSync(join(REPOSITORY_ROOT, folder)).filter((name) => pattern.test(name)).map((name) => `${folder}/${name}`);
}

describe("the mutation groups", () => {
  it("have unique names and mutate existing source files, each in one group", () => {
    const names = MUTATION_GROUPS.map((group) => group.name);
    expect(new Set(names).size).toBe(names.length);
    const files = MUTATION_GROUPS.flatMap((group) => group.mutate);
    expect(new Set(files).size).toBe(files.length);
    for (const file of files) {
      expect(file, file).toMatch(/\.ts$/);
      expect(file, file).not.toMatch(/\.test\.ts$/);
      expect(existsSync(join(REPOSITORY_ROOT, file)), file).toBe(true);
    }
  });

  it("each have test files, and only globs of the form dir/*.test.ts", () => {
    for (const group of MUTATION_GROUPS) {
      for (const entry of group.tests.filter((test) => test.includes("*"))) expect(entry).toMatch(/^[^*]+\/\*\.test\.ts$/);
      expect(group.tests.flatMap(testFiles).length, group.name).toBeGreaterThan(0);
    }
  });

  it("are selected by name, all when none is named, and an unknown name is refused naming the known ones", () => {
    expect(selectGroups([]).map((group) => group.name)).toEqual(MUTATION_GROUPS.map((group) => group.name));
    expect(selectGroups(["keys", "limits"]).map((group) => group.name)).toEqual(["keys", "limits"]);
    expect(() => selectGroups(["key"])).toThrow(/unknown mutation group "key"; the groups are pricing, limits/);
    expect(groupsFromEnvironment({ [GROUPS_VARIABLE]: " usage, release " }).map((group) => group.name)).toEqual(["usage", "release"]);
    expect(groupsFromEnvironment({ [GROUPS_VARIABLE]: "" })).toHaveLength(MUTATION_GROUPS.length);
  });

  it("are found from a --mutate file, folder or line range; a glob or another file finds none", () => {
    const names = (pattern: string) => groupsForPattern(pattern).map((group) => group.name);
    expect(names("server/platform/pricing.ts")).toEqual(["pricing"]);
    expect(names("./server/platform/limits/gcra.ts:10-20")).toEqual(["limits"]);
    expect(names("server/platform/store/key-secret.ts:5:1-9:4")).toEqual(["keys"]);
    expect(names("server/machines/")).toEqual(["payments"]);
    expect(names("server/platform/store")).toEqual(["keys", "usage", "callbacks"]);
    expect(names("server/platform/limits/*.ts")).toEqual([]);
    expect(names("server/platform/pricing")).toEqual([]);
    expect(names("server/http/body.ts")).toEqual([]);
  });

  it("are left out of npm test: only test:mutation runs Stryker", () => {
    const scripts = JSON.parse(readFileSync(join(REPOSITORY_ROOT, "package.json"), "utf8")).scripts as Record<string, string>;
    expect(scripts["test:mutation"]).toBe("node scripts/mutation/run.mjs");
    for (const [name, command] of Object.entries(scripts)) if (name !== "test:mutation") expect(command, name).not.toMatch(/stryker|mutation/);
    expect(readFileSync(join(REPOSITORY_ROOT, ".ci", "run"), "utf8")).not.toMatch(/stryker|test:mutation/);
  });
});
