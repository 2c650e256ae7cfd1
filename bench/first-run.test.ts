import { describe, expect, it } from "vitest";
import { childEnvironment, formatFirstRunTable, parseFirstRunArgs } from "./first-run.js";

describe("parseFirstRunArgs", () => {
  it("defaults to HEAD once, port 8080, offline", () => {
    expect(parseFirstRunArgs([])).toEqual({ commits: ["HEAD"], repeat: 1, port: 8080, offline: true, timeoutSeconds: 900 });
  });

  it("takes a list of commits, repeats, a port, --no-offline and a timeout", () => {
    expect(parseFirstRunArgs(["--commits", "HEAD~3, abc1234,", "--repeat", "3", "--port", "9090", "--no-offline", "--timeout", "300"]))
      .toEqual({ commits: ["HEAD~3", "abc1234"], repeat: 3, port: 9090, offline: false, timeoutSeconds: 300 });
  });

  it("refuses bad values and unknown flags", () => {
    expect(() => parseFirstRunArgs(["--repeat", "0"])).toThrow(/--repeat must be an integer from 1/);
    expect(() => parseFirstRunArgs(["--port", "http"])).toThrow(/--port/);
    expect(() => parseFirstRunArgs(["--commits", ","])).toThrow(/no revision/);
    expect(() => parseFirstRunArgs(["--commit", "HEAD"])).toThrow();
  });
});

describe("formatFirstRunTable", () => {
  const run = (commit: string, n: number, install: number, firstAnswer: number, secondAnswer: number) =>
    ({ commit, run: n, install, firstHealth: firstAnswer - 1, firstAnswer, secondAnswer, model: "service/tim-stories260k-27b" });

  it("prints a row per run, install + start as the total", () => {
    expect(formatFirstRunTable([run("4c89a87 (2026-11-29)", 1, 47.04, 95.5, 40.25)], 1)).toEqual([
      "| commit | run | npm install s | npm start to /health 200 s | npm start to first 200 s | install + start s | second npm start to first 200 s | model answering |",
      "|---|---|---|---|---|---|---|---|",
      "| 4c89a87 (2026-11-29) | 1/1 | 47.0 | 94.5 | 95.5 | 142.5 | 40.3 | service/tim-stories260k-27b |",
    ]);
  });

  it("adds each column's median after a commit's repeats", () => {
    const lines = formatFirstRunTable([run("a", 1, 40, 100, 30), run("a", 2, 60, 80, 50), run("a", 3, 50, 200, 40), run("b", 1, 10, 10, 10)], 3);
    expect(lines.slice(2)).toEqual([
      "| a | 1/3 | 40.0 | 99.0 | 100.0 | 140.0 | 30.0 | service/tim-stories260k-27b |",
      "| a | 2/3 | 60.0 | 79.0 | 80.0 | 140.0 | 50.0 | service/tim-stories260k-27b |",
      "| a | 3/3 | 50.0 | 199.0 | 200.0 | 250.0 | 40.0 | service/tim-stories260k-27b |",
      "| a | median | 50.0 | 99.0 | 100.0 | 140.0 | 40.0 |  |",
      "| b | 1/3 | 10.0 | 9.0 | 10.0 | 20.0 | 10.0 | service/tim-stories260k-27b |",
    ]);
  });
});

describe("childEnvironment", () => {
  it("drops LOOM_* settings and npm's run variables, keeps the shared folder, and points the caches and the Hub", () => {
    const env = childEnvironment(
      { PATH: "/usr/bin", HOME: "/root", LOOM_MODEL: "/m.gguf", LOOM_API_KEYS: "k", LOOM_SHARED_DIR: "/work/shared", npm_lifecycle_event: "bench", HF_ENDPOINT: "https://mirror" },
      { cacheDir: "/tmp/x/cache", dataDir: "/tmp/x/data", hfEndpoint: "http://127.0.0.1:1" },
    );
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/root", LOOM_SHARED_DIR: "/work/shared", HF_ENDPOINT: "http://127.0.0.1:1", LOOM_CACHE_DIR: "/tmp/x/cache", LOOM_DATA_DIR: "/tmp/x/data" });
    expect(childEnvironment({ HF_ENDPOINT: "https://mirror" }, { cacheDir: "c", dataDir: "d" }).HF_ENDPOINT).toBe("https://mirror");
  });
});
