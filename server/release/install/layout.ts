// Where an install keeps its releases, its current version, backups, journal, logs and the records of its running
// processes: `<install-dir>/...` (default `<data-dir>/install`). `current` is a symbolic link, replaced by a rename,
// so it names one version or the other at every instant, whatever stops the process that switches it.
import { mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { defaultDataDir } from "../../platform/db/data-dir.js";
import { syncDirectory } from "./durable-files.js";

/** The paths of one install. */
export interface InstallLayout {
  root: string;
  /** `releases/<version>/`: each unpacked release (its package.json, dist/, ...). */
  releases: string;
  /** `current`: a link to the version that starts (a release folder, or the package loom was first run from). */
  current: string;
  /** `update-journal.json`: present only while an apply or rollback is under way (or was cut off). */
  journal: string;
  /** `state.json`: the version before the current one, for `loom update rollback`. */
  state: string;
  /** `backups/<id>/`: copies of the embedded database taken before migrations. */
  backups: string;
  /** `run/<pid>.json`: the loom processes running from this install (what apply restarts). */
  run: string;
  /** `logs/`: the output of processes apply started. */
  logs: string;
}

/** The layout under `installDir`. */
export function installLayout(installDir: string): InstallLayout {
  const root = resolve(installDir);
  return {
    root,
    releases: join(root, "releases"),
    current: join(root, "current"),
    journal: join(root, "update-journal.json"),
    state: join(root, "state.json"),
    backups: join(root, "backups"),
    run: join(root, "run"),
    logs: join(root, "logs"),
  };
}

/** The install folder when none is given: `<data-dir>/install` (the data dir: --data-dir, else loom's default). */
export function defaultInstallDir(dataDir: string | undefined): string {
  return join(dataDir === undefined ? defaultDataDir() : resolve(dataDir), "install");
}

/** Where release `version` is unpacked. */
export function releaseRoot(layout: InstallLayout, version: string): string {
  return join(layout.releases, version);
}

/** The package root `current` names, or undefined before the first update. */
export function currentRoot(layout: InstallLayout): string | undefined {
  let target: string;
  try {
    target = readlinkSync(layout.current);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return isAbsolute(target) ? target : resolve(layout.root, target);
}

/**
 * Points `current` at `root` atomically: a new link beside it, renamed over it, the folder synced. Releases inside
 * the install are linked relatively, so the install folder can be moved or copied whole.
 */
export function pointCurrentAt(layout: InstallLayout, root: string): void {
  mkdirSync(layout.root, { recursive: true });
  const inside = !relative(layout.root, root).startsWith("..");
  const target = inside ? relative(layout.root, root) : resolve(root);
  const next = `${layout.current}.next-${process.pid}`;
  rmSync(next, { force: true });
  symlinkSync(target, next);
  renameSync(next, layout.current);
  syncDirectory(layout.root);
}
