// The example systemd unit (deploy/systemd/loom.service) against `loom serve` as it is: its flags, the install
// layout `loom update` switches, and the exit statuses of a stop. Returns problems as messages (none: an empty list),
// so that a test can show each check finding a deliberately broken unit.
import { isAbsolute, join } from "node:path";
import { SERVE_OPTIONS } from "../server/cli/serve-command.js";
import { DEFAULT_DRAIN_SECONDS, EXIT_REQUESTS_CUT } from "../server/cli/stop-signals.js";

/** A unit file's `Key=value` lines by section (the last value of a key wins, as systemd's single-valued keys do). */
export type UnitFile = Map<string, Map<string, string>>;

/** Parses a unit file: sections, keys and values, comments and blank lines left out. */
export function parseUnit(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string> | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = new Map();
      unit.set(header[1]!, section);
      continue;
    }
    const equals = line.indexOf("=");
    if (section === undefined || equals < 1) throw new Error(`not a unit file line: ${line}`);
    section.set(line.slice(0, equals).trim(), line.slice(equals + 1).trim());
  }
  return unit;
}

/** Flags of `loom serve` that name files or folders: a service manager starts loom from a folder of its own choosing. */
const PATH_FLAGS = ["--data-dir", "--install-dir", "--config", "--model"];

/** systemd's time span in seconds (`60`, `60s`, `2min`, `1min 30s`), or undefined when it is not one. */
export function seconds(span: string): number | undefined {
  const units: Record<string, number> = { "": 1, s: 1, sec: 1, m: 60, min: 60, h: 3600 };
  let total = 0;
  for (const part of span.split(/\s+/)) {
    const match = /^(\d+)([a-z]*)$/.exec(part);
    if (!match || units[match[2]!] === undefined) return undefined;
    total += Number(match[1]) * units[match[2]!]!;
  }
  return total;
}

/** What is wrong with the unit as a way to run `loom serve` from an install (none: an empty list). */
export function unitProblems(unit: UnitFile): string[] {
  const service = unit.get("Service");
  if (service === undefined) return ["no [Service] section"];
  const problems: string[] = [];
  const start = service.get("ExecStart");
  let drainSeconds = DEFAULT_DRAIN_SECONDS;
  if (start === undefined) problems.push("no ExecStart");
  else {
    const [node, script, command, ...args] = start.split(/\s+/);
    if (!isAbsolute(node ?? "")) problems.push(`ExecStart: node must be an absolute path, not ${node}`);
    if (command !== "serve") problems.push(`ExecStart: the command must be serve, not ${command}`);
    const flags = new Map<string, string | true>();
    for (let index = 0; index < args.length; index++) {
      const flag = args[index]!;
      const name = flag.replace(/^--/, "");
      const option = (SERVE_OPTIONS as Record<string, { type: string }>)[name];
      if (!flag.startsWith("--") || option === undefined || name === "help") {
        problems.push(`ExecStart: loom serve takes no ${flag}`);
        continue;
      }
      if (option.type === "boolean") flags.set(flag, true);
      else if (args[index + 1] === undefined || args[index + 1]!.startsWith("--")) problems.push(`ExecStart: ${flag} needs a value`);
      else flags.set(flag, args[++index]!);
    }
    for (const flag of PATH_FLAGS) {
      const value = flags.get(flag);
      if (typeof value === "string" && !isAbsolute(value)) problems.push(`ExecStart: ${flag} ${value} is relative: the service manager's working folder decides what it names`);
    }
    if (flags.has("--no-auth")) problems.push("ExecStart: --no-auth serves without keys: not for a service");
    const dataDir = flags.get("--data-dir");
    const installDir = flags.get("--install-dir") ?? (typeof dataDir === "string" ? join(dataDir, "install") : undefined);
    if (typeof installDir !== "string") problems.push("ExecStart: no --install-dir (or --data-dir): loom update would find no process to restart");
    else if (script !== join(installDir, "current", "dist", "server", "cli", "main.js")) {
      problems.push(`ExecStart: runs ${script}, not the install's current release (${join(installDir, "current", "dist", "server", "cli", "main.js")}): a restart after an update would run the old version`);
    }
    const drain = flags.get("--drain-seconds");
    if (typeof drain === "string") drainSeconds = Number(drain);
  }
  const workingDirectory = service.get("WorkingDirectory");
  if (workingDirectory === undefined || !isAbsolute(workingDirectory)) problems.push(`WorkingDirectory must be an absolute folder, not ${workingDirectory ?? "unset"}`);
  if (service.get("Restart") !== "on-failure") problems.push(`Restart must be on-failure (a clean drained stop exits 0 and stays stopped), not ${service.get("Restart") ?? "unset"}`);
  const prevented = (service.get("RestartPreventExitStatus") ?? "").split(/\s+/);
  if (!prevented.includes(String(EXIT_REQUESTS_CUT))) problems.push(`RestartPreventExitStatus must hold ${EXIT_REQUESTS_CUT} (a drain that cut requests: during an update, apply starts the new version itself)`);
  const signal = service.get("KillSignal") ?? "SIGTERM";
  if (signal !== "SIGTERM" && signal !== "SIGINT") problems.push(`KillSignal ${signal} does not drain: use SIGTERM`);
  const timeout = seconds(service.get("TimeoutStopSec") ?? "90");
  if (timeout === undefined || timeout <= drainSeconds + 10) problems.push(`TimeoutStopSec must exceed --drain-seconds (${drainSeconds}) by more than 10 s, to commit usage and close the database after the drain`);
  return problems;
}
