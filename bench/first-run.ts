// First run from a fresh clone: how long `npm install && npm start` takes to answer its first chat request.
// Per commit and repeat: a clone of this repository into a temporary folder (shared/ linked beside it, as beside the
// checkout), `npm install --no-audit --no-fund` timed, then `npm start -- --port P` timed until the first
// POST /v1/chat/completions answers 200 (polling GET /health, then chatting with the models GET /v1/models lists, in
// its order, until one answers), the server stopped (SIGTERM to its process group, SIGKILL after 10 s), and a second
// `npm start` timed the same way (nothing changed since the first: npm start's build skips what is up to date, the model is cached).
// Run: npm run build && node dist/bench/first-run.js [options] (USAGE below; --help prints it).
// --offline (the default) points HF_ENDPOINT at a closed loopback port: the default model's download is refused at
// once and loom serves the bundled stories260K, so no download is timed; --no-offline downloads SmolLM2-135M-Instruct
// from the Hub (or HF_ENDPOINT's mirror) on the first start. Each run has an empty model cache (LOOM_CACHE_DIR) and
// data dir (LOOM_DATA_DIR) of its own; npm's cache is used as it is, so registry downloads are whatever it holds.
// The clone is not timed (a local clone; a user's is over the network). Run it on an idle machine: it prints the
// load average before and after.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { connect } from "node:net";
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PACKAGE_ROOT, SHARED_ROOT } from "../kernels/package-root.js";
import { closedLoopbackPort } from "../server/testing/closed-port.js";
import { BenchCli, parseBenchOptions } from "./bench-args.js";

/** What to measure. */
export interface FirstRunOptions {
  /** Revisions of this repository, as given (each resolved to a commit before anything runs). */
  commits: string[];
  repeat: number;
  port: number;
  offline: boolean;
  /** Longest wait for npm install, and for each npm start to answer, in seconds. */
  timeoutSeconds: number;
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/first-run.js [--commits HEAD,<rev>,...] [--repeat 1] [--port 8080]
       [--offline | --no-offline] [--timeout 900]`;
const cli: BenchCli = new BenchCli("first-run", USAGE);

/**
 * Reads the flags (the command line without node and the script).
 * @throws RangeError on a bad value, BenchArgumentError (a RangeError) on an unknown option, BenchHelpRequest on --help.
 */
export function parseFirstRunArgs(args: readonly string[]): FirstRunOptions {
  const values = parseBenchOptions({
    commits: { type: "string", default: "HEAD" },
    repeat: { type: "string", default: "1" },
    port: { type: "string", default: "8080" },
    // Node 20's parseArgs has no allowNegative: --no-offline is an option of its own.
    offline: { type: "boolean" },
    "no-offline": { type: "boolean" },
    timeout: { type: "string", default: "900" },
  }, args);
  const commits = values.commits.split(",").map((rev) => rev.trim()).filter((rev) => rev !== "");
  if (commits.length === 0) throw new RangeError("--commits names no revision");
  const integer = (flag: string, text: string, min: number, max: number) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`--${flag} must be an integer from ${min} to ${max}, got ${text}`);
    return value;
  };
  return {
    commits,
    repeat: integer("repeat", values.repeat, 1, 100),
    port: integer("port", values.port, 1, 65535),
    offline: values["no-offline"] !== true || values.offline === true,
    timeoutSeconds: integer("timeout", values.timeout, 1, 86_400),
  };
}

/** One clone's figures, in seconds. */
export interface FirstRunTimes {
  /** Short hash and commit date, e.g. `4c89a87 (2026-11-29)`. */
  commit: string;
  run: number;
  install: number;
  /** npm start to GET /health 200 (build, model load, listen). */
  firstHealth: number;
  /** npm start to the first POST /v1/chat/completions 200. */
  firstAnswer: number;
  /** The second npm start to its first 200. */
  secondAnswer: number;
  /** The model that answered. */
  model: string;
}

/** The markdown table of the runs; with repeats, a row of each column's median after each commit's runs. */
export function formatFirstRunTable(runs: readonly FirstRunTimes[], repeat: number): string[] {
  const lines = [
    "| commit | run | npm install s | npm start to /health 200 s | npm start to first 200 s | install + start s | second npm start to first 200 s | model answering |",
    "|---|---|---|---|---|---|---|---|",
  ];
  const columns = (r: FirstRunTimes) => [r.install, r.firstHealth, r.firstAnswer, r.install + r.firstAnswer, r.secondAnswer];
  const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
  for (const commit of new Set(runs.map((r) => r.commit))) {
    const own = runs.filter((r) => r.commit === commit);
    for (const r of own) lines.push(row([commit, `${r.run}/${repeat}`, ...columns(r).map((x) => x.toFixed(1)), r.model]));
    if (own.length > 1) {
      const medians = columns(own[0]).map((_, i) => median(own.map((r) => columns(r)[i])));
      lines.push(row([commit, "median", ...medians.map((x) => x.toFixed(1)), ""]));
    }
  }
  return lines;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The environment of npm and loom: this one without LOOM_* settings (but the shared folder) or npm's own run variables. */
export function childEnvironment(base: NodeJS.ProcessEnv, run: { cacheDir: string; dataDir: string; hfEndpoint?: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    // npm_* are set when this runs under `npm run`; they would steer the inner npm (its prefix, its lifecycle event).
    if ((key.startsWith("LOOM_") && key !== "LOOM_SHARED_DIR") || key.startsWith("npm_")) continue;
    env[key] = value;
  }
  env.LOOM_CACHE_DIR = run.cacheDir;
  env.LOOM_DATA_DIR = run.dataDir;
  if (run.hfEndpoint !== undefined) env.HF_ENDPOINT = run.hfEndpoint;
  return env;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function git(args: string[], cwd = PACKAGE_ROOT): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** The last `count` lines of a log file, indented, for a failure's message. */
function tail(path: string, count = 40): string {
  if (!existsSync(path)) return "";
  return readFileSync(path, "utf8").trimEnd().split("\n").slice(-count).map((line) => `    ${line}`).join("\n");
}

/** The process groups and folders of the run in progress, removed if this process is interrupted. */
const running = { groups: new Set<number>(), folders: new Set<string>() };

/** Starts `npm <args>` in `cwd` in a process group of its own, its output appended to `log`. */
function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv, log: string): ChildProcess {
  const fd = openSync(log, "a");
  try {
    const child = spawn("npm", args, { cwd, env, detached: true, stdio: ["ignore", fd, fd] });
    child.on("error", () => {}); // a failed start leaves pid undefined, thrown below
    if (child.pid === undefined) throw new Error(`could not start npm ${args.join(" ")} (is npm on PATH?)`);
    running.groups.add(child.pid);
    child.once("exit", () => {
      if (!groupAlive(child.pid!)) running.groups.delete(child.pid!);
    });
    return child;
  } finally {
    closeSync(fd);
  }
}

function exitOf(child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode!);
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
}

/** Whether any process of the group led by `pid` is alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops the process group of `child` (npm, its shell, node): SIGTERM, SIGKILL what is left after 10 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid!;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  for (const deadline = performance.now() + 10_000; groupAlive(pid) && performance.now() < deadline;) await sleep(100);
  if (groupAlive(pid)) signal("SIGKILL");
  while (groupAlive(pid)) await sleep(50);
  await exitOf(child);
  running.groups.delete(pid);
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function request(url: string, init?: RequestInit): Promise<{ status: number; body: string } | undefined> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
    return { status: response.status, body: await response.text() };
  } catch {
    return undefined; // not listening yet
  }
}

/**
 * Runs `npm start -- --port <port>` and times it to GET /health 200 and to the first POST /v1/chat/completions 200;
 * leaves the server running (the caller stops it).
 */
async function startToFirstAnswer(cwd: string, env: NodeJS.ProcessEnv, port: number, log: string, timeoutSeconds: number): Promise<{ child: ChildProcess; health: number; answer: number; model: string }> {
  if (await portInUse(port)) throw new Error(`something already listens on 127.0.0.1:${port}; pass --port`);
  const base = `http://127.0.0.1:${port}`;
  const start = performance.now();
  const child = npm(["start", "--", "--port", String(port)], cwd, env, log);
  const deadline = start + timeoutSeconds * 1000;
  let health: number | undefined;
  let last = "no answer";
  try {
    while (performance.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`npm start exited (${child.exitCode ?? child.signalCode}) before answering; its output ends:\n${tail(log)}`);
      if (health === undefined && (await request(`${base}/health`))?.status === 200) health = (performance.now() - start) / 1000;
      if (health !== undefined) {
        // The models in the order GET /v1/models lists them, until one answers (the list holds every format's names).
        const listing = await request(`${base}/v1/models`);
        const ids = listing?.status === 200 ? ((JSON.parse(listing.body) as { data?: Array<{ id: string }> }).data ?? []).map((m) => m.id) : [];
        if (ids.length === 0) last = `GET /v1/models: ${listing === undefined ? "no answer" : `HTTP ${listing.status} ${listing.body.slice(0, 200)}`}`;
        for (const model of ids) {
          const answer = await request(`${base}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: 8, temperature: 0 }),
          });
          if (answer?.status === 200) return { child, health, answer: (performance.now() - start) / 1000, model };
          last = answer === undefined ? `${model}: no answer` : `${model}: HTTP ${answer.status} ${answer.body.slice(0, 200)}`;
        }
      }
      await sleep(250);
    }
    throw new Error(`npm start gave no 200 to a chat request within ${timeoutSeconds} s (last: ${last}); its output ends:\n${tail(log)}`);
  } catch (error) {
    await stopGroup(child);
    throw error;
  }
}

/** One clone of `sha`: install, first start, second start. */
async function measure(sha: string, label: string, run: number, options: FirstRunOptions): Promise<FirstRunTimes> {
  const folder = mkdtempSync(join(tmpdir(), "loom-first-run-"));
  running.folders.add(folder);
  const clone = join(folder, "loom");
  const progress = (text: string) => process.stderr.write(`[${label} run ${run}] ${text}\n`);
  let server: ChildProcess | undefined;
  try {
    if (existsSync(SHARED_ROOT)) symlinkSync(SHARED_ROOT, join(folder, "shared"));
    git(["clone", "--quiet", "--no-hardlinks", "--no-checkout", PACKAGE_ROOT, clone], folder);
    git(["-c", "advice.detachedHead=false", "checkout", "--quiet", sha], clone);
    const env = childEnvironment(process.env, {
      cacheDir: join(folder, "cache"),
      dataDir: join(folder, "data"),
      hfEndpoint: options.offline ? `http://127.0.0.1:${await closedLoopbackPort()}` : undefined,
    });
    progress(`npm install in ${clone}`);
    const installLog = join(folder, "npm-install.log");
    const installStart = performance.now();
    const install = npm(["install", "--no-audit", "--no-fund"], clone, env, installLog);
    const timer = setTimeout(() => void stopGroup(install), options.timeoutSeconds * 1000);
    const code = await exitOf(install);
    clearTimeout(timer);
    const installSeconds = (performance.now() - installStart) / 1000;
    if (code !== 0) throw new Error(`npm install exited (${code}) after ${installSeconds.toFixed(0)} s; its output ends:\n${tail(installLog)}`);
    progress(`npm install: ${installSeconds.toFixed(1)} s; npm start`);
    const first = await startToFirstAnswer(clone, env, options.port, join(folder, "npm-start-1.log"), options.timeoutSeconds);
    server = first.child;
    progress(`first start: /health ${first.health.toFixed(1)} s, first 200 ${first.answer.toFixed(1)} s (${first.model}); stopping it`);
    await stopGroup(server);
    const second = await startToFirstAnswer(clone, env, options.port, join(folder, "npm-start-2.log"), options.timeoutSeconds);
    server = second.child;
    progress(`second start: first 200 ${second.answer.toFixed(1)} s`);
    await stopGroup(server);
    server = undefined;
    return { commit: label, run, install: installSeconds, firstHealth: first.health, firstAnswer: first.answer, secondAnswer: second.answer, model: first.model };
  } finally {
    if (server !== undefined) await stopGroup(server);
    rmSync(folder, { recursive: true, force: true });
    running.folders.delete(folder);
  }
}

/** The CPU's model name from /proc/cpuinfo (else what Node reports). */
function cpuModel(): string {
  try {
    const name = /^model name\s*:\s*(.*)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1];
    if (name) return name.trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model.trim() ?? "unknown";
}

async function main(): Promise<void> {
  const options = cli.check(() => parseFirstRunArgs(process.argv.slice(2)));
  // The npm processes run in groups of their own (a terminal's Ctrl-C does not reach them): stop them here.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      for (const group of running.groups) {
        try {
          process.kill(-group, "SIGKILL");
        } catch {
          // gone
        }
      }
      for (const folder of running.folders) rmSync(folder, { recursive: true, force: true });
      process.exit(130);
    });
  }
  const commits = options.commits.map((rev) => {
    let sha: string;
    try {
      sha = git(["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
    } catch {
      cli.fail(`--commits: ${rev} is no commit of the repository at ${PACKAGE_ROOT}`);
    }
    return { rev, sha, label: git(["log", "-1", "--format=%h (%cs)", sha]) };
  });
  const load = () => loadavg().map((x) => x.toFixed(2)).join(" / ");
  console.log(`# node dist/bench/first-run.js --commits ${options.commits.join(",")} --repeat ${options.repeat} --port ${options.port} ${options.offline ? "--offline" : "--no-offline"} --timeout ${options.timeoutSeconds}`);
  console.log(`# ${new Date().toISOString()}, ${cpuModel()}, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, npm ${execFileSync("npm", ["--version"], { encoding: "utf8" }).trim()}`);
  console.log(`# commits: ${commits.map((c) => `${c.rev} = ${c.sha.slice(0, 12)}`).join(", ")}; a fresh local clone each run (not timed), shared/ linked beside it`);
  console.log(`# npm's cache as it is (${execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim()}): registry downloads come from it where it holds them`);
  console.log(`# ${options.offline ? "offline: HF_ENDPOINT is a closed loopback port, so loom serves the bundled model" : "online: the first start downloads the default model"}; empty model cache and data dir per run`);
  console.log(`# load average at the start (1/5/15 min): ${load()}`);
  const runs: FirstRunTimes[] = [];
  for (const commit of commits) {
    for (let run = 1; run <= options.repeat; run++) runs.push(await measure(commit.sha, commit.label, run, options));
  }
  console.log("");
  for (const line of formatFirstRunTable(runs, options.repeat)) console.log(line);
  console.log("");
  console.log("npm start = npm run build (wasm, TypeScript, dashboard) and loom serve --no-auth; first 200 = the first POST /v1/chat/completions");
  console.log("(max_tokens 8) answered 200; second npm start = the same clone again, nothing changed (a commit with the incremental");
  console.log("build skips every build step; an older one builds everything again; online, the model the first start downloaded is cached).");
  console.log(`load average at the end (1/5/15 min): ${load()}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
  process.exit(0);
}
