// What a package root is: its version (package.json) and the schema its build understands (dist/'s migrations).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { builtMigrations } from "../build-release.js";
import type { InstalledVersion } from "./update-journal.js";

/** The version of the package at `root`. @throws Error naming its package.json when unreadable. */
export function installedVersion(root: string): InstalledVersion {
  const path = join(root, "package.json");
  let version: unknown;
  try {
    version = (JSON.parse(readFileSync(path, "utf8")) as { version?: unknown }).version;
  } catch (error) {
    throw new Error(`cannot read the installed version from ${path}: ${(error as Error).message}`);
  }
  if (typeof version !== "string") throw new Error(`${path} names no version`);
  return { version, root };
}

/** The newest schema version of the build at `root`, and its migrations. */
export async function readBuiltSchema(root: string): Promise<{ version: number; migrations: { version: number; description: string; keepsPrevious: boolean }[] }> {
  const migrations = await builtMigrations(root);
  return {
    version: migrations[migrations.length - 1]?.version ?? 0,
    migrations: migrations.map(({ version, description, keepsPrevious }) => ({ version, description, keepsPrevious: keepsPrevious ?? false })),
  };
}

/**
 * Whether the builds at `a` and `b` carry the same migrations: then a switch between them has nothing to migrate, and
 * apply need not start the new release once just to find that out (its processes open the same schema).
 */
export async function sameSchema(a: string, b: string): Promise<boolean> {
  const [left, right] = await Promise.all([readBuiltSchema(a), readBuiltSchema(b)]);
  const versions = (schema: typeof left) => schema.migrations.map((migration) => migration.version).join(",");
  return left.version === right.version && versions(left) === versions(right);
}
