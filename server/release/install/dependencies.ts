// A release runs on the install's node_modules (linked into its folder): loom pins every dependency exactly, so a
// release can use them when each pinned version is the one installed. When a release needs another, the apply stops
// before anything changes and says which, and how to install it.
import { readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Checks that `modules` holds the exact version of every dependency in `<root>/package.json`.
 * @throws Error naming the dependency, the version needed and the one found.
 */
export async function checkDependencies(root: string, modules: string): Promise<void> {
  const packageJson = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version?: string; dependencies?: Record<string, string> };
  for (const [name, spec] of Object.entries(packageJson.dependencies ?? {})) {
    // "npm:uws-pack@20.0.8" installs uws-pack under the name uWebSockets.js.
    const alias = /^npm:((?:@[^/@]+\/)?[^@]+)@(.+)$/.exec(spec);
    const wantName = alias?.[1] ?? name;
    const wantVersion = alias?.[2] ?? spec;
    const installed = await readFile(join(modules, name, "package.json"), "utf8").then((text) => JSON.parse(text) as { name?: string; version?: string }, () => undefined);
    if (installed?.name === wantName && installed.version === wantVersion) continue;
    const found = installed === undefined ? "none" : `${installed.name}@${installed.version}`;
    throw new Error(
      `release ${packageJson.version} needs ${name} ${spec}; the install's ${modules} has ${found}: install the release's dependencies ` +
        `(npm install --omit=dev in ${root}, then run the command again)`,
    );
  }
}
