// `npm run build`: the WebAssembly kernels, the TypeScript and the dashboard, each only when its inputs changed since
// its last successful build or one of its outputs is missing (stamps in .cache/build-stamps/). `--force` rebuilds all.
// Each step runs its own npm script (build:wasm, build:ts, build:dashboard), which also work alone.
// Usage: node scripts/build.mjs [--force]
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { listFiles, packageVersion, runSteps, tsconfigProgram } from "./build/incremental.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== "--force");
const usage = "Usage: node scripts/build.mjs [--force]\n  --force  rebuild every step, up to date or not\n";
if (args.includes("--help")) {
  process.stdout.write(usage);
  process.exit(0);
}
if (unknown.length > 0) {
  process.stderr.write(`build: unknown option ${unknown[0]}\n${usage}`);
  process.exit(2);
}

const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const scripts = packageJson.scripts ?? {};
/** What every step depends on besides its sources: the locked dependency versions. */
const common = ["package-lock.json"];

/** Runs `npm run <script>` in the package root; rejects when it fails. */
function npmRun(script) {
  if (scripts[script] === undefined) throw new Error(`package.json has no "${script}" script`);
  // Under npm, npm_execpath is npm's own CLI: run it with this node, as npm itself would.
  const npmCli = process.env.npm_execpath;
  const [command, prefix] = npmCli && /\.[cm]?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ["npm", []];
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...prefix, "run", "--silent", script], { cwd: root, stdio: "inherit", shell: command === "npm" && process.platform === "win32" });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`npm run ${script} ${signal ? `was killed by ${signal}` : `exited with ${code}`}`));
    });
  });
}

/** The dashboard's folder: where build:dashboard's `vite build --config <dir>/vite.config.ts` points. */
function dashboardDir() {
  const config = /--config\s+(\S+)/.exec(scripts["build:dashboard"] ?? "")?.[1];
  if (config === undefined) throw new Error(`package.json's build:dashboard script names no --config: ${scripts["build:dashboard"]}`);
  const dir = posix.dirname(config.replace(/\\/g, "/"));
  if (!existsSync(join(root, dir))) throw new Error(`the dashboard folder ${dir} (from build:dashboard's --config) does not exist`);
  return dir;
}

const typescript = tsconfigProgram(root, "tsconfig.json");
const dashboard = dashboardDir();
const wasmOutputs = ["kernels", "kernels-relaxed"].flatMap((name) => [`dist/wasm/${name}.wasm`, `dist/wasm/${name}.wat`]);

const steps = [
  {
    name: "wasm",
    // Every kernels/<op>/*.as.ts is an entry and kernels/assembly/ holds their helpers; asc would read an asconfig.json.
    inputs: () => [
      "scripts/build-wasm.mjs",
      "asconfig.json",
      ...common,
      ...listFiles(root, "kernels", (path) => path.endsWith(".as.ts") || path.startsWith("kernels/assembly/")),
    ],
    extra: [scripts["build:wasm"], packageVersion(root, "assemblyscript")],
    outputs: () => wasmOutputs,
    run: () => npmRun("build:wasm"),
  },
  {
    name: "typescript",
    // tsc's own file list (tsconfig.json's include minus exclude); package.json's "type" decides the emitted modules.
    inputs: () => ["tsconfig.json", "package.json", ...common, ...typescript.sources],
    extra: [scripts["build:ts"], packageVersion(root, "typescript"), packageVersion(root, "@types/node")],
    outputs: () => typescript.outputs,
    run: () => npmRun("build:ts"),
  },
  {
    name: "dashboard",
    // The page's sources, index.html, its tsconfig and vite config; preact and uplot come through package-lock.json.
    inputs: () => [...common, ...listFiles(root, dashboard, (path) => !path.endsWith(".md"))],
    extra: [scripts["build:dashboard"], scripts["typecheck:dashboard"], packageVersion(root, "vite"), packageVersion(root, "typescript")],
    outputs: () => dashboardOutputs(),
    run: () => npmRun("build:dashboard"),
  },
];

/** dist/dashboard/index.html and the files it loads from /dashboard/assets/. */
function dashboardOutputs() {
  const index = "dist/dashboard/index.html";
  let html;
  try {
    html = readFileSync(join(root, index), "utf8");
  } catch {
    return [index];
  }
  const assets = [...html.matchAll(/(?:src|href)="\/dashboard\/(assets\/[^"?#]+)"/g)].map((match) => `dist/dashboard/${match[1]}`);
  return [index, ...assets];
}

const started = performance.now();
try {
  const ran = await runSteps(steps, { root, stampDir: join(root, ".cache", "build-stamps"), force: args.includes("--force") });
  if (ran.length > 0) console.log(`build: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  console.error(`build: ${error.message}`);
  process.exitCode = 1;
}
