// What `loom serve`, `gateway` and `worker` do with an install folder: finish an update a crash cut off before they
// open anything, and record themselves once listening so that `loom update apply` can restart them.
import { PACKAGE_ROOT } from "../../../kernels/package-root.js";
import { LOOM_VERSION } from "../../version.js";
import { installLayout } from "./layout.js";
import { type RunningProcess, recordRunningProcess } from "./running-processes.js";
import { readJournal, recoverInterruptedUpdate } from "./update-journal.js";
import { UpdateInProgressError, acquireUpdateLock } from "./update-lock.js";

/**
 * Recovers an interrupted update of the install (see update-journal.ts) under its update lock, saying on stderr what
 * it did; an update still running in another process (this one may be the new version it started) is left to it.
 * @returns what it said, or undefined when there was nothing to recover.
 */
export async function recoverInstall(installDir: string): Promise<string | undefined> {
  const layout = installLayout(installDir);
  if (readJournal(layout) === undefined) return undefined;
  let release: () => void;
  try {
    release = acquireUpdateLock(layout, "recovery at start");
  } catch (error) {
    if (!(error instanceof UpdateInProgressError)) throw error;
    const said = `an update of ${layout.root} is under way in process ${error.holder.pid}: its journal is left to it`;
    process.stderr.write(`loom: ${said}\n`);
    return said;
  }
  try {
    const done = (await recoverInterruptedUpdate(layout))?.said;
    if (done !== undefined) process.stderr.write(`loom: ${done}\n`);
    return done;
  } finally {
    release();
  }
}

/** Records this process in the install as listening on host:port (see running-processes.ts). */
export function recordThisProcess(installDir: string, role: RunningProcess["role"], host: string, port: number): void {
  // Health checks come from this machine: a wildcard address is reached on loopback.
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : host.includes(":") ? `[${host}]` : host;
  recordRunningProcess(installLayout(installDir), { role, version: LOOM_VERSION, root: PACKAGE_ROOT, argv: process.argv.slice(2), url: `http://${reachable}:${port}` });
}
