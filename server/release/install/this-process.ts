// What `loom serve`, `gateway` and `worker` do with an install folder: finish an update a crash cut off before they
// open anything, and record themselves once listening so that `loom update apply` can restart them.
import { PACKAGE_ROOT } from "../../../kernels/package-root.js";
import { LOOM_VERSION } from "../../version.js";
import { installLayout } from "./layout.js";
import { type RunningProcess, recordRunningProcess } from "./running-processes.js";
import { recoverInterruptedUpdate } from "./update-journal.js";

/** Recovers an interrupted update of the install (see update-journal.ts), saying on stderr what it did. */
export async function recoverInstall(installDir: string): Promise<void> {
  const done = await recoverInterruptedUpdate(installLayout(installDir));
  if (done !== undefined) process.stderr.write(`loom: ${done}\n`);
}

/** Records this process in the install as listening on host:port (see running-processes.ts). */
export function recordThisProcess(installDir: string, role: RunningProcess["role"], host: string, port: number): void {
  // Health checks come from this machine: a wildcard address is reached on loopback.
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : host.includes(":") ? `[${host}]` : host;
  recordRunningProcess(installLayout(installDir), { role, version: LOOM_VERSION, root: PACKAGE_ROOT, argv: process.argv.slice(2), url: `http://${reachable}:${port}` });
}
