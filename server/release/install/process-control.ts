// Stopping and starting loom processes for an update: a stop is SIGTERM (the process drains: it stops accepting,
// finishes its streams and runs, then exits) with SIGKILL after a deadline; a start runs a package root's CLI with the
// arguments, working folder and environment of the process it replaces, detached, its output in the install's logs.
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { get } from "node:http";
import { join } from "node:path";
import { processIsAlive } from "../../platform/db/data-dir-lock.js";
import type { InstallLayout } from "./layout.js";
import { type RunningProcess, runningProcess } from "./running-processes.js";

/** Where a package root's command line is. */
export function cliOf(root: string): string {
  return join(root, "dist", "server", "cli", "main.js");
}

/**
 * The environment process `pid` was started with (Linux: /proc/<pid>/environ, readable by its owner), so that a
 * restart keeps its secrets (LOOM_CLUSTER_TOKEN, LOOM_DATABASE_URL) without them ever being written down. Undefined
 * where it cannot be read; the caller then uses its own.
 */
export function processEnvironment(pid: number): NodeJS.ProcessEnv | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return undefined;
  }
  const environment: NodeJS.ProcessEnv = {};
  for (const entry of raw.split("\0")) {
    const equals = entry.indexOf("=");
    if (equals > 0) environment[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return environment;
}

/**
 * Stops process `pid`: SIGTERM, then SIGKILL once `drainMs` passed (plus a grace for closing the database).
 * @returns how it ended.
 */
export async function stopProcess(pid: number, drainMs: number, graceMs = 10_000): Promise<"exited" | "killed" | "gone"> {
  if (!processIsAlive(pid)) return "gone";
  try {
    process.kill(pid, "SIGTERM");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return "gone";
    throw new Error(`cannot stop process ${pid}: ${(error as Error).message} (run loom update as the user that runs loom)`);
  }
  if (await exited(pid, drainMs + graceMs)) return "exited";
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    return "exited";
  }
  await exited(pid, 10_000);
  return "killed";
}

/** A started process: its pid and log file. */
export interface StartedProcess {
  pid: number;
  log: string;
}

/**
 * Starts `like` again from package root `root` (detached: it outlives the command that started it).
 * @param environment the environment to give it (see processEnvironment).
 */
export function startProcess(layout: InstallLayout, like: RunningProcess, root: string, version: string, environment: NodeJS.ProcessEnv): StartedProcess {
  mkdirSync(layout.logs, { recursive: true });
  const log = join(layout.logs, `${like.role}-${version}-${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}.log`);
  const fd = openSync(log, "a", 0o600);
  try {
    const child = spawn(like.execPath, [...like.execArgv, cliOf(root), ...like.argv], { cwd: like.cwd, env: environment, detached: true, stdio: ["ignore", fd, fd] });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${like.execPath} ${cliOf(root)} (see ${log})`);
    return { pid: child.pid, log };
  } finally {
    closeSync(fd);
  }
}

/**
 * Waits until process `pid` recorded itself in the install and its /health answers 200 with `version` (a port shared
 * with the process it replaces may answer from either), for at most `timeoutMs`.
 * @returns its record.
 * @throws Error saying what was missing, with the end of its log, when it exited or the time ran out.
 */
export async function waitHealthy(layout: InstallLayout, started: StartedProcess, version: string, timeoutMs: number): Promise<RunningProcess> {
  const deadline = Date.now() + timeoutMs;
  let last = "it has not recorded itself as listening";
  while (Date.now() < deadline) {
    if (!processIsAlive(started.pid)) throw new Error(`the new process ${started.pid} exited (${last}); its log ${started.log} ends:\n${logTail(started.log)}`);
    const record = runningProcess(layout, started.pid);
    if (record !== undefined) {
      try {
        const { status, body } = await probeHealth(`${record.url}/health`);
        if (status === 200 && body.version === version) return record;
        last = `GET ${record.url}/health answered ${status} ${JSON.stringify(body).slice(0, 200)}`;
      } catch (error) {
        last = `GET ${record.url}/health failed: ${(error as Error).message}`;
      }
    }
    await sleep(200);
  }
  throw new Error(`the new process ${started.pid} was not healthy within ${Math.round(timeoutMs / 1000)} s (${last}); its log ${started.log} ends:\n${logTail(started.log)}`);
}

/**
 * GET /health on a connection of its own: on a port two processes share, each new connection may reach either, while a
 * kept-alive one would ask the old process every time.
 */
function probeHealth(url: string): Promise<{ status: number; body: { status?: string; version?: string } }> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, timeout: 2000 }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => { text = (text + chunk).slice(0, 64 * 1024); });
      response.on("end", () => {
        let body = {};
        try {
          body = JSON.parse(text) as object;
        } catch {
          // Not JSON: the status alone says it is not healthy.
        }
        resolve({ status: response.statusCode ?? 0, body });
      });
      response.on("error", reject);
    });
    request.on("timeout", () => request.destroy(new Error("no answer within 2 s")));
    request.on("error", reject);
  });
}

/** The last lines of a log, for an error message. */
export function logTail(path: string, lines = 20): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!processIsAlive(pid)) return true;
    await sleep(100);
  }
  return !processIsAlive(pid);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
