// Tests for the default model against a loopback stand-in for the Hugging Face Hub: the first download (progress,
// the Hub's URL layout), the cache (a second run downloads nothing), and the offline fallback to the bundled model.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../../engine/cli/arguments.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { BUNDLED_MODEL, DEFAULT_MODEL, type DefaultModelOptions, defaultModelPath, hubEndpoint, resolveModelPath } from "./default-model.js";

const folders: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => {
    server.close(resolve);
    server.closeAllConnections();
  })));
});
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** An empty cache folder, removed after the tests. */
function emptyCache(): string {
  const folder = mkdtempSync(join(tmpdir(), "loom-cache-"));
  folders.push(folder);
  return folder;
}

/** The default model's files as the stand-in Hub serves them (content is irrelevant here: nothing loads them). */
const FILES: Record<string, Buffer> = Object.fromEntries(DEFAULT_MODEL.files.map((file, index) => [file, Buffer.alloc(20_000 * (index + 1), index + 1)]));

/** A stand-in Hub serving FILES under the default model's repository, recording each request path. */
async function hub(): Promise<{ endpoint: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url!);
    const prefix = `/${DEFAULT_MODEL.repository}/resolve/main/`;
    const body = request.url!.startsWith(prefix) ? FILES[request.url!.slice(prefix.length)] : undefined;
    if (!body) {
      response.writeHead(404, "Not Found");
      response.end();
      return;
    }
    response.writeHead(200, { "content-length": body.length });
    response.end(body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}


/** Options that record notices and progress instead of writing to stderr. */
function recording(options: DefaultModelOptions): { options: DefaultModelOptions; notices: string[]; progress: Map<string, Array<[number, number | undefined]>> } {
  const notices: string[] = [];
  const progress = new Map<string, Array<[number, number | undefined]>>();
  return {
    notices,
    progress,
    options: {
      ...options,
      notify: (line) => notices.push(line),
      onProgress: (file, received, total) => progress.set(file, [...(progress.get(file) ?? []), [received, total]]),
    },
  };
}

const modelDirectory = (cache: string) => join(cache, "models", ...DEFAULT_MODEL.repository.split("/"));

describe("defaultModelPath", () => {
  it("downloads the default model's files from the Hub into the cache once, with progress; a second run downloads nothing", async () => {
    const { endpoint, requests } = await hub();
    const cache = emptyCache();
    const first = recording({ cacheDirectory: cache, endpoint });
    expect(await defaultModelPath(first.options)).toBe(modelDirectory(cache));
    expect(requests).toEqual(DEFAULT_MODEL.files.map((file) => `/${DEFAULT_MODEL.repository}/resolve/main/${file}`));
    for (const file of DEFAULT_MODEL.files) {
      expect(readFileSync(join(modelDirectory(cache), file))).toEqual(FILES[file]);
      const steps = first.progress.get(file)!;
      expect(steps[0]).toEqual([0, FILES[file].length]);
      expect(steps.at(-1)).toEqual([FILES[file].length, FILES[file].length]);
    }
    expect(readdirSync(modelDirectory(cache)).sort()).toEqual([...DEFAULT_MODEL.files].sort()); // no .partial left
    expect(first.notices).toEqual([`no --model given and LOOM_MODEL is unset; downloading ${DEFAULT_MODEL.repository} from ${endpoint} into ${modelDirectory(cache)}`]);

    const second = recording({ cacheDirectory: cache, endpoint });
    expect(await defaultModelPath(second.options)).toBe(modelDirectory(cache));
    expect(requests).toHaveLength(DEFAULT_MODEL.files.length);
    expect(second.notices).toEqual([]);
  });

  it("downloads only the files the cache lacks", async () => {
    const { endpoint, requests } = await hub();
    const cache = emptyCache();
    await defaultModelPath(recording({ cacheDirectory: cache, endpoint }).options);
    rmSync(join(modelDirectory(cache), "tokenizer.json"));
    await defaultModelPath(recording({ cacheDirectory: cache, endpoint }).options);
    expect(requests.slice(DEFAULT_MODEL.files.length)).toEqual([`/${DEFAULT_MODEL.repository}/resolve/main/tokenizer.json`]);
  });

  it("offline, serves the bundled model and says which, why, and how to get the default or pass a model", async () => {
    const cache = emptyCache();
    const endpoint = `http://127.0.0.1:${await closedLoopbackPort()}`;
    const run = recording({ cacheDirectory: cache, endpoint });
    expect(await defaultModelPath(run.options)).toBe(BUNDLED_MODEL.path);
    expect(existsSync(BUNDLED_MODEL.path)).toBe(true);
    expect(run.notices).toHaveLength(3);
    expect(run.notices[1]).toMatch(new RegExp(`^could not download ${DEFAULT_MODEL.repository}: GET ${endpoint}/\\S+/config\\.json: fetch failed: connect ECONNREFUSED`));
    expect(run.notices[2]).toContain(`serving the bundled model instead: stories260K (${BUNDLED_MODEL.path}),\na 260K-parameter model trained on children's stories`);
    expect(run.notices[2]).toContain(`For the default model, run loom again with network access (it is downloaded once into ${modelDirectory(cache)};`);
    expect(run.notices[2]).toContain("--model <file.gguf or Hugging Face directory>, or LOOM_MODEL");
    expect(readdirSync(modelDirectory(cache))).toEqual([]); // nothing partial is taken for a model next time
  });

  it("falls back the same way when the Hub refuses a file, naming the status", async () => {
    const { endpoint } = await hub();
    const run = recording({ cacheDirectory: emptyCache(), endpoint: `${endpoint}/elsewhere` });
    expect(await defaultModelPath(run.options)).toBe(BUNDLED_MODEL.path);
    expect(run.notices[1]).toMatch(/: HTTP 404 Not Found$/);
  });

  it("without the bundled model either, stops with what to do", async () => {
    const run = recording({ cacheDirectory: emptyCache(), endpoint: `http://127.0.0.1:${await closedLoopbackPort()}`, bundled: { ...BUNDLED_MODEL, path: "/nonexistent/stories260K.gguf" } });
    const failure = defaultModelPath(run.options);
    await expect(failure).rejects.toThrow(UsageError);
    await expect(failure).rejects.toThrow(/could not download the default model .*ECONNREFUSED [\d.:]+\), and the bundled model \/nonexistent\/stories260K\.gguf is missing\.\nTo serve a model, run loom again with network access \(it is downloaded once into .*; HF_ENDPOINT names a Hub mirror\)/);
  });
});

describe("resolveModelPath", () => {
  it("takes --model, else LOOM_MODEL, before the default model", async () => {
    const saved = process.env.LOOM_MODEL;
    try {
      process.env.LOOM_MODEL = "/models/from-env.gguf";
      expect(await resolveModelPath("/models/flag.gguf")).toBe("/models/flag.gguf");
      expect(await resolveModelPath(undefined)).toBe("/models/from-env.gguf");
      delete process.env.LOOM_MODEL;
      const { endpoint } = await hub();
      expect(await resolveModelPath(undefined, recording({ cacheDirectory: emptyCache(), endpoint }).options)).toMatch(/SmolLM2-135M-Instruct$/);
    } finally {
      if (saved === undefined) delete process.env.LOOM_MODEL;
      else process.env.LOOM_MODEL = saved;
    }
  });
});

describe("hubEndpoint", () => {
  it("is HF_ENDPOINT without trailing slashes, else huggingface.co", () => {
    const saved = process.env.HF_ENDPOINT;
    try {
      process.env.HF_ENDPOINT = "https://hf-mirror.example/";
      expect(hubEndpoint()).toBe("https://hf-mirror.example");
      delete process.env.HF_ENDPOINT;
      expect(hubEndpoint()).toBe("https://huggingface.co");
    } finally {
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
    }
  });
});
