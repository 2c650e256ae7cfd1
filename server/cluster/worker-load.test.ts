// Each worker's load as a gateway reads it for the operator's dashboard: real worker servers over real connections,
// one row per worker and model with the worker's own engine stats; a worker that does not answer is left out.
import { afterEach, describe, expect, it } from "vitest";
import type { ServingEngine } from "../../engine/engine.js";
import type { EngineStats } from "../../engine/request.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "../testing/scripted-engine.js";
import { WorkerLink } from "./worker-link.js";
import { clusterWorkerLoad } from "./worker-load.js";
import { type WorkerServer, startWorkerServer } from "./worker-server.js";

const TOKEN = "a-test-cluster-token-of-some-length";

/** An engine with fixed stats. */
class LoadedEngine extends ScriptedEngine {
  constructor(private readonly load: { running: number; waiting: number; used: number; free: number }) {
    super();
  }
  override stats(): EngineStats {
    const stats = super.stats();
    return { ...stats, running: this.load.running, waiting: this.load.waiting, kvBlocks: { ...stats.kvBlocks, used: this.load.used, free: this.load.free } };
  }
}

/** An engine whose stats never come (a hung worker). */
function hungEngine(): ServingEngine {
  const inner = new ScriptedEngine();
  return {
    submit: (request) => inner.submit(request),
    abort: (id) => inner.abort(id),
    queueDepth: 0,
    stats: () => new Promise<EngineStats>(() => undefined),
    countTokens: (request) => inner.countTokens(request),
    tokenize: (request) => inner.tokenize(request),
    detokenize: (request) => inner.detokenize(request),
  };
}

const servers: WorkerServer[] = [];
const links: WorkerLink[] = [];
afterEach(() => {
  for (const link of links.splice(0)) link.close("test over");
  for (const server of servers.splice(0)) server.close();
});

async function worker(id: string, engines: Record<string, ServingEngine>): Promise<WorkerLink> {
  const models = Object.keys(engines).map((slug) => ({ slugs: { openai: [slug], anthropic: [] }, model: SCRIPTED_MODEL }));
  const server = await startWorkerServer({ description: { id, pool: "default", models, capacity: 4 }, engines: new Map(Object.entries(engines)), promptSources: new Map(), token: TOKEN, log: () => undefined }, "127.0.0.1", 0);
  servers.push(server);
  const link = new WorkerLink(`http://127.0.0.1:${server.port}`, TOKEN, () => undefined);
  links.push(link);
  await link.ready;
  return link;
}

describe("clusterWorkerLoad", () => {
  it("reads each connected worker's stats per model it serves, leaving out a worker that does not answer", async () => {
    const one = await worker("w1", { m: new LoadedEngine({ running: 2, waiting: 1, used: 30, free: 70 }), n: new LoadedEngine({ running: 0, waiting: 0, used: 0, free: 9 }) });
    const two = await worker("w2", { m: new LoadedEngine({ running: 4, waiting: 0, used: 50, free: 50 }) });
    const hung = await worker("w3", { m: hungEngine() });
    const directory = { workers: new Map([["w1", one], ["w2", two], ["w3", hung]]) };
    const rows = await clusterWorkerLoad(directory, 300).workers();
    expect(rows.sort((a, b) => `${a.id}${a.model}`.localeCompare(`${b.id}${b.model}`))).toEqual([
      { id: "w1", address: one.url, model: "m", running: 2, waiting: 1, kvBlocksUsed: 30, kvBlocksFree: 70 },
      { id: "w1", address: one.url, model: "n", running: 0, waiting: 0, kvBlocksUsed: 0, kvBlocksFree: 9 },
      { id: "w2", address: two.url, model: "m", running: 4, waiting: 0, kvBlocksUsed: 50, kvBlocksFree: 50 },
    ]);
    // A closed connection is no worker of the gateway's any more.
    two.close("gone");
    expect((await clusterWorkerLoad(directory, 300).workers()).map((row) => row.id)).toEqual(["w1", "w1"]);
  });
});
