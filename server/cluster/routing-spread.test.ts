// Cache-aware routing over real worker links and worker servers whose engines report the prompts they ran as cached
// (as the engine's prefix index does): every prompt opens with the same template block, which is cached wherever
// anything ran. That block is no match: 8 tenants sending in turn at equal load spread over every worker, a worker
// added later takes the new tenants, and each tenant still stays where its own system prompt is cached (a sole
// tenant too, whose long system prompt every recent request shares).
import { afterEach, describe, expect, it } from "vitest";
import type { EngineStream } from "../../engine/engine.js";
import { chainHashes } from "../../engine/kv/block-hash.js";
import type { EngineRequest, PrefixCacheSnapshot, PrefixCacheUpdate } from "../../engine/request.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "../testing/scripted-engine.js";
import { ClusterEngine } from "./cluster-engine.js";
import { WorkerLink } from "./worker-link.js";
import { type WorkerServer, startWorkerServer } from "./worker-server.js";

const TOKEN = "a-test-cluster-token-of-some-length";
const BLOCK_SIZE = 16;
/** What the chat template puts before every prompt: exactly one block. */
const TEMPLATE = "<|im_start|>sys\n";

/** A prompt's tokens: one per character (the gateway and the workers tokenize alike, as the real ones do). */
function tokens(request: EngineRequest): number[] {
  const text = "text" in request.input ? request.input.text : "";
  return [...text].map((char) => char.codePointAt(0)!);
}

/** A scripted engine that caches each prompt it runs, reporting the chains as the engine's prefix index does. */
class CachingEngine extends ScriptedEngine {
  readonly #cached = new Set<string>();
  readonly #listeners = new Set<(update: PrefixCacheUpdate) => void>();

  override submit(request: EngineRequest): EngineStream {
    const added = chainHashes(tokens(request), BLOCK_SIZE).filter((hash) => !this.#cached.has(hash));
    for (const hash of added) this.#cached.add(hash);
    if (added.length > 0) for (const listener of this.#listeners) listener({ added, removed: [] });
    return super.submit(request);
  }

  onPrefixCacheChange(listener: (update: PrefixCacheUpdate) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  prefixCacheSnapshot(): PrefixCacheSnapshot {
    return { blockSize: BLOCK_SIZE, hashes: [...this.#cached] };
  }
}

const servers: WorkerServer[] = [];
afterEach(() => { for (const server of servers.splice(0)) server.close(); });

async function worker(): Promise<{ engine: CachingEngine; link: WorkerLink }> {
  const engine = new CachingEngine();
  engine.script = { deltas: ["ok"] };
  const model = { slugs: { openai: ["m"], anthropic: [] }, model: SCRIPTED_MODEL };
  const server = await startWorkerServer({ description: { id: `w${servers.length}`, pool: "default", models: [model], capacity: 4 }, engines: new Map([["m", engine]]), promptSources: new Map(), token: TOKEN, log: () => undefined }, "127.0.0.1", 0);
  servers.push(server);
  const link = new WorkerLink(`http://127.0.0.1:${server.port}`, TOKEN, () => undefined);
  await link.ready;
  while (link.blockSize("m") === undefined) await new Promise((resolve) => setTimeout(resolve, 5)); // its cache snapshot
  return { engine, link };
}

function gateway(): ClusterEngine {
  return new ClusterEngine("m", "default", {
    otherLinks: () => [],
    prefixHashes: (request, blockSize) => ({ hashes: chainHashes(tokens(request), blockSize), promptTokens: tokens(request).length }),
    loadMargin: undefined,
    policy: "cache-aware",
  });
}

/** Tenant `tenant`'s prompt: the template, its own system prompt of some 100 characters, then a question. */
function prompt(tenant: number, question: string): string {
  const system = `You are the assistant of tenant ${tenant}. `.repeat(3);
  return `${TEMPLATE}${system}\n${question}`;
}

/**
 * Sends one request and waits for its end and for every worker to report its load back to 0 (reports come at most
 * every 20 ms), so that each request is routed at equal load.
 */
async function ask(cluster: ClusterEngine, tenant: number, question: string): Promise<void> {
  for await (const event of cluster.submit({ input: { text: prompt(tenant, question) } })) if (event.type === "error") throw event.error;
  while (cluster.links.some((link) => link.load > 0)) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** The tenants whose requests each engine ran (by the tenant number in the prompt). */
function tenantsOf(engine: CachingEngine): Set<number> {
  return new Set(engine.requests.map((request) => Number(/tenant (\d+)/.exec((request.input as { text: string }).text)![1])));
}

describe("cache-aware routing when every prompt shares the template's first block", () => {
  it("spreads 8 tenants sending in turn at equal load over all 3 workers, each tenant's requests on one worker", async () => {
    const workers = [await worker(), await worker(), await worker()];
    const cluster = gateway();
    for (const { link } of workers) cluster.add(link);
    for (let round = 0; round < 4; round++) for (let tenant = 0; tenant < 8; tenant++) await ask(cluster, tenant, `question ${round}`);
    const tenants = workers.map(({ engine }) => tenantsOf(engine));
    for (const held of tenants) expect(held.size).toBeGreaterThanOrEqual(2); // 8 over 3: none left idle
    expect(tenants.reduce((sum, held) => sum + held.size, 0)).toBe(8); // no tenant split over two workers
    expect(cluster.routing.toCachedPrefix).toBeGreaterThanOrEqual(24); // rounds 2-4 went to their system prompt
  });

  it("keeps a sole tenant's requests where its long system prompt is cached, though every recent request shares it", async () => {
    const workers = [await worker(), await worker(), await worker()];
    const cluster = gateway();
    for (const { link } of workers) cluster.add(link);
    const long = (question: string) => `${TEMPLATE}${"You answer questions about the harbor's tides. ".repeat(6)}\n${question}`;
    for (const question of ["Why?", "How many?", "And then?", "Where now?", "Who?", "When?"]) {
      for await (const event of cluster.submit({ input: { text: long(question) } })) if (event.type === "error") throw event.error;
      while (cluster.links.some((link) => link.load > 0)) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(workers.map(({ engine }) => engine.requests.length).sort()).toEqual([0, 0, 6]);
    expect(cluster.routing.awayFromCachedPrefix).toBe(0);
  });

  it("sends new tenants to a worker added later, while the old tenants stay where they are cached", async () => {
    const workers = [await worker(), await worker(), await worker()];
    const cluster = gateway();
    for (const { link } of workers) cluster.add(link);
    for (let round = 0; round < 4; round++) for (let tenant = 0; tenant < 8; tenant++) await ask(cluster, tenant, `question ${round}`);
    const before = workers.map(({ engine }) => tenantsOf(engine));
    const added = await worker();
    cluster.add(added.link);
    for (let tenant = 8; tenant < 11; tenant++) await ask(cluster, tenant, "a first question");
    expect(tenantsOf(added.engine)).toEqual(new Set([8, 9, 10]));
    for (let tenant = 0; tenant < 8; tenant++) await ask(cluster, tenant, "one more question");
    expect(workers.map(({ engine }) => tenantsOf(engine))).toEqual(before);
  });
});
