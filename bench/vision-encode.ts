// One 896 x 896 image through Gemma 3's full-size vision tower (SigLIP so400m, 27 layers, 4096 patches) on loom's
// WebAssembly encoder against llama.cpp's mtmd (llama-mtmd-cli, flash attention at its default), same machine, same
// threads; and the time to first token of a one-image request through loom's Engine against llama-mtmd-cli's. Every
// measurement is a fresh process (loom's in bench/vision-encode-child.ts), loom and llama.cpp alternating which goes
// first in each round; encode ratios are paired by round. FLOPs: 2 x the encoder's multiply-adds (attention's
// included, its exponentials not; vision-encode-figures.ts), against the machine's nominal f32 FMA peak.
// The models: node dist/scripts/generate-model.js --preset gemma3-27b-vision-bench --format gguf --dtype q8_0
//   --mmproj-out models/mmproj-gemma3-27b-f16.gguf (the text partner llama-mtmd-cli needs, and the 27B's projector).
// Run: npm run build && node dist/bench/vision-encode.js --mmproj M --model T [options] (USAGE below; --help prints it).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { visionConfigFromGguf } from "../engine/vision/clip-config.js";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import { BenchCli } from "./bench-args.js";
import { median, printHeader } from "./bench-models.js";
import { waitForIdleCores } from "./idle-cores.js";
import { formatRatio, formatSpread, pairedRatio, spread } from "./speed-spread.js";
import type { ChildResult, ChildTask } from "./vision-encode-child.js";
import { type MtmdRun, type TimeReport, encoderWork, parseMtmdLog, parseTimeReport } from "./vision-encode-figures.js";

const USAGE = `node dist/bench/vision-encode.js --mmproj PATH --model PATH [--llama-mtmd-cli PATH] [--threads 2]
       [--repeats 3] [--ttft-repeats <repeats>] [--wait-idle 120] [--max-other-load 0.1] [--attempts 3] [--log-dir DIR]
       node dist/bench/vision-encode.js --report DIR/results.json   (prints a kept run's report again)`;
const cli = new BenchCli("vision-encode", USAGE);
const CHILD = join(dirname(fileURLToPath(import.meta.url)), "vision-encode-child.js");
const PROMPT = "Describe this image in one sentence.";
/** The ttft request's context, both sides: the prompt (about 270 tokens) and one token out. */
const CONTEXT = 1024;
/** The idle fraction of all cores, over one second, a run waits for (the bench itself is idle meanwhile). */
const IDLE_THRESHOLD = 0.9;

/** A child's stdout and stderr, its wall time and, where it was polled from /proc, its peak RSS. */
interface Finished {
  stdout: string;
  stderr: string;
  wallSeconds: number;
  /** CPU seconds every process on the machine used meanwhile (/proc/stat; NaN off Linux). */
  machineBusySeconds: number;
  polledRssBytes: number | undefined;
}

/** CPU seconds all cores have been busy (not idle, not waiting for I/O) since boot, from /proc/stat; NaN off Linux. */
function machineBusySeconds(): number {
  try {
    const fields = /^cpu\s+(.*)$/m.exec(readFileSync("/proc/stat", "utf8"))![1]!.trim().split(/\s+/).map(Number);
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0); // user .. steal; guest time is inside user
    return (total - fields[3]! - fields[4]!) / 100; // less idle and iowait; USER_HZ = 100
  } catch {
    return Number.NaN;
  }
}

/** Runs `command`; with `pollRss`, reads its peak RSS (VmHWM) from /proc every 200 ms. Rejects on a non-zero exit. */
function run(command: string, args: string[], pollRss = false): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const busyBefore = machineBusySeconds();
    const child: ChildProcess = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let polledRssBytes: number | undefined;
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => { stdout += chunk; });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => { stderr += chunk; });
    const poll = pollRss ? setInterval(() => {
      try {
        const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (hwm) polledRssBytes = Math.max(polledRssBytes ?? 0, Number(hwm[1]) * 1024);
      } catch {
        // gone already
      }
    }, 200) : undefined;
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(poll);
      const wallSeconds = (performance.now() - started) / 1000;
      const machineBusy = machineBusySeconds() - busyBefore;
      if (code !== 0) reject(new Error(`${command} exited with ${code}: ${stderr.split("\n").slice(-8).join("\n")}`));
      else resolve({ stdout, stderr, wallSeconds, machineBusySeconds: machineBusy, polledRssBytes });
    });
  });
}

/** What another process used of the machine during a run: (all cores' busy time - the run's own CPU) / (wall x cores). */
interface Load {
  otherLoad: number;
}

async function loomChild(task: ChildTask): Promise<ChildResult & Load & { stdout: string }> {
  const finished = await run(process.execPath, [CHILD, JSON.stringify(task)]);
  const result = JSON.parse(finished.stdout.trim().split("\n").at(-1)!) as ChildResult;
  return { ...result, otherLoad: otherLoad(finished, result.processCpuSeconds), stdout: finished.stdout };
}

function otherLoad(finished: Finished, ownCpuSeconds: number | undefined): number {
  return Math.max(0, (finished.machineBusySeconds - (ownCpuSeconds ?? 0)) / (finished.wallSeconds * availableParallelism()));
}

interface LlamaResult extends Load {
  mtmd: MtmdRun;
  time: TimeReport;
  wallSeconds: number;
  log: string;
}

async function llamaRun(binary: string, model: string, mmproj: string, image: string, threads: number): Promise<LlamaResult> {
  // Flash attention is left at its default (auto: the clip warmup enables it where the backend has it); -lv 4 and
  // --perf make the CLI log the image's encode and decode and the perf counters.
  const args = ["-m", model, "--mmproj", mmproj, "--image", image, "-p", PROMPT, "-n", "1", "--temp", "0", "-t", String(threads), "-c", String(CONTEXT), "--perf", "-lv", "4"];
  const timed = existsSync("/usr/bin/time");
  const finished = timed ? await run("/usr/bin/time", ["-v", binary, ...args]) : await run(binary, args, true);
  const time = timed ? parseTimeReport(finished.stderr) : { maxRssBytes: finished.polledRssBytes, cpuSeconds: undefined, wallSeconds: finished.wallSeconds };
  const mtmd = parseMtmdLog(finished.stderr);
  if (mtmd.encodeMs === undefined) throw new Error(`llama-mtmd-cli logged no encode time:\n${finished.stderr.split("\n").slice(-20).join("\n")}`);
  return { mtmd, time, wallSeconds: finished.wallSeconds, otherLoad: otherLoad(finished, time.cpuSeconds), log: finished.stderr };
}

/** An 896 x 896 (the encoder's own size: no resize) PNG of colour gradients with edges, written under `dir`. */
async function writeImage(dir: string, size: number): Promise<string> {
  const data = Buffer.alloc(size * size * 3);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const at = (y * size + x) * 3;
      data[at] = (x * 255) / (size - 1);
      data[at + 1] = (y * 255) / (size - 1);
      data[at + 2] = (x + y) % 64 < 32 ? 40 : 220;
    }
  }
  const path = join(dir, `image-${size}.png`);
  await sharp(data, { raw: { width: size, height: size, channels: 3 } }).png().toFile(path);
  return path;
}

const gib = (bytes: number | undefined) => (bytes === undefined ? "-" : `${(bytes / 2 ** 30).toFixed(2)} GiB`);
const seconds = (values: number[], digits = 1) => formatSpread(spread(values), digits);
const defined = (values: Array<number | undefined>) => values.filter((value): value is number => value !== undefined);
const progress = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const values = cli.parse({
    mmproj: { type: "string" }, model: { type: "string" }, "llama-mtmd-cli": { type: "string" }, threads: { type: "string" },
    repeats: { type: "string" }, "ttft-repeats": { type: "string" }, "wait-idle": { type: "string" }, "max-other-load": { type: "string" },
    attempts: { type: "string" }, "log-dir": { type: "string" }, report: { type: "string" },
  });
  if (values.report !== undefined) {
    if (!existsSync(values.report)) cli.fail(`--report names no file: ${values.report}`);
    const kept = JSON.parse(readFileSync(values.report, "utf8")) as Measured & { header: string[] };
    console.log(`# the report of ${values.report}, measured as follows:`);
    for (const line of kept.header) console.log(line);
    report(kept);
    return;
  }
  if (values.mmproj === undefined || !existsSync(values.mmproj)) cli.fail(`--mmproj must name an mmproj GGUF; got ${values.mmproj ?? "nothing"}`);
  if (values.model === undefined || !existsSync(values.model)) cli.fail(`--model must name the text model GGUF; got ${values.model ?? "nothing"}`);
  const peer = values["llama-mtmd-cli"];
  if (peer !== undefined && !existsSync(peer)) cli.fail(`--llama-mtmd-cli names no file: ${peer}`);
  const threads = cli.integer("threads", values.threads ?? 2);
  const repeats = cli.integer("repeats", values.repeats ?? 3);
  const ttftRepeats = cli.integer("ttft-repeats", values["ttft-repeats"] ?? repeats, 0, repeats);
  const waitIdle = cli.integer("wait-idle", values["wait-idle"] ?? 120, 0);
  const maxOtherLoad = Number(values["max-other-load"] ?? 0.1);
  if (!(maxOtherLoad >= 0 && maxOtherLoad <= 1)) cli.fail(`--max-other-load must be a fraction from 0 to 1; got ${values["max-other-load"]}`);
  const attempts = cli.integer("attempts", values.attempts ?? 3);
  const logDir = values["log-dir"];
  const { mmproj, model } = values as { mmproj: string; model: string };

  const header = readGgufHeader(mmproj);
  const config = visionConfigFromGguf(mmproj, header.metadata, header.tensors);
  const work = encoderWork(config);
  const flop = 2 * work.total;
  // The header's lines are kept for results.json.
  const headerLines: string[] = [];
  const log = console.log;
  console.log = (line: string) => { headerLines.push(line); log(line); };
  const machine = printHeader(
    `node dist/bench/vision-encode.js --mmproj ${mmproj} --model ${model}${peer ? ` --llama-mtmd-cli ${peer}` : ""} --threads ${threads} --repeats ${repeats} --ttft-repeats ${ttftRepeats} --wait-idle ${waitIdle} --max-other-load ${maxOtherLoad} --attempts ${attempts}${logDir ? ` --log-dir ${logDir}` : ""}`,
    threads,
    [
      `encoder: ${config.patchesPerSide ** 2} patches of ${config.patchSize} px, width ${config.hiddenSize}, feed-forward ${config.feedForwardSize}, ${config.layers} layers of ${config.heads} heads, ${config.tokensPerImage} tokens of ${config.outputSize} out`,
      `work per image: ${(flop / 1e12).toFixed(3)} TFLOP (2 x multiply-adds: layer matmuls ${(2 * work.layerMatmuls / 1e12).toFixed(3)}, attention q k^T and p v ${(2 * work.attention / 1e12).toFixed(3)}, patch embedding and projection ${(2 * work.patchAndProjection / 1e12).toFixed(3)}; norms, GELU, softmax not counted)`,
      "each measurement a fresh process: loom's child (one encode, no warm-up encode) and llama-mtmd-cli (-n 1, flash attention at its default); loom and llama.cpp alternate which goes first",
      `a run during which other processes used more than ${(maxOtherLoad * 100).toFixed(0)}% of the machine's cores (/proc/stat) runs again, at most ${attempts} attempts`,
    ],
  );
  const peak = (machine.peakFlops * threads) / machine.cores;
  console.log(`# peak: ${(peak / 1e9).toFixed(0)} GFLOP/s nominal f32 FMA for ${threads} of ${machine.cores} cores (bench/machine.ts); no measured matmul peak`);
  if (peer) console.log(`# peer: ${peer} (${(await run(peer, ["--version"]).catch(() => ({ stderr: "version unknown" }))).stderr.trim().split("\n").join("; ")})`);
  else console.log("# peer: none (--llama-mtmd-cli not given): loom's figures alone");
  console.log = log;
  if (logDir) mkdirSync(logDir, { recursive: true });

  const scratch = mkdtempSync(join(tmpdir(), "loom-vision-bench-"));
  const encodes: Array<ChildResult & Load> = [];
  const requests: Array<ChildResult & Load> = [];
  const llamas: LlamaResult[] = [];
  try {
    const image = await writeImage(scratch, config.imageSize);
    const task = (role: ChildTask["role"]): ChildTask => ({ role, mmproj, model, image, prompt: PROMPT, threads, context: CONTEXT });
    /** Runs `once` until other processes leave the machine alone enough (or attempts run out), waiting for idle cores first. */
    const measure = async <T extends Load>(name: string, once: () => Promise<T>, describe: (result: T) => string, save: (result: T) => string): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        const { idle, waitedSeconds } = waitIdle > 0 ? await waitForIdleCores(IDLE_THRESHOLD, waitIdle) : { idle: Number.NaN, waitedSeconds: 0 };
        let result: T;
        try {
          result = await once();
        } catch (error) {
          // A child that fails is reported and run again: one failure does not cost the other rounds.
          progress(`${name}: attempt ${attempt} failed: ${(error as Error).message}`);
          if (attempt >= attempts) throw error;
          continue;
        }
        const kept = result.otherLoad <= maxOtherLoad || attempt >= attempts;
        progress(`${name}: ${describe(result)}; other processes ${(result.otherLoad * 100).toFixed(0)}% of the cores (idle ${(idle * 100).toFixed(0)}% before, waited ${waitedSeconds.toFixed(0)} s)${kept ? "" : "; discarded, runs again"}`);
        if (logDir) writeFileSync(join(logDir, `${name.replace(/[^a-z0-9]+/gi, "-")}-attempt${attempt}.log`), save(result));
        if (kept) return result;
      }
    };
    const share = (cpu: number, ms: number) => `CPU ${((cpu / (ms / 1000) / threads) * 100).toFixed(0)}% of ${threads} threads`;
    for (let round = 0; round < repeats; round++) {
      const sides = round % 2 === 0 ? ["loom", "llama"] : ["llama", "loom"];
      for (const side of sides) {
        if (side === "loom") {
          encodes.push(await measure(`round ${round + 1} loom encode`, () => loomChild(task("encode")),
            (r) => `${(r.encodeMs! / 1000).toFixed(1)} s, ${share(r.cpuSeconds, r.encodeMs!)}`, (r) => r.stdout));
        } else if (peer) {
          llamas.push(await measure(`round ${round + 1} llama.cpp`, () => llamaRun(peer, model, mmproj, image, threads),
            (r) => `encode ${(r.mtmd.encodeMs! / 1000).toFixed(1)} s, ttft ${((r.mtmd.timeToFirstTokenMs ?? Number.NaN) / 1000).toFixed(1)} s, ${share(r.time.cpuSeconds ?? Number.NaN, r.wallSeconds * 1000)} over the whole process`, (r) => r.log));
        }
      }
      if (round < ttftRepeats) {
        requests.push(await measure(`round ${round + 1} loom ttft`, () => loomChild(task("ttft")),
          (r) => `ttft ${((r.decodeMs + r.ttftMs!) / 1000).toFixed(1)} s (encode ${(r.encodeMs! / 1000).toFixed(1)} s), ${share(r.cpuSeconds, r.ttftMs!)}`, (r) => r.stdout));
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const measured: Measured = { work, flop, peak, threads, imageSize: config.imageSize, encodes, requests, llamas: llamas.map((result) => ({ ...result, log: "" })) };
  // Everything the report reads, so that --report prints it again (the logs beside it hold the raw output).
  if (logDir) writeFileSync(join(logDir, "results.json"), JSON.stringify({ header: headerLines, ...measured }, null, 1));
  report(measured);
}

interface Measured {
  work: ReturnType<typeof encoderWork>;
  flop: number;
  peak: number;
  threads: number;
  imageSize: number;
  encodes: Array<ChildResult & Load>;
  requests: Array<ChildResult & Load>;
  llamas: LlamaResult[];
}

function report({ work, flop, peak, threads, imageSize, encodes, requests, llamas }: Measured): void {
  const loomEncode = encodes.map((result) => result.encodeMs! / 1000);
  const llamaEncode = llamas.map((result) => result.mtmd.encodeMs! / 1000);
  const rate = (values: number[]) => spread(values.map((s) => flop / s / 1e9));
  const ofPeak = (values: number[]) => `${((flop / median(values) / peak) * 100).toFixed(1)}%`;
  const cpuShare = encodes.map((result) => result.cpuSeconds / (result.encodeMs! / 1000) / threads);

  console.log("\n## Encoding one image (seconds: median (min-max))\n");
  console.log("| | encode s | GFLOP/s | of peak | speed vs llama.cpp |");
  console.log("|---|---|---|---|---|");
  console.log(`| loom (WebAssembly, preprocessing included) | ${seconds(loomEncode)} | ${formatSpread(rate(loomEncode))} | ${ofPeak(loomEncode)} | ${llamas.length ? formatRatio(pairedRatio(llamaEncode, loomEncode)) : "-"} |`);
  if (llamas.length) console.log(`| llama.cpp mtmd (flash attention ${[...new Set(llamas.map((l) => l.mtmd.flashAttention ?? "?"))].join("/")}, preprocessing not included) | ${seconds(llamaEncode)} | ${formatSpread(rate(llamaEncode))} | ${ofPeak(llamaEncode)} | 1 |`);
  console.log("\nBy round (CPU s: the process's CPU time, every thread, during the encode (loom) or in all (llama.cpp, its load and warm-up included); CPU: that over the wall time, per thread; other: what other processes used of all cores meanwhile):\n");
  console.log("| round | loom encode s | loom CPU s | loom CPU | other | llama.cpp encode s | llama.cpp CPU s | llama.cpp CPU | other |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  const percent = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "-" : `${(value * 100).toFixed(0)}%`);
  for (let round = 0; round < Math.max(encodes.length, llamas.length); round++) {
    const loom = encodes[round];
    const llama = llamas[round];
    const llamaCpu = llama?.time.cpuSeconds === undefined ? undefined : llama.time.cpuSeconds / llama.wallSeconds / threads;
    console.log(`| ${round + 1} | ${loom ? (loom.encodeMs! / 1000).toFixed(1) : "-"} | ${loom ? loom.cpuSeconds.toFixed(0) : "-"} | ${percent(cpuShare[round])} | ${percent(loom?.otherLoad)} | ${llama ? (llama.mtmd.encodeMs! / 1000).toFixed(1) : "-"} | ${llama?.time.cpuSeconds?.toFixed(0) ?? "-"} | ${percent(llamaCpu)} | ${percent(llama?.otherLoad)} |`);
  }

  console.log("\n## loom's encode, by part (ms: median (min-max))\n");
  console.log("| load the mmproj | PNG to RGB (sharp) | preprocessing (imagePatches) | encode, preprocessing included |");
  console.log("|---|---|---|---|");
  console.log(`| ${seconds(encodes.map((r) => r.loadMs), 0)} | ${seconds(encodes.map((r) => r.decodeMs), 0)} | ${seconds(encodes.map((r) => r.preprocessMs!), 0)} | ${seconds(encodes.map((r) => r.encodeMs!), 0)} |`);

  // Per kernel: the medians over the encode runs, and the rate of the kernels the FLOP count splits by.
  const kernelFlop: Record<string, number> = { matmul_f16: 2 * work.layerMatmuls, attention_dense: 2 * work.attention, matmul_f32: 2 * work.patchAndProjection };
  const names = [...new Set(encodes.flatMap((result) => Object.keys(result.kernels)))];
  const rows = names.map((name) => ({ name, ms: median(encodes.map((r) => r.kernels[name]?.milliseconds ?? 0)), calls: encodes[0]?.kernels[name]?.calls ?? 0 })).sort((a, b) => b.ms - a.ms);
  const encodeMs = median(encodes.map((r) => r.encodeMs!));
  console.log("\n## Where loom's encode goes, by kernel (wall time on the calling thread, median over the runs)\n");
  console.log("| kernel | calls | s | share of the encode | GFLOP/s | of peak |");
  console.log("|---|---|---|---|---|---|");
  for (const { name, ms, calls } of rows) {
    const f = kernelFlop[name];
    console.log(`| ${name} | ${calls} | ${(ms / 1000).toFixed(2)} | ${((ms / encodeMs) * 100).toFixed(1)}% | ${f ? (f / (ms / 1000) / 1e9).toFixed(1) : "-"} | ${f ? `${((f / (ms / 1000) / peak) * 100).toFixed(1)}%` : "-"} |`);
  }
  const kernelTotal = rows.reduce((sum, row) => sum + row.ms, 0);
  console.log(`| (outside kernels: preprocessing, copies) | | ${((encodeMs - kernelTotal) / 1000).toFixed(2)} | ${(((encodeMs - kernelTotal) / encodeMs) * 100).toFixed(1)}% | | |`);

  if (requests.length || llamas.length) {
    console.log("\n## Time to first token of a one-image request (seconds: median (min-max))\n");
    console.log(`The request: the ${imageSize} x ${imageSize} image then "${PROMPT}", Gemma 3's chat template, 1 token out, models loaded.\n`);
    console.log("| | prompt tokens | TTFT s | of which the image's encode s | speed vs llama.cpp |");
    console.log("|---|---|---|---|---|");
    const loomTtft = requests.map((r) => (r.decodeMs + r.ttftMs!) / 1000);
    const llamaTtft = defined(llamas.map((l) => l.mtmd.timeToFirstTokenMs)).map((ms) => ms / 1000);
    if (requests.length) console.log(`| loom (PNG decode + submit to first token) | ${requests[0]!.promptTokens ?? "-"} | ${seconds(loomTtft)} | ${seconds(requests.map((r) => r.encodeMs! / 1000))} | ${llamaTtft.length ? formatRatio(pairedRatio(llamaTtft, loomTtft)) : "-"} |`);
    if (llamas.length) console.log(`| llama-mtmd-cli (image load to first token, from its log) | ${llamas[0]!.mtmd.promptTokens ?? "-"} | ${seconds(llamaTtft)} | ${seconds(llamaEncode)} | 1 |`);
    if (requests.length) console.log(`\n(loom: engine's own timeToFirstToken ${seconds(requests.map((r) => r.engineTtftMs! / 1000))} s, PNG decode ${seconds(requests.map((r) => r.decodeMs), 0)} ms, model + mmproj load ${seconds(requests.map((r) => r.loadMs / 1000))} s)`);
    // The rest of the TTFT beside the encode: PNG decode, preprocessing, template and tokens, prefill of the image's
    // and the text's tokens, sampling. (llama.cpp's perf "prompt eval" counter is no guide here: it spans the encode.)
    if (requests.length) console.log(`(loom, the rest beside the encode: ${seconds(requests.map((r) => (r.decodeMs + r.ttftMs! - r.encodeMs!) / 1000), 2)} s)`);
    if (llamas.length) console.log(`(llama.cpp, the rest beside the encode: ${seconds(llamas.map((l) => ((l.mtmd.timeToFirstTokenMs ?? Number.NaN) - l.mtmd.encodeMs!) / 1000), 2)} s, of which the image's tokens through the text model ${formatSpread(spread(defined(llamas.map((l) => l.mtmd.imageDecodeMs))), 0)} ms)`);
  }

  console.log("\n## Peak memory (RSS)\n");
  console.log("| process | peak RSS |");
  console.log("|---|---|");
  console.log(`| loom, mmproj alone and one encode | ${gib(median(encodes.map((r) => r.maxRssBytes)))} |`);
  if (requests.length) console.log(`| loom, text model + mmproj and one request | ${gib(median(requests.map((r) => r.maxRssBytes)))} |`);
  if (llamas.length) console.log(`| llama-mtmd-cli, text model + mmproj and one request (${existsSync("/usr/bin/time") ? "/usr/bin/time -v" : "VmHWM polled from /proc"}) | ${gib(median(defined(llamas.map((l) => l.time.maxRssBytes))))} |`);
}

await main();
