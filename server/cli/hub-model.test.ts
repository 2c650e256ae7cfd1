// `hf:<org>/<repo>[:<quant>]` models against a stand-in Hub on loopback, each test with its own Hub (port) and its
// own cache folder: the quantization picked, the default, a missing one listed, the token and the endpoint used, an
// interrupted download resumed, a corrupted one refused, refusals and an unreachable Hub explained, the cache used
// again (offline too), and a split model's parts all fetched.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openModelSource } from "../../engine/model/source.js";
import { splitGguf } from "../../scripts/split-gguf.js";
import { ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { type StandInHub, type StandInRepository, startStandInHub } from "../testing/stand-in-hub.js";
import { type DefaultModelOptions, modelPath, resolveModelPath } from "./default-model.js";
import { DownloadError, DownloadVerificationError, PARTIAL_SUFFIX } from "./download.js";
import { HubError } from "./hub-api.js";
import { MissingQuantError } from "./hub-files.js";
import { HUB_RECORD_FILE, hubModelDirectory } from "./hub-model.js";

const folders: string[] = [];
const hubs: StandInHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.close()));
});
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function emptyCache(): string {
  const folder = mkdtempSync(join(tmpdir(), "loom-hub-"));
  folders.push(folder);
  return folder;
}

/** Distinct bytes for a fake file (the picking tests never load them). */
function bytes(seed: number, length = 50_000): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 131 + seed * 7) % 251));
}

async function hub(repositories: Record<string, StandInRepository>, options?: { pageSize?: number }): Promise<StandInHub> {
  const started = await startStandInHub(repositories, options);
  hubs.push(started);
  return started;
}

/** Options against `endpoint` with a fresh cache, recording notices; no token unless given. */
function against(endpoint: string, extra: DefaultModelOptions = {}): { options: DefaultModelOptions; notices: string[]; cache: string } {
  const notices: string[] = [];
  const cache = extra.cacheDirectory ?? emptyCache();
  return { notices, cache, options: { cacheDirectory: cache, endpoint, token: "", notify: (line) => notices.push(line), onProgress: () => {}, ...extra } };
}

const QWEN = "Qwen/Qwen3-0.6B-GGUF";
const QWEN_FILES = {
  "README.md": Buffer.from("# Qwen3-0.6B-GGUF\n"),
  "Qwen3-0.6B-Q8_0.gguf": bytes(1),
  "Qwen3-0.6B-Q4_K_M.gguf": bytes(2),
  "Qwen3-0.6B-BF16.gguf": bytes(3),
  "mmproj-Qwen3-0.6B-Q4_K_M.gguf": bytes(4),
  "Qwen3-0.6B-IQ4_K_M.gguf": bytes(5),
};

describe("hf: models from a stand-in Hub", () => {
  it("downloads the Q4_K_M file when no quantization is named, checks it, and uses the cache the next time", async () => {
    const stand = await hub({ [QWEN]: { files: QWEN_FILES } });
    const { options, notices, cache } = against(stand.endpoint);
    const progress: number[] = [];
    const path = await modelPath(`hf:${QWEN}`, { ...options, onProgress: (_file, received) => progress.push(received) });
    const directory = hubModelDirectory(cache, QWEN);
    expect(path).toBe(join(directory, "Qwen3-0.6B-Q4_K_M.gguf"));
    expect(readFileSync(path)).toEqual(QWEN_FILES["Qwen3-0.6B-Q4_K_M.gguf"]);
    expect(notices).toEqual([`downloading hf:${QWEN} (Qwen3-0.6B-Q4_K_M.gguf, 50 kB) from ${stand.endpoint} into ${directory}`]);
    expect(progress.at(-1)).toBe(50_000);
    expect(stand.requests.map((request) => request.url)).toEqual([
      `/api/models/${QWEN}/refs`,
      `/api/models/${QWEN}/tree/0123456789abcdef0123456789abcdef01234567?recursive=true`,
      `/${QWEN}/resolve/0123456789abcdef0123456789abcdef01234567/Qwen3-0.6B-Q4_K_M.gguf`,
      `/store/${encodeURIComponent(QWEN)}/Qwen3-0.6B-Q4_K_M.gguf`,
    ]);
    expect(readdirSync(directory).sort()).toEqual([HUB_RECORD_FILE, "Qwen3-0.6B-Q4_K_M.gguf"]);

    const again = against(stand.endpoint, { cacheDirectory: cache });
    expect(await modelPath(`hf:${QWEN}`, again.options)).toBe(path);
    expect(stand.downloads()).toHaveLength(1); // listed again, downloaded once
    expect(again.notices).toEqual([]);
  });

  it("picks the file of the quantization named, case-insensitively, never a projector or a longer tag", async () => {
    const stand = await hub({
      [QWEN]: { files: QWEN_FILES },
      "openai/gpt-oss-20b-GGUF": { files: { "gpt-oss-20b-mxfp4.gguf": bytes(6), "gpt-oss-20b-F16.gguf": bytes(7, 100) } },
    });
    const { options, cache } = against(stand.endpoint);
    expect(await modelPath(`hf:${QWEN}:q8_0`, options)).toBe(join(hubModelDirectory(cache, QWEN), "Qwen3-0.6B-Q8_0.gguf"));
    expect(await modelPath(`hf:${QWEN}:BF16`, options)).toBe(join(hubModelDirectory(cache, QWEN), "Qwen3-0.6B-BF16.gguf"));
    expect(await modelPath("hf:openai/gpt-oss-20b-GGUF:MXFP4", options)).toBe(join(hubModelDirectory(cache, "openai/gpt-oss-20b-GGUF"), "gpt-oss-20b-mxfp4.gguf"));
    expect(stand.downloads().map((request) => decodeURIComponent(request.url.split("/").at(-1)!))).toEqual(["Qwen3-0.6B-Q8_0.gguf", "Qwen3-0.6B-BF16.gguf", "gpt-oss-20b-mxfp4.gguf"]);
  });

  it("says which quantizations a repository has when the one named (or Q4_K_M) is missing, downloading nothing", async () => {
    const stand = await hub({ "ggml-org/gemma-3-1b-it-GGUF": { files: { "gemma-3-1b-it-Q8_0.gguf": bytes(8), "gemma-3-1b-it-f16.gguf": bytes(9), "mmproj-model-Q4_K_M.gguf": bytes(10) } }, "some/safetensors-only": { files: { "config.json": Buffer.from("{}"), "model.safetensors": bytes(11) } } });
    const { options } = against(stand.endpoint);
    const missing = modelPath("hf:ggml-org/gemma-3-1b-it-GGUF", options);
    await expect(missing).rejects.toThrow(MissingQuantError);
    await expect(missing).rejects.toThrow("hf:ggml-org/gemma-3-1b-it-GGUF: the repository has no Q4_K_M GGUF (the quantization picked when none is named); it has F16, Q8_0: name one, as in hf:ggml-org/gemma-3-1b-it-GGUF:F16");
    await expect(modelPath("hf:ggml-org/gemma-3-1b-it-GGUF:Q2_K", options)).rejects.toThrow("the repository has no Q2_K GGUF; it has F16, Q8_0");
    await expect(modelPath("hf:some/safetensors-only", options)).rejects.toThrow("the repository has no Q4_K_M GGUF (the quantization picked when none is named); it has no GGUF files (it has config.json, model.safetensors)");
    expect(stand.downloads()).toEqual([]);
  });

  it("sends HF_TOKEN as a Bearer token to a gated repository, and says what to do without one or with the wrong one", async () => {
    const gated = { "meta-llama/Llama-3.2-1B-Instruct-GGUF": { files: { "Llama-3.2-1B-Instruct-Q4_K_M.gguf": bytes(12) }, gatedToken: "hf_granted" } };
    const stand = await hub(gated);
    const without = against(stand.endpoint);
    const refused = modelPath("hf:meta-llama/Llama-3.2-1B-Instruct-GGUF", without.options);
    await expect(refused).rejects.toThrow(HubError);
    await expect(refused).rejects.toThrow(`meta-llama/Llama-3.2-1B-Instruct-GGUF is gated or private: the Hub asks for a token (HTTP 401). Accept its conditions on ${stand.endpoint}/meta-llama/Llama-3.2-1B-Instruct-GGUF and set HF_TOKEN`);
    await expect(modelPath("hf:meta-llama/Llama-3.2-1B-Instruct-GGUF", { ...without.options, token: "hf_other" })).rejects.toThrow("is gated: the token in HF_TOKEN has no access to it (HTTP 403)");

    const saved = process.env.HF_TOKEN;
    process.env.HF_TOKEN = "hf_granted";
    try {
      const { token: _unset, ...withToken } = against(stand.endpoint).options;
      const path = await modelPath("hf:meta-llama/Llama-3.2-1B-Instruct-GGUF", withToken);
      expect(readFileSync(path)).toEqual(gated["meta-llama/Llama-3.2-1B-Instruct-GGUF"].files["Llama-3.2-1B-Instruct-Q4_K_M.gguf"]);
    } finally {
      if (saved === undefined) delete process.env.HF_TOKEN;
      else process.env.HF_TOKEN = saved;
    }
    const granted = stand.requests.filter((request) => request.authorization === "Bearer hf_granted").map((request) => request.url.split("?")[0]);
    expect(granted).toEqual([
      "/api/models/meta-llama/Llama-3.2-1B-Instruct-GGUF/refs",
      `/api/models/meta-llama/Llama-3.2-1B-Instruct-GGUF/tree/0123456789abcdef0123456789abcdef01234567`,
      "/meta-llama/Llama-3.2-1B-Instruct-GGUF/resolve/0123456789abcdef0123456789abcdef01234567/Llama-3.2-1B-Instruct-Q4_K_M.gguf",
    ]);
    // The file store is another origin: the token stays with the Hub.
    expect(stand.downloads().map((request) => request.authorization)).toEqual([undefined]);
  });

  it("reads the Hub's address from HF_ENDPOINT and LOOM_MODEL as --model, and the listing across pages", async () => {
    const stand = await hub({ [QWEN]: { files: QWEN_FILES } }, { pageSize: 2 });
    const saved = { endpoint: process.env.HF_ENDPOINT, model: process.env.LOOM_MODEL };
    process.env.HF_ENDPOINT = `${stand.endpoint}/`;
    process.env.LOOM_MODEL = `hf:${QWEN}:Q8_0`;
    try {
      const { endpoint: _unset, ...options } = against("unused").options;
      const path = await resolveModelPath(undefined, options);
      expect(path.endsWith(join("Qwen", "Qwen3-0.6B-GGUF", "Qwen3-0.6B-Q8_0.gguf"))).toBe(true);
    } finally {
      for (const [key, value] of [["HF_ENDPOINT", saved.endpoint], ["LOOM_MODEL", saved.model]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    expect(stand.requests.filter((request) => request.url.includes("/tree/")).length).toBe(4); // 7 entries, 2 a page
  });

  it("resumes an interrupted download from its .partial file", async () => {
    const stand = await hub({ [QWEN]: { files: QWEN_FILES } });
    const { options, cache } = against(stand.endpoint);
    stand.cutNextDownload("Qwen3-0.6B-Q4_K_M.gguf", 20_000);
    const target = join(hubModelDirectory(cache, QWEN), "Qwen3-0.6B-Q4_K_M.gguf");
    await expect(modelPath(`hf:${QWEN}`, options)).rejects.toThrow(DownloadError);
    const kept = readFileSync(`${target}${PARTIAL_SUFFIX}`).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(20_000);
    expect(existsSync(target)).toBe(false);
    expect(await modelPath(`hf:${QWEN}`, options)).toBe(target);
    expect(stand.downloads().map((request) => request.range)).toEqual([undefined, `bytes=${kept}-`]);
    expect(readFileSync(target)).toEqual(QWEN_FILES["Qwen3-0.6B-Q4_K_M.gguf"]);
  });

  it("refuses a download whose bytes are not the listed ones (SHA-256), and keeps nothing of it", async () => {
    const stand = await hub({ [QWEN]: { files: QWEN_FILES } });
    const { options, cache } = against(stand.endpoint);
    const corrupted = Buffer.from(QWEN_FILES["Qwen3-0.6B-Q4_K_M.gguf"]);
    corrupted[1234] ^= 1;
    stand.corrupt("Qwen3-0.6B-Q4_K_M.gguf", corrupted);
    const failure = modelPath(`hf:${QWEN}`, options);
    await expect(failure).rejects.toThrow(DownloadVerificationError);
    await expect(failure).rejects.toThrow(/SHA-256 [0-9a-f]{64} does not match [0-9a-f]{64} from the Hub's listing of Qwen\/Qwen3-0\.6B-GGUF; the download was deleted/);
    expect(readdirSync(hubModelDirectory(cache, QWEN))).toEqual([]);
  });

  it("explains a missing repository, an unreachable Hub and a Hub that does not answer, without hanging", async () => {
    const stand = await hub({});
    const { options } = against(stand.endpoint);
    await expect(modelPath("hf:nobody/nothing-GGUF", options)).rejects.toThrow(`no repository nobody/nothing-GGUF on ${stand.endpoint} (HTTP 404: Repository not found): check the name; a private repository needs HF_TOKEN`);
    const closed = `http://127.0.0.1:${await closedLoopbackPort()}`;
    await expect(modelPath(`hf:${QWEN}`, against(closed).options)).rejects.toThrow(new RegExp(`^could not reach the Hub at ${closed} \\(GET ${closed}/api/models/${QWEN}/refs: fetch failed: connect ECONNREFUSED [\\d.:]+\\); and the cache \\(.+\\) holds no Q4_K_M GGUF of ${QWEN}$`));

    const silent: Server = createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { hubModelPath } = await import("./hub-model.js");
      const { parseHubModelName } = await import("./hub-files.js");
      const started = Date.now();
      const silentEndpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      await expect(hubModelPath(parseHubModelName(`hf:${QWEN}`), { cacheDirectory: emptyCache(), access: { endpoint: silentEndpoint, timeoutMs: 300 }, notify: () => {} }))
        .rejects.toThrow(`could not reach the Hub at ${silentEndpoint} (GET ${silentEndpoint}/api/models/${QWEN}/refs: no answer within 0.3 s)`);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("serves the cached file when the Hub cannot be reached later, and says so", async () => {
    const stand = await hub({ [QWEN]: { files: QWEN_FILES } });
    const { options, cache } = against(stand.endpoint);
    const path = await modelPath(`hf:${QWEN}:Q8_0`, options);
    await stand.close();
    const offline = against(stand.endpoint, { cacheDirectory: cache });
    expect(await modelPath(`hf:${QWEN}:q8_0`, offline.options)).toBe(path);
    expect(offline.notices).toHaveLength(1);
    expect(offline.notices[0]).toMatch(new RegExp(`^could not list ${QWEN} on the Hub \\(could not reach the Hub at ${stand.endpoint} \\(GET .*: fetch failed.*\\)\\);\nserving the cached Qwen3-0\\.6B-Q8_0\\.gguf from ${hubModelDirectory(cache, QWEN)}$`));
    // Only what was downloaded and checked is served offline.
    await expect(modelPath(`hf:${QWEN}:BF16`, against(stand.endpoint, { cacheDirectory: cache }).options)).rejects.toThrow(/holds no BF16 GGUF/);
  });

  it.skipIf(testModelSkipReason("tiny-llama") !== undefined)("downloads every part of a split model, prefers a whole file of the same quantization, and the parts load as one model", async () => {
    const whole = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const work = emptyCache();
    const parts = splitGguf(whole, join(work, "tiny-llama-Q8_0"), 3);
    const files = Object.fromEntries(parts.map((path) => [`Q8_0/${path.slice(work.length + 1)}`, readFileSync(path)]));
    const stand = await hub({
      "loom/tiny-llama-GGUF": { files: { ...files, "tiny-llama-F32.gguf": bytes(13) } },
      "loom/both-GGUF": { files: { ...files, "tiny-llama-Q8_0.gguf": readFileSync(whole) } },
    });
    const { options, notices, cache } = against(stand.endpoint);
    const path = await modelPath("hf:loom/tiny-llama-GGUF:Q8_0", options);
    const directory = hubModelDirectory(cache, "loom/tiny-llama-GGUF");
    expect(path).toBe(join(directory, "Q8_0", "tiny-llama-Q8_0-00001-of-00003.gguf"));
    expect(notices[0]).toMatch(/^downloading hf:loom\/tiny-llama-GGUF:Q8_0 \(Q8_0\/tiny-llama-Q8_0-00001-of-00003\.gguf, Q8_0\/tiny-llama-Q8_0-00002-of-00003\.gguf, Q8_0\/tiny-llama-Q8_0-00003-of-00003\.gguf, [\d.]+ [kM]B\)/);
    expect(readdirSync(join(directory, "Q8_0")).sort()).toEqual(parts.map((part) => part.slice(work.length + 1)));
    expect(openModelSource(path).totalTensorBytes).toBe(openModelSource(whole).totalTensorBytes);

    expect(await modelPath("hf:loom/both-GGUF:Q8_0", options)).toBe(join(hubModelDirectory(cache, "loom/both-GGUF"), "tiny-llama-Q8_0.gguf"));
  });
});
