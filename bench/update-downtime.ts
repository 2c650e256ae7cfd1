// What `loom update apply` costs the clients of a running deployment, against what an operator would do
// without it: stop every process and start it again by hand.
// Run: npm run build && node dist/bench/update-downtime.js [options] (USAGE below; --help prints it).
//
// - serve:   one `loom serve --data-dir` on the embedded database (PGlite), one process with the data folder to itself,
//            so an in-place apply must stop it before the new version starts: the floor of its gap is the new
//            process's start (node, model load, database open) to its first answer, measured in the by-hand restart.
// - rolling: two `loom worker`s and a `loom gateway` on PostgreSQL and Redis, moved by `loom update apply --rolling`
//            (workers drain and restart one at a time, then the gateway starts its successor on the same port before
//            it drains); the by-hand baseline stops all three and starts them again.
// Releases: copies of this repository's build as 0.2.0, 0.3.0, ... (one per round, no migrations), signed into a
// feed in a temporary folder and approved before the first round; each round applies the next one. The by-hand
// restart runs whatever version is current, with the command line and arguments each process recorded in the
// install (run/<pid>.json), SIGTERM for all at once, then all started at once.
// Clients: two closed loops without retries (bench/availability-probe.ts), one non-streamed chat completion of
// max_tokens 8 at a time and one streamed of max_tokens 16; per operation the window runs from its start to 2 s
// after it returned. Reported per operation, median (min to max) over rounds: the longest time with no successful
// answer, failed requests and their kinds, the slowest answer, the operation's wall time; for apply, its steps
// from the progress lines' arrival times. Before each round a 3 s window with no operation gives the steady gap.
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { processIsAlive } from "../server/platform/db/data-dir-lock.js";
import { writeKeyPair } from "../server/release/keys.js";
import { installLayout, type InstallLayout } from "../server/release/install/layout.js";
import { cliOf, stopProcess } from "../server/release/install/process-control.js";
import { runningProcesses } from "../server/release/install/running-processes.js";
import { freePort, loom, packageCopy, releaseInto } from "../server/release/testing/release-fixtures.js";
import { LOOM_CLI, startLoom, stopChild } from "../server/testing/loom-process.js";
import { BenchCli } from "./bench-args.js";
import { AvailabilityProbe, type WindowReport } from "./availability-probe.js";
import { printHeader } from "./bench-models.js";
import { DEFAULT_MODEL, RAISED_LIMITS, type BenchPlatform, modelFile, openBenchPlatform, servedSlug, sleep } from "./cluster-bench.js";
import { formatSpread, spread } from "./speed-spread.js";

/** The command line; --help prints it. */
const USAGE = `node dist/bench/update-downtime.js [--modes serve,rolling] [--repeats 3] [--model preset:dtype]
       [--threads 1] [--database-url URL] [--redis-url URL] [--quick]`;
const cli: BenchCli = new BenchCli("update-downtime", USAGE);
const flags = cli.parse({
  modes: { type: "string", default: "serve,rolling" },
  repeats: { type: "string" },
  model: { type: "string", default: DEFAULT_MODEL },
  threads: { type: "string", default: "1" },
  "database-url": { type: "string" },
  "redis-url": { type: "string" },
  quick: { type: "boolean", default: false },
});
const MODES = ["serve", "rolling"] as const;
type Mode = (typeof MODES)[number];
const modes: Mode[] = cli.someOf("modes", flags.modes, MODES);
const repeats = cli.integer("repeats", flags.repeats ?? (flags.quick ? 1 : 3));
const threads = cli.integer("threads", flags.threads);
const STEADY_MS = 3000;
const SETTLE_MS = 2000;

/** One measured operation. */
interface Measured {
  report: WindowReport;
  wallMs: number;
  /** The by-hand restart: from the new processes' spawn to the clients' first successful answer after it. */
  startMs?: number;
  /** apply: milliseconds from the operation's start to each progress step. */
  steps?: Record<string, number>;
}

/** A deployment under test: its install, how to reach it, and its processes' environment. */
interface Deployment {
  layout: InstallLayout;
  base: string;
  key: string;
  slug: string;
  env: NodeJS.ProcessEnv;
  /** `loom update` arguments that name the database, and the install (apply's). */
  databaseArgs: string[];
  installArgs: string[];
  close(): Promise<void>;
}

const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), "loom-update-bench-"));
const feed = join(dir, "feed");
const config = join(dir, "loom.json");
const versions = Array.from({ length: repeats }, (_, round) => `0.${round + 2}.0`);
const { path: modelPath } = await modelFile(flags.model);
printHeader(`node dist/bench/update-downtime.js ${process.argv.slice(2).join(" ")}`.trim(), threads, [`model ${flags.model}, ${repeats} round(s) per mode, releases ${versions.join(", ")}`]);

try {
  const signer = writeKeyPair(join(dir, "keys"));
  writeFileSync(config, JSON.stringify({ updates: { trustedKeys: [signer.publicKeyPath] } }));
  for (const version of versions) {
    process.stderr.write(`building release ${version} ...\n`);
    await releaseInto(feed, packageCopy(dir, version), signer.privateKeyPath, `${version}: the same build.\n`);
  }
  for (const mode of modes) {
    const deployment = mode === "serve" ? await startServe() : await startCluster();
    try {
      for (const version of versions) await approve(deployment, version);
      await runRounds(mode, deployment);
    } finally {
      await deployment.close();
    }
  }
} finally {
  await Promise.all(children.map((child) => stopChild(child)));
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);

/** The embedded mode: `loom serve --data-dir`, an organization and key made with `loom admin`. */
async function startServe(): Promise<Deployment> {
  const dataDir = join(dir, "data");
  const { LOOM_DATABASE_URL, LOOM_REDIS_URL, LOOM_API_KEYS, LOOM_MODEL, ...env } = process.env;
  const port = await freePort();
  await startLoom("serve", ["--model", modelPath, "--data-dir", dataDir, "--port", String(port), "--threads", String(threads), "--context", "512"], { env, children });
  const admin = async (...args: string[]) => {
    const result = await loom(["admin", ...args, "--json", "--data-dir", dataDir], env);
    if (result.code !== 0) throw new Error(`loom admin ${args.join(" ")}: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, string>;
  };
  const organization = await admin("org", "create", "--name", "update bench");
  const { key } = await admin("key", "create", "--org", organization.id!, "--kind", "inference");
  const base = `http://127.0.0.1:${port}`;
  const layout = installLayout(join(dataDir, "install"));
  return { layout, base, key: key!, slug: await servedSlug(base, key!, () => ""), env, databaseArgs: ["--data-dir", dataDir], installArgs: [], close: () => stopInstall(layout) };
}

/** The scaled-out mode: two workers and a gateway on a fixed port, all recorded in one install folder. */
async function startCluster(): Promise<Deployment> {
  const platform: BenchPlatform = await openBenchPlatform({ bench: "update-downtime", databaseUrl: flags["database-url"], redisUrl: flags["redis-url"], limits: RAISED_LIMITS });
  const layout = installLayout(join(dir, "cluster-install"));
  const common = ["--install-dir", layout.root, "--drain-seconds", "20"];
  const workerArgs = ["--model", modelPath, "--register", platform.redisUrl, "--port", "0", "--threads", String(threads), "--context", "512", "--max-sequences", "4", "--heartbeat-ms", "200", ...common];
  await Promise.all([0, 1].map(() => startLoom("worker", workerArgs, { env: platform.env, children })));
  const port = await freePort();
  await startLoom("gateway", ["--database-url", platform.schemaUrl, "--redis-url", platform.redisUrl, "--port", String(port), ...common], { env: platform.env, children });
  const base = `http://127.0.0.1:${port}`;
  console.log(`# rolling: ${platform.describe()}`);
  return {
    layout, base, key: platform.key, slug: await servedSlug(base, platform.key, () => ""), env: platform.env,
    databaseArgs: ["--database-url", platform.schemaUrl], installArgs: ["--install-dir", layout.root],
    close: async () => {
      await stopInstall(layout);
      await platform.close();
    },
  };
}

async function approve(deployment: Deployment, version: string): Promise<void> {
  const approved = await loom(["update", "approve", version, "--feed", feed, "--config", config, "--by", "bench", ...deployment.databaseArgs], deployment.env);
  if (approved.code !== 0) throw new Error(`loom update approve ${version}: ${approved.stderr}`);
}

/** Per round: a steady window, then the by-hand restart and the apply (alternating which goes first). */
async function runRounds(mode: Mode, deployment: Deployment): Promise<void> {
  const probe = new AvailabilityProbe(deployment.base, deployment.key, deployment.slug, [{ stream: false, maxTokens: 8 }, { stream: true, maxTokens: 16 }]);
  const results: Record<"steady" | "restart" | "apply", Measured[]> = { steady: [], restart: [], apply: [] };
  try {
    await sleep(STEADY_MS); // warm-up: JIT, the key's first read, the prefix cache
    for (const [round, version] of versions.entries()) {
      const steadyFrom = performance.now();
      await sleep(STEADY_MS);
      results.steady.push({ report: probe.window(steadyFrom, performance.now()), wallMs: STEADY_MS });
      const restart = async () => {
        let spawnedAt = Number.NaN;
        const measured = await measure(probe, async () => {
          spawnedAt = await restartByHand(deployment);
          return {};
        });
        const firstAnswer = Math.min(...probe.requests.filter((request) => request.failure === undefined && request.end > spawnedAt).map((request) => request.end));
        return { ...measured, startMs: firstAnswer - spawnedAt };
      };
      const apply = () => measure(probe, (began) => applyUpdate(mode, deployment, version, began));
      if (round % 2 === 0) {
        results.restart.push(await restart());
        results.apply.push(await apply());
      } else {
        results.apply.push(await apply());
        results.restart.push(await restart());
      }
      process.stderr.write(`${mode} round ${round + 1}: restart gap ${results.restart.at(-1)!.report.longestGapMs.toFixed(0)} ms, apply gap ${results.apply.at(-1)!.report.longestGapMs.toFixed(0)} ms\n`);
    }
  } finally {
    await probe.stop();
  }
  printResults(mode, results);
}

/** Runs `operation` with the clients asking; its window ends SETTLE_MS after it returned. */
async function measure(probe: AvailabilityProbe, operation: (began: number) => Promise<Omit<Measured, "report" | "wallMs">>): Promise<Measured> {
  const began = performance.now();
  const extra = await operation(began);
  const wallMs = performance.now() - began;
  await sleep(SETTLE_MS);
  return { report: probe.window(began, performance.now()), wallMs, ...extra };
}

/** What an operator does without `loom update`: SIGTERM to every process, then each started again as it was. @returns when they were spawned (performance.now()). */
async function restartByHand(deployment: Deployment): Promise<number> {
  const processes = runningProcesses(deployment.layout);
  if (processes.length === 0) throw new Error(`no process is recorded in ${deployment.layout.run}`);
  await Promise.all(processes.map(async ({ pid }) => {
    process.kill(pid, "SIGTERM");
    while (processIsAlive(pid)) await sleep(10);
  }));
  const spawned = performance.now();
  // As each was recorded: its node and node flags, its release's CLI, its arguments (the first names its role).
  await Promise.all(processes.map((running) => startLoom(running.role, running.argv.slice(1), { node: running.execPath, nodeArgs: running.execArgv, cli: cliOf(running.root), cwd: running.cwd, env: deployment.env, children })));
  return spawned;
}

/** `loom update apply VERSION`, timing its progress lines. */
async function applyUpdate(mode: Mode, deployment: Deployment, version: string, began: number): Promise<{ steps: Record<string, number> }> {
  const args = [LOOM_CLI, "update", "apply", version, "--feed", feed, "--config", config, "--by", "bench", "--health-timeout-seconds", "120", ...deployment.databaseArgs, ...deployment.installArgs, ...(mode === "rolling" ? ["--rolling"] : [])];
  const child = spawn(process.execPath, args, { env: deployment.env, stdio: ["ignore", "ignore", "pipe"] });
  const steps: Record<string, number> = {};
  const log: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => {
    log.push(line);
    const step = stepOf(line);
    if (step !== undefined && steps[step] === undefined) steps[step] = performance.now() - began;
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`loom update apply ${version} exited with ${code}:\n${log.join("\n")}`);
  return { steps };
}

/** The step a progress line of `loom update apply` ends (first occurrence counts). */
function stepOf(progress: string): string | undefined {
  const line = progress.replace(/^loom update: /, "");
  if (line.startsWith("applying ")) return "verified";
  if (line.startsWith("unpacked ")) return "unpacked";
  if (line.startsWith("backed up ")) return "backed up";
  if (line.startsWith("migrations applied")) return "migrated";
  if (line.startsWith("stopping ")) return "first stop sent";
  if (/^(serve|gateway|worker) \d+ (stopped|did not exit)/.test(line)) return "first stopped";
  if (line.startsWith("started ")) return "first started";
  if (/ is healthy at /.test(line)) return "first healthy";
  return undefined;
}

function printResults(mode: Mode, results: Record<"steady" | "restart" | "apply", Measured[]>): void {
  const label = { steady: "no operation (3 s)", restart: "restart by hand", apply: mode === "rolling" ? "loom update apply --rolling" : "loom update apply" };
  console.log(`\n## ${mode === "serve" ? "loom serve on PGlite" : "2 workers + gateway on PostgreSQL and Redis"}: median (min-max) over ${versions.length} round(s)`);
  console.log("| operation | longest gap ms | failed | succeeded | slowest answer ms | wall ms |");
  console.log("|---|---|---|---|---|---|");
  for (const name of ["steady", "restart", "apply"] as const) {
    const rows = results[name];
    const column = (pick: (row: Measured) => number, digits = 0) => formatSpread(spread(rows.map(pick)), digits);
    console.log(`| ${label[name]} | ${column((row) => row.report.longestGapMs)} | ${column((row) => row.report.failed)} | ${column((row) => row.report.succeeded)} | ${column((row) => row.report.slowestMs)} | ${name === "steady" ? "-" : column((row) => row.wallMs)} |`);
  }
  const kinds = (name: "restart" | "apply") => {
    const counts = new Map<string, number>();
    for (const row of results[name]) for (const { kind, count } of row.report.failures) counts.set(kind, (counts.get(kind) ?? 0) + count);
    return [...counts].map(([kind, count]) => `${count} × ${kind}`).join("; ") || "none";
  };
  console.log(`failures, all rounds: restart by hand: ${kinds("restart")}; apply: ${kinds("apply")}`);
  const gapRatio = results.apply.map((row, round) => row.report.longestGapMs / results.restart[round]!.report.longestGapMs);
  console.log(`apply's gap / by-hand restart's gap, per round: ${formatSpread(spread(gapRatio), 2)}`);
  if (mode === "serve") {
    const starts = results.restart.map((row) => row.startMs!);
    console.log(`a new loom serve's start (spawn to the first answer; the floor of an in-place switch's gap): ${formatSpread(spread(starts))} ms; apply's gap / that floor: ${formatSpread(spread(results.apply.map((row, round) => row.report.longestGapMs / starts[round]!)), 2)}`);
  }
  const stepNames = [...new Set(results.apply.flatMap((row) => Object.keys(row.steps ?? {})))];
  console.log(`apply's steps, ms from its start: ${stepNames.map((step) => `${step} ${formatSpread(spread(results.apply.map((row) => row.steps?.[step] ?? Number.NaN).filter(Number.isFinite)))}`).join(", ")}`);
  console.log(JSON.stringify({ bench: "update-downtime", mode, results }));
}

/** Stops every process the install records (apply's are detached, not children of this script). */
async function stopInstall(layout: InstallLayout): Promise<void> {
  await Promise.all(runningProcesses(layout).map(({ pid }) => stopProcess(pid, 0, 10_000)));
}
