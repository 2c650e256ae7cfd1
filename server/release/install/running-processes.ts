// The loom processes running from an install: each `loom serve`, `gateway` and `worker` started with an install
// folder writes `run/<pid>.json` once it listens (how it was started, where it answers /health) and removes it when
// it exits. `loom update apply` reads them to know what to restart, and how. A record whose process is gone (kill -9)
// is ignored and removed.
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { processIsAlive } from "../../platform/db/data-dir-lock.js";
import { readJsonFile, writeFileDurably } from "./durable-files.js";
import type { InstallLayout } from "./layout.js";

/** What a running process is and how to start it again. */
export interface RunningProcess {
  pid: number;
  role: "serve" | "gateway" | "worker";
  /** The loom version it runs, and the package root it runs from. */
  version: string;
  root: string;
  /** Node's executable and flags, the arguments after the script (`serve --data-dir ...`), and the working folder. */
  execPath: string;
  execArgv: string[];
  argv: string[];
  cwd: string;
  /** `http://host:port`: where it answers GET /health. */
  url: string;
  startedAt: string;
}

const ROLES = new Set(["serve", "gateway", "worker"]);

/**
 * Records this process in `run/<pid>.json` and removes the record when the process exits.
 * @returns a function that removes it now.
 */
export function recordRunningProcess(layout: InstallLayout, process_: Omit<RunningProcess, "pid" | "execPath" | "execArgv" | "cwd" | "startedAt">): () => void {
  mkdirSync(layout.run, { recursive: true });
  const path = join(layout.run, `${process.pid}.json`);
  const record: RunningProcess = { pid: process.pid, execPath: process.execPath, execArgv: process.execArgv, cwd: process.cwd(), startedAt: new Date().toISOString(), ...process_ };
  writeFileDurably(path, `${JSON.stringify(record, null, 2)}\n`);
  const remove = () => rmSync(path, { force: true });
  process.once("exit", remove);
  return remove;
}

/** The live processes recorded in the install, oldest first; records of dead processes are removed. */
export function runningProcesses(layout: InstallLayout): RunningProcess[] {
  let names: string[];
  try {
    names = readdirSync(layout.run);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const found: RunningProcess[] = [];
  for (const name of names) {
    if (!/^\d+\.json$/.test(name)) continue;
    const path = join(layout.run, name);
    let record: RunningProcess | undefined;
    try {
      record = parseRecord(readJsonFile(path));
    } catch {
      record = undefined;
    }
    if (record === undefined || !processIsAlive(record.pid)) {
      rmSync(path, { force: true });
      continue;
    }
    found.push(record);
  }
  return found.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

/** The record of process `pid`, once it wrote one. */
export function runningProcess(layout: InstallLayout, pid: number): RunningProcess | undefined {
  return runningProcesses(layout).find((record) => record.pid === pid);
}

function parseRecord(value: unknown): RunningProcess | undefined {
  const r = value as Partial<RunningProcess> | undefined;
  if (typeof r !== "object" || r === null) return undefined;
  const strings = (list: unknown) => Array.isArray(list) && list.every((item) => typeof item === "string");
  if (!Number.isSafeInteger(r.pid) || !ROLES.has(r.role as string) || typeof r.version !== "string" || typeof r.root !== "string") return undefined;
  if (typeof r.execPath !== "string" || !strings(r.execArgv) || !strings(r.argv) || typeof r.cwd !== "string" || typeof r.url !== "string" || typeof r.startedAt !== "string") return undefined;
  return r as RunningProcess;
}
