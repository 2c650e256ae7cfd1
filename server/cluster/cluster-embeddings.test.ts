// Embeddings through the gateway's engine over real worker links, in process, on tiny-qwen3-embedding-mean: the vectors
// a worker's engine computes arrive bit for bit; an abort reaches the worker's engine (its inputs stop, no KV block
// held, the next request completes); a worker lost before it answered hands the request to another; with no worker
// the request fails at once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ServingEngine } from "../../engine/engine.js";
import { describeModel } from "../../engine/host/messages.js";
import type { EmbeddingRequest, EmbeddingResult } from "../../engine/embed/request.js";
import { Engine } from "../../engine/engine.js";
import { type LoadedModel, loadModel } from "../../engine/load.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { ScriptedEngine } from "../testing/scripted-engine.js";
import { ClusterEngine } from "./cluster-engine.js";
import { WorkerLink } from "./worker-link.js";
import { type WorkerServer, startWorkerServer } from "./worker-server.js";

const TOKEN = "a-test-cluster-token-of-some-length";
const TEXTS = ["Once upon a time", "The capital of France is Paris.", "A third, longer input to embed: ".repeat(5)];
/** Enough inputs for hundreds of 32-token steps: an abort lands mid-way. */
const BATCH = Array.from({ length: 96 }, (_, i) => `Input number ${i}: ${"a sentence of some words to embed, ".repeat(6)}`);

let model: LoadedModel;
beforeAll(async () => {
  model = await loadModel(await ensureTestModel("tiny-qwen3-embedding-mean", "gguf", "f32"), { contextSize: 256, threads: 1, batchSize: 32 });
}, 120_000);
afterAll(async () => {
  await model?.dispose();
});

const servers: WorkerServer[] = [];
const engines: Engine[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
  for (const engine of engines.splice(0)) engine.close();
});

async function worker(engine: ServingEngine): Promise<{ server: WorkerServer; link: WorkerLink }> {
  const served = { slugs: { openai: ["m"], anthropic: [] }, model: describeModel(model) };
  const server = await startWorkerServer({ description: { id: `w${servers.length}`, pool: "default", models: [served], capacity: 4 }, engines: new Map([["m", engine]]), promptSources: new Map(), token: TOKEN, log: () => undefined }, "127.0.0.1", 0);
  servers.push(server);
  const link = new WorkerLink(`http://127.0.0.1:${server.port}`, TOKEN, () => undefined);
  await link.ready;
  return { server, link };
}

function realEngine(): Engine {
  const engine = new Engine(model);
  engines.push(engine);
  return engine;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ClusterEngine.embed", () => {
  it("answers the worker's vectors bit for bit, with dimensions and token counts", async () => {
    const engine = realEngine();
    const { link } = await worker(engine);
    const cluster = new ClusterEngine("m", "default");
    cluster.add(link);
    const remote = await cluster.embed({ inputs: TEXTS, dimensions: 48 });
    const local = await engine.embed({ inputs: TEXTS, dimensions: 48 });
    expect(remote.pooling).toBe("mean");
    expect(remote.tokenCounts).toEqual(local.tokenCounts);
    expect(remote.embeddings).toHaveLength(TEXTS.length);
    remote.embeddings.forEach((vector, i) => {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toEqual(local.embeddings[i]);
    });
    // An engine's refusal keeps its field across the link.
    await expect(cluster.embed({ inputs: [[1, 2, 999_999]] })).rejects.toMatchObject({ kind: "invalid_request", field: "input[0][2]" });
  }, 60_000);

  it("carries an abort to the worker's engine: its inputs stop, no KV block is held, the next request completes", async () => {
    const engine = realEngine();
    const { link, server } = await worker(engine);
    const cluster = new ClusterEngine("m", "default");
    cluster.add(link);
    const caught = cluster.embed({ id: "long", inputs: BATCH }).then(() => new Error("the aborted request completed"), (error: unknown) => error as Error);
    while (engine.stats().tokens.computedPrompt === 0) await sleep(2);
    expect(server.inFlight).toBe(1);
    expect(cluster.abort("long")).toBe(true);
    expect((await caught).message).toContain("was aborted");
    while (engine.stats().running + engine.stats().waiting > 0) await sleep(2);
    const stopped = engine.stats();
    expect(stopped.kvBlocks.used).toBe(0);
    await sleep(50);
    expect(engine.stats().tokens.computedPrompt).toBe(stopped.tokens.computedPrompt);
    const total = BATCH.reduce((sum, text) => sum + model.tokenizer.encode(text, { addSpecial: true, parseSpecial: true }).length, 0);
    expect(stopped.tokens.computedPrompt).toBeLessThan(total / 2);
    expect(server.inFlight).toBe(0);
    expect(cluster.abort("long")).toBe(false);
    expect((await cluster.embed({ inputs: TEXTS })).embeddings).toHaveLength(TEXTS.length);
  }, 60_000);

  it("sends the request to another worker when its worker is lost before answering", async () => {
    /** A worker's engine that takes embedding requests and never answers (it dies before it does). */
    const asked: EmbeddingRequest[] = [];
    const silent = Object.assign(new ScriptedEngine(), {
      embed: (request: EmbeddingRequest) => {
        asked.push(request);
        return new Promise<EmbeddingResult>(() => undefined);
      },
    });
    const a = await worker(silent);
    const b = await worker(realEngine());
    const cluster = new ClusterEngine("m", "default", undefined, () => 0); // ties go to the first link: a
    cluster.add(a.link);
    cluster.add(b.link);
    const result = cluster.embed({ inputs: TEXTS });
    while (asked.length === 0) await sleep(5);
    a.server.close();
    expect((await result).embeddings).toHaveLength(TEXTS.length);
  }, 60_000);

  it("fails at once without a worker", async () => {
    await expect(new ClusterEngine("m", "default").embed({ inputs: TEXTS })).rejects.toThrow(/no worker serving this model is connected/);
  });
});
