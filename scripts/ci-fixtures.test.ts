// .ci/run checks, before the suite runs, that the shared fixtures are there: its list must be the tests' own
// (SHARED_FIXTURE_FILES), and every shared file the tests and the test-model generator read must be on it.
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { SHARED_ROOT } from "../kernels/package-root.js";
import { FIXTURES, REPOSITORY_ROOT, SHARED_FIXTURE_FILES, fixtureFiles } from "../engine/testing/fixtures.js";
import { tokenizerSourceFiles } from "./tokenizer-files.js";

/** The files `.ci/run` requires, as written in its `for fixture in ...; do` list. */
function ciFixtureList(): string[] {
  const script = readFileSync(join(REPOSITORY_ROOT, ".ci", "run"), "utf8");
  const list = /^for fixture in ([^;]*);\s*do$/m.exec(script);
  if (!list) throw new Error(".ci/run has no `for fixture in ...; do` list");
  return list[1]!.split(/[\s\\]+/).filter((word) => word !== "");
}

describe("the CI's fixture check", () => {
  it("requires exactly the shared files the tests read", () => {
    expect([...ciFixtureList()].sort()).toEqual([...SHARED_FIXTURE_FILES].sort());
  });

  it("is the set of shared files behind the test fixtures and the test-model tokenizers", () => {
    const used = [...Object.values(FIXTURES), ...(["smollm2", "qwen3", "llama2-32k", "gemma3"] as const).flatMap(tokenizerSourceFiles)]
      .flatMap(fixtureFiles)
      .filter((path) => path.startsWith(SHARED_ROOT + sep))
      .map((path) => relative(SHARED_ROOT, path));
    expect([...new Set(used)].sort()).toEqual([...SHARED_FIXTURE_FILES].sort());
  });
});
