// How serve, gateway and worker exit after SIGTERM or SIGINT, in real processes running the built stop-signals.js: 0
// after a clean drain (a service manager's Restart=on-failure must not count it as a failure), 3 when requests were
// cut, 1 when closing failed; a second signal hurries the stop instead of killing the process.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { builtModule } from "../platform/db/testing/race-processes.js";
import { EXIT_CLOSE_FAILED, EXIT_REQUESTS_CUT, exitStatusOf } from "./stop-signals.js";

const BUILT = join(REPOSITORY_ROOT, "dist", "server", "cli", "stop-signals.js");
const reason = existsSync(BUILT) ? undefined : `${BUILT} is missing: run \`npm run build\` first`;

/**
 * Runs a process whose stop is `stop` (the body of an async function of `hurry`, returning a StopOutcome), sends it
 * `signals` (the second after it said it was stopping), and resolves with its exit status and stdout.
 */
function stopped(stop: string, signals: NodeJS.Signals[]): Promise<{ code: number | null; out: string }> {
  const script = `import { stopOnSignals } from ${builtModule("server", "cli", "stop-signals.js")};
stopOnSignals(async (hurry) => { console.log("stopping"); ${stop} }, (error) => console.log("failed: " + error.message));
setInterval(() => {}, 1000);
console.log("ready");`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  return new Promise((resolve) => {
    child.stdout!.on("data", (chunk) => {
      const before = out;
      out += chunk;
      if (!before.includes("ready") && out.includes("ready")) child.kill(signals[0]);
      if (!before.includes("stopping") && out.includes("stopping") && signals[1] !== undefined) child.kill(signals[1]);
    });
    child.once("exit", (code) => resolve({ code, out }));
  });
}

describe("exitStatusOf", () => {
  it("is 0 for a clean drain, and not 0 for one that cut requests or failed to close", () => {
    expect(exitStatusOf({ cut: 0 })).toBe(0);
    expect(exitStatusOf({ cut: 2 })).toBe(EXIT_REQUESTS_CUT);
    expect(exitStatusOf(new Error("the database did not close"))).toBe(EXIT_CLOSE_FAILED);
    expect(new Set([EXIT_REQUESTS_CUT, EXIT_CLOSE_FAILED, 0]).size).toBe(3);
  });
});

describe.skipIf(skipOutsideCi(reason))(titled("a stopping process's exit status", reason), () => {
  it("exits 0 after SIGTERM and after SIGINT when the drain was clean", async () => {
    failIfMissing(reason);
    expect(await stopped("return { cut: 0 };", ["SIGTERM"])).toMatchObject({ code: 0 });
    expect(await stopped("return { cut: 0 };", ["SIGINT"])).toMatchObject({ code: 0 });
  });

  it("exits 3 when a second signal hurried a drain that then cut requests", async () => {
    const result = await stopped("await new Promise((resolve) => hurry.addEventListener('abort', resolve)); return { cut: 1 };", ["SIGTERM", "SIGTERM"]);
    expect(result.code).toBe(EXIT_REQUESTS_CUT);
  });

  it("exits 1, after reporting it, when closing failed", async () => {
    const result = await stopped("throw new Error('the database did not close');", ["SIGTERM"]);
    expect(result).toEqual({ code: EXIT_CLOSE_FAILED, out: "ready\nstopping\nfailed: the database did not close\n" });
  });
});
