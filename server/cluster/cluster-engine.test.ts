// The gateway's engine over worker links, in process on scripted engines: a request the lost worker had not admitted
// runs once more on another worker and completes; one it had admitted ends with an error naming the loss (logged in
// one line, without a stack trace); with no
// worker left, a request fails at once with the reason.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EngineStream, ServingEngine } from "../../engine/engine.js";
import type { EngineEvent } from "../../engine/request.js";
import { stderrLog } from "../http/log.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "../testing/scripted-engine.js";
import { ClusterEngine } from "./cluster-engine.js";
import { WorkerLink } from "./worker-link.js";
import { type WorkerServer, startWorkerServer } from "./worker-server.js";

const TOKEN = "a-test-cluster-token-of-some-length";

/** An engine that takes requests and never answers (a worker that dies before admitting anything). */
class SilentEngine extends ScriptedEngine {
  override submit(request: Parameters<ServingEngine["submit"]>[0]): EngineStream {
    this.requests.push(request);
    return { id: request.id ?? "silent", [Symbol.asyncIterator]: () => ({ next: () => new Promise<never>(() => undefined), return: async () => ({ done: true, value: undefined }) }) };
  }
}

const servers: WorkerServer[] = [];
afterEach(() => { for (const server of servers.splice(0)) server.close(); });

async function worker(engine: ServingEngine): Promise<{ server: WorkerServer; link: WorkerLink }> {
  const model = { slugs: { openai: ["m"], anthropic: [] }, model: SCRIPTED_MODEL };
  const server = await startWorkerServer({ description: { id: `w${servers.length}`, pool: "default", models: [model], capacity: 4 }, engines: new Map([["m", engine]]), promptSources: new Map(), token: TOKEN, log: () => undefined }, "127.0.0.1", 0);
  servers.push(server);
  const link = new WorkerLink(`http://127.0.0.1:${server.port}`, TOKEN, () => undefined);
  await link.ready;
  return { server, link };
}

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("ClusterEngine when a worker is lost", () => {
  it("runs a request the lost worker had not admitted once more on another worker", async () => {
    const silent = new SilentEngine();
    const healthy = new ScriptedEngine();
    healthy.script = { deltas: ["all ", "good"] };
    const a = await worker(silent);
    const b = await worker(healthy);
    const cluster = new ClusterEngine("m", "default", undefined, () => 0); // ties go to the first link: a
    cluster.add(a.link);
    cluster.add(b.link);
    const events = collect(cluster.submit({ id: "r1", input: { text: "hi" } }));
    while (silent.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    a.server.close();
    const received = await events;
    expect(received.at(-1)?.type).toBe("finish");
    expect(received.filter((event) => event.type === "text").map((event) => (event as { text: string }).text).join("")).toBe("all good");
    expect(healthy.requests).toHaveLength(1);
  });

  it("ends a request the lost worker had admitted with an error naming the loss", async () => {
    const stalled = new ScriptedEngine();
    stalled.script = { deltas: ["half"], pauseBeforeFinishMs: 60_000 };
    const a = await worker(stalled);
    const b = await worker(new ScriptedEngine());
    const cluster = new ClusterEngine("m", "default", undefined, () => 0);
    cluster.add(a.link);
    cluster.add(b.link);
    const events: EngineEvent[] = [];
    const done = (async () => { for await (const event of cluster.submit({ id: "r2", input: { text: "hi" } })) { events.push(event); if (event.type === "text") a.server.close(); } })();
    await done;
    expect(events.map((event) => event.type)).toEqual(["start", "admitted", "text", "error"]);
    expect((events.at(-1) as { error: Error }).error.message).toMatch(/the worker running this request was lost/);
    // The client is not told where the worker was (the log is).
    expect((events.at(-1) as { error: Error }).error.message).not.toContain(new URL(a.link.url).host);
    // The server logs one line for the cut stream, with the worker's address and no stack trace.
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => { written.push(String(chunk)); return true; });
    try {
      stderrLog.requestError("req-7", "/v1/chat/completions", (events.at(-1) as { error: Error }).error);
    } finally {
      spy.mockRestore();
    }
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(new RegExp(`^loom: request req-7 \\(/v1/chat/completions\\) failed: EngineError: the worker running this request was lost: its connection closed \\(a worker of the pool 'default': the connection to the worker at ${a.link.url} closed \\(\\d+[^\n]*\\)\\)\n$`));
  });

  it("fails at once, saying why, when no worker is connected", async () => {
    const cluster = new ClusterEngine("m", "acme");
    expect(cluster.unavailable?.message).toMatch(/no worker of the pool 'acme'/);
    const events = await collect(cluster.submit({ id: "r3", input: { text: "hi" } }));
    expect(events).toHaveLength(1);
    expect((events[0] as { error: Error }).error.message).toMatch(/no worker of the pool 'acme' serving this model is connected/);
    // Logged as one line, like a lost worker's cut stream: no stack trace.
    expect((events[0] as { error: Error }).error.stack).toBe(`EngineError: ${(events[0] as { error: Error }).error.message}`);
  });
});
