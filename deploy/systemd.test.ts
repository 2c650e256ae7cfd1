// The example systemd unit: consistent with `loom serve`'s flags, the install layout `loom update` switches and the
// exit statuses of a stop; each check is also run on a copy broken on purpose, so a check that stopped finding
// anything would fail here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEPLOY_DIR } from "./manifests.js";
import { parseUnit, seconds, unitProblems } from "./systemd-checks.js";

const text = readFileSync(join(DEPLOY_DIR, "systemd", "loom.service"), "utf8");

/** The unit with `key`'s line in [Service] replaced by `line` (undefined: removed). */
function changed(key: string, line: string | undefined): string {
  const pattern = new RegExp(`^${key}=.*$`, "m");
  expect(text).toMatch(pattern);
  return text.replace(pattern, line ?? "");
}

describe("deploy/systemd/loom.service", () => {
  it("passes every check", () => {
    expect(unitProblems(parseUnit(text))).toEqual([]);
  });

  const start = parseUnit(text).get("Service")!.get("ExecStart")!;
  const broken: Array<[string, string, string]> = [
    ["an unknown flag", changed("ExecStart", `ExecStart=${start} --drain 30`), "loom serve takes no --drain"],
    ["a relative --data-dir", changed("ExecStart", `ExecStart=${start.replace("--data-dir /var/lib/loom/data", "--data-dir data")}`), "--data-dir data is relative"],
    ["a flag without its value", changed("ExecStart", `ExecStart=${start} --port`), "--port needs a value"],
    ["--no-auth", changed("ExecStart", `ExecStart=${start} --no-auth`), "--no-auth serves without keys"],
    ["the package instead of the install's current release", changed("ExecStart", `ExecStart=${start.replace("/var/lib/loom/install/current", "/opt/loom")}`), "not the install's current release"],
    ["another install folder than the one it runs from", changed("ExecStart", `ExecStart=${start.replace("--install-dir /var/lib/loom/install", "--install-dir /srv/loom")}`), "not the install's current release"],
    ["Restart=always", changed("Restart", "Restart=always"), "Restart must be on-failure"],
    ["a cut drain restarted", changed("RestartPreventExitStatus", undefined), "RestartPreventExitStatus must hold 3"],
    ["SIGKILL to stop", changed("KillSignal", "KillSignal=SIGKILL"), "KillSignal SIGKILL does not drain"],
    ["a stop timeout within the drain", changed("TimeoutStopSec", "TimeoutStopSec=35s"), "TimeoutStopSec must exceed --drain-seconds (30)"],
    ["a relative working folder", changed("WorkingDirectory", "WorkingDirectory=loom"), "WorkingDirectory must be an absolute folder"],
  ];
  for (const [what, unit, problem] of broken) {
    it(`finds ${what}`, () => {
      expect(unitProblems(parseUnit(unit)).join("\n")).toContain(problem);
    });
  }

  it("reads systemd's time spans", () => {
    expect([seconds("60"), seconds("60s"), seconds("2min"), seconds("1min 30s"), seconds("soon")]).toEqual([60, 60, 120, 90, undefined]);
  });
});
