// A package root that stands in for a loom release in the install's tests: its CLI records itself in the install
// given by --install-dir (as a worker, or the role --role names) and answers /health with its version until SIGTERM;
// a broken one exits at once. Its dist/ carries an empty list of migrations, so schema checks can read it.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Writes the package root `<parent>/package-<version>`. @returns its path. */
export function fakePackageRoot(parent: string, version: string, broken = false): string {
  const root = join(parent, `package-${version}`);
  mkdirSync(join(root, "dist", "server", "cli"), { recursive: true });
  mkdirSync(join(root, "dist", "server", "platform", "db", "migrations"), { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ version }));
  writeFileSync(join(root, "dist", "server", "platform", "db", "migrations", "index.js"), "exports.MIGRATIONS = [];\n");
  writeFileSync(join(root, "dist", "server", "cli", "main.js"), broken ? "process.exit(3);\n" : `
const { createServer } = require("node:http");
const { mkdirSync, renameSync, writeFileSync, rmSync } = require("node:fs");
const { join } = require("node:path");
const installDir = process.argv[process.argv.indexOf("--install-dir") + 1];
const role = process.argv.includes("--role") ? process.argv[process.argv.indexOf("--role") + 1] : "worker";
const port = process.argv.includes("--port") ? Number(process.argv[process.argv.indexOf("--port") + 1]) : 0;
const server = createServer((request, response) => response.end(JSON.stringify({ status: "ok", version: ${JSON.stringify(version)} })));
server.listen(port, "127.0.0.1", () => {
  const run = join(installDir, "run");
  mkdirSync(run, { recursive: true });
  const path = join(run, process.pid + ".json");
  // Written whole, then renamed: a reader never sees half a record (and would remove it as unreadable).
  writeFileSync(path + ".partial", JSON.stringify({ pid: process.pid, role, version: ${JSON.stringify(version)}, root: ${JSON.stringify(root)}, execPath: process.execPath, execArgv: [], argv: process.argv.slice(2), cwd: process.cwd(), url: "http://127.0.0.1:" + server.address().port, startedAt: new Date().toISOString() }));
  renameSync(path + ".partial", path);
  process.on("SIGTERM", () => { rmSync(path, { force: true }); process.exit(0); });
});
`);
  writeFileSync(join(root, "dist", "server", "cli", "package.json"), JSON.stringify({ type: "commonjs" }));
  return root;
}
