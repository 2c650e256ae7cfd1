// Routing affinity through a gateway's engine over two real worker links (scripted engines): requests naming the same
// key (prompt_cache_key) go to one worker while it has room, those without a key spread, a key moves to another
// worker when its own is full or gone; and the map forgets its least recently used key past its size.
import { afterEach, describe, expect, it } from "vitest";
import type { ServingEngine } from "../../engine/engine.js";
import type { EngineEvent, EngineRequest } from "../../engine/request.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "../testing/scripted-engine.js";
import { AffinityMap, keepsAffinity } from "./affinity.js";
import { ClusterEngine } from "./cluster-engine.js";
import { WorkerLink } from "./worker-link.js";
import { type WorkerServer, startWorkerServer } from "./worker-server.js";

const TOKEN = "a-test-cluster-token-of-some-length";
const servers: WorkerServer[] = [];
afterEach(() => { for (const server of servers.splice(0)) server.close(); });

async function worker(engine: ServingEngine, capacity = 4): Promise<{ server: WorkerServer; link: WorkerLink }> {
  const model = { slugs: { openai: ["m"], anthropic: [] }, model: SCRIPTED_MODEL };
  const server = await startWorkerServer({ description: { id: `w${servers.length}`, pool: "default", models: [model], capacity }, engines: new Map([["m", engine]]), promptSources: new Map(), token: TOKEN, log: () => undefined }, "127.0.0.1", 0);
  servers.push(server);
  const link = new WorkerLink(`http://127.0.0.1:${server.port}`, TOKEN, () => undefined);
  await link.ready;
  return { server, link };
}

async function run(cluster: ClusterEngine, request: EngineRequest): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of cluster.submit(request)) events.push(event);
  return events;
}

/** Two workers behind one cluster engine, and which of them ran each request id. */
async function twoWorkers(capacity = 4) {
  const engines = [new ScriptedEngine(), new ScriptedEngine()];
  const workers = [await worker(engines[0]!, capacity), await worker(engines[1]!, capacity)];
  const cluster = new ClusterEngine("m", "default");
  for (const { link } of workers) cluster.add(link);
  // Each request's text is its name (a worker sees its own request ids).
  const ranOn = (name: string) => {
    const found = engines.findIndex((engine) => engine.requests.some((request) => (request.input as { text?: string }).text === name));
    expect(found, name).not.toBe(-1);
    return found;
  };
  return { engines, workers, cluster, ranOn };
}

describe("prompt_cache_key affinity in the gateway's routing", () => {
  it("sends a key's requests to one worker while requests without a key spread over both", async () => {
    // Room for every request: a worker's load falls only when its next report comes, so sequential ones add up here.
    const { cluster, ranOn } = await twoWorkers(64);
    // Without a key, a miss at equal load goes to the worker that took fewest recent requests: both take some.
    for (let index = 0; index < 6; index++) await run(cluster, { id: `u${index}`, input: { text: `u${index}` } });
    expect(new Set(Array.from({ length: 6 }, (_, index) => ranOn(`u${index}`)))).toEqual(new Set([0, 1]));
    for (let index = 0; index < 6; index++) await run(cluster, { id: `k${index}`, input: { text: `k${index}` }, affinityKey: "tenant-a" });
    const keyed = Array.from({ length: 6 }, (_, index) => ranOn(`k${index}`));
    expect(new Set(keyed).size).toBe(1);
    // A second key is routed on its own, and then sticks too.
    for (let index = 0; index < 4; index++) await run(cluster, { id: `b${index}`, input: { text: `b${index}` }, affinityKey: "tenant-b" });
    expect(new Set(Array.from({ length: 4 }, (_, index) => ranOn(`b${index}`))).size).toBe(1);
  });

  it("sends a fork group's members (the choices of one request) to one worker, and forgets the group once all went", async () => {
    const { cluster, ranOn } = await twoWorkers(64);
    // Several groups in a row: without the group's route, members would spread over both workers (fewest recent).
    for (let group = 0; group < 4; group++) {
      const members = [0, 1, 2, 3].map((member) => run(cluster, { id: `f${group}-${member}`, input: { text: `f${group}-${member}` }, fork: { group: `g${group}`, size: 4 } }));
      await Promise.all(members);
      expect(new Set([0, 1, 2, 3].map((member) => ranOn(`f${group}-${member}`))).size, `group ${group}`).toBe(1);
    }
    // The groups spread like requests (each group's first member is routed by the policy).
    expect(new Set([0, 1, 2, 3].map((group) => ranOn(`f${group}-0`))).size).toBe(2);
  });

  it("moves a key to another worker when its own is full, and when it is gone", async () => {
    const { engines, workers, cluster, ranOn } = await twoWorkers(1);
    // A request that holds its worker's only slot.
    for (const engine of engines) engine.script = { deltas: ["x"], pauseBeforeFinishMs: 60_000 };
    const holding = cluster.submit({ id: "hold", input: { text: "hold" }, affinityKey: "tenant-a" });
    const held = holding[Symbol.asyncIterator]();
    await held.next();
    const first = ranOn("hold");
    for (const engine of engines) engine.script = { deltas: ["y"] };
    await run(cluster, { id: "next", input: { text: "next" }, affinityKey: "tenant-a" });
    expect(ranOn("next")).toBe(1 - first);
    // The key followed it there.
    await run(cluster, { id: "after", input: { text: "after" }, affinityKey: "tenant-a" });
    expect(ranOn("after")).toBe(1 - first);
    cluster.abort("hold");
    await held.return?.();
    // Its worker gone, the key goes to the one left.
    workers[1 - first]!.server.close();
    while (!workers[1 - first]!.link.closed) await new Promise((resolve) => setTimeout(resolve, 5));
    await run(cluster, { id: "gone", input: { text: "gone" }, affinityKey: "tenant-a" });
    expect(ranOn("gone")).toBe(first);
  });

  it("keeps a full worker only while no other has room, and forgets the least recently used key", () => {
    expect(keepsAffinity({ load: 3, capacity: 4 }, [{ load: 0, capacity: 4 }])).toBe(true);
    expect(keepsAffinity({ load: 4, capacity: 4 }, [{ load: 4, capacity: 4 }, { load: 2, capacity: 4 }])).toBe(false);
    expect(keepsAffinity({ load: 5, capacity: 4 }, [{ load: 5, capacity: 4 }, { load: 4, capacity: 4 }])).toBe(true);
    const map = new AffinityMap<string>(2);
    map.set("a", "w1");
    map.set("b", "w2");
    map.get("a");
    map.set("a", "w1");
    map.set("c", "w3");
    expect([map.get("a"), map.get("b"), map.get("c")]).toEqual(["w1", undefined, "w3"]);
  });
});
