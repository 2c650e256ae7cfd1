// state.json: the version before the current one (what `loom update rollback` returns to) and the backup taken when
// the current one was applied.
import { readJsonFile, removeFileDurably, writeFileDurably } from "./durable-files.js";
import type { InstallLayout } from "./layout.js";
import type { InstalledVersion } from "./update-journal.js";

/** state.json: the version before the current one, and the backup taken when the current one was applied. */
export interface InstallState {
  previous: InstalledVersion;
  current: InstalledVersion;
  backup: string | null;
}

/** The install's state.json, or undefined before the first apply. */
export function readInstallState(layout: InstallLayout): InstallState | undefined {
  const state = readJsonFile(layout.state) as InstallState | undefined;
  if (state !== undefined && (typeof state.previous?.root !== "string" || typeof state.current?.version !== "string")) throw new Error(`${layout.state}: not an install state`);
  return state;
}

/** Writes state.json durably. */
export function writeInstallState(layout: InstallLayout, state: InstallState): void {
  writeFileDurably(layout.state, `${JSON.stringify(state, null, 2)}\n`);
}

/** Removes state.json (an install back to before its first update). */
export function removeInstallState(layout: InstallLayout): void {
  removeFileDurably(layout.state);
}
