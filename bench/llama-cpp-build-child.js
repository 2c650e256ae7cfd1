// Child process that runs one llama.cpp CPU build (bench/llama-cpp-builds.ts starts it): receives one job over IPC,
// loads llama.cpp (through the pinned copy of the prebuilt package when the job names one), measures prefill and
// decode speed when asked, and answers with the llama.cpp libraries this process has mapped (/proc/self/maps), so the
// parent can check which CPU build really ran. Plain JavaScript: it is its own process, also when tests run the
// TypeScript sources.
import { readFileSync } from "node:fs";
import { register } from "node:module";

process.once("message", async (job) => {
  try {
    if (job.pinnedEntryUrl !== undefined) {
      const data = { packageName: job.packageName, entryUrl: job.pinnedEntryUrl };
      register(new URL("./llama-cpp-build-hooks.js", import.meta.url), { data });
    }
    // Imported only now: node-llama-cpp must resolve the platform package after the hook is in place.
    const { getLlama } = await import("node-llama-cpp");
    const llama = await getLlama(job.llamaOptions);
    const speeds = job.speed === undefined ? undefined : await measure(llama, job.speed);
    answer({ ...mappedLibraries(), speeds });
  } catch (error) {
    answer({ ...mappedLibraries(), error: String(error?.stack ?? error) });
  }
});

function answer(result) {
  process.send(result, () => process.exit(0));
}

/** The llama.cpp CPU libraries and addons mapped into this process (empty where /proc is absent). */
function mappedLibraries() {
  let maps = "";
  try {
    maps = readFileSync("/proc/self/maps", "utf8");
  } catch {
    // Not Linux: the parent reports that it cannot tell which build ran.
  }
  // A maps line is "address perms offset device inode   path"; only the path holds a slash.
  const paths = new Set(maps.split("\n").filter((line) => line.includes("/")).map((line) => line.slice(line.indexOf("/"))));
  return {
    cpuLibraries: [...paths].filter((path) => /\/libggml-cpu[^/]*\.so$/.test(path)),
    addons: [...paths].filter((path) => path.endsWith("/llama-addon.node")),
  };
}

/** Prefill and decode tokens/s of one greedy generation, after a short unmeasured one (threads started, weights touched). */
async function measure(llama, { modelPath, prompt, decode, threads, warmupTokens, contextOptions }) {
  const model = await llama.loadModel({ modelPath });
  try {
    const context = await model.createContext({ contextSize: prompt.length + decode + 16, batchSize: 512, threads, ...contextOptions });
    try {
      const sequence = context.getSequence();
      await timedGeneration(sequence, prompt, warmupTokens);
      await sequence.clearHistory();
      return await timedGeneration(sequence, prompt, decode);
    } finally {
      await context.dispose();
    }
  } finally {
    await model.dispose();
  }
}

/**
 * Prefill: prompt tokens over the time to the first token. Decode: the tokens after the first over the time after it.
 * CPU seconds of the whole process beside them: less than threads x wall time means other processes had the cores.
 */
async function timedGeneration(sequence, prompt, count) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  let first = 0;
  let generated = 0;
  for await (const _ of sequence.evaluate(prompt, { temperature: 0 })) {
    if (generated === 0) first = performance.now();
    if (++generated >= count) break;
  }
  const end = performance.now();
  const { user, system } = process.cpuUsage(cpu);
  return {
    prefillTokensPerSecond: prompt.length / ((first - start) / 1000),
    decodeTokensPerSecond: (generated - 1) / ((end - first) / 1000),
    seconds: (end - start) / 1000,
    cpuSeconds: (user + system) / 1e6,
  };
}
