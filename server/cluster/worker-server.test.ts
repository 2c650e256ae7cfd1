// The worker's side of the cluster protocol, in process on a scripted engine: a request's events flow only against
// the credit its gateway grants (a slow client holds its stream on the worker, not in the gateway's memory); a
// malformed frame drops that gateway's connection and no one else's; a request a worker cannot serve fails alone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import type { EngineEvent } from "../../engine/request.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "../testing/scripted-engine.js";
import { STREAM_WINDOW, encodeFrame } from "./frames.js";
import { WorkerLink } from "./worker-link.js";
import { type WorkerServer, startWorkerServer } from "./worker-server.js";

const TOKEN = "a-test-cluster-token-of-some-length";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("worker server", () => {
  const engine = new ScriptedEngine();
  let server: WorkerServer;
  let base: string;
  const logged: string[] = [];

  beforeAll(async () => {
    const model = { slugs: { openai: ["m"], anthropic: ["m-messages"] }, model: SCRIPTED_MODEL };
    server = await startWorkerServer({
      description: { id: "w1", pool: "default", models: [model], capacity: 4 },
      engines: new Map([["m", engine]]),
      promptSources: new Map(),
      token: TOKEN,
      log: (message) => logged.push(message),
    }, "127.0.0.1", 0);
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server?.close());

  it("sends a request's events only as far as the gateway's credit reaches", async () => {
    engine.script = { deltas: Array.from({ length: 300 }, (_, i) => `${i} `) };
    const link = new WorkerLink(base, TOKEN, () => undefined);
    await link.ready;
    const events: EngineEvent[] = [];
    let finished!: () => void;
    const done = new Promise<void>((resolve) => { finished = resolve; });
    link.submit("m", { id: "slow", input: { text: "x" } }, { event: (event) => { events.push(event); if (event.type === "finish") finished(); }, lost: () => undefined });
    await sleep(150);
    // Nothing read yet: exactly one window arrived, and the worker holds the rest.
    expect(events).toHaveLength(STREAM_WINDOW);
    for (let i = 0; i < STREAM_WINDOW / 2; i++) link.consumed("slow");
    await sleep(100);
    expect(events).toHaveLength(STREAM_WINDOW + STREAM_WINDOW / 2);
    // A client reading everything gets everything, in order.
    const drain = setInterval(() => { for (let i = 0; i < 16; i++) link.consumed("slow"); }, 1);
    await done;
    clearInterval(drain);
    expect(events).toHaveLength(300 + 3);
    expect(events.filter((event) => event.type === "text").map((event) => (event as { text: string }).text).join("")).toBe(engine.script.deltas.join(""));
    link.close("done");
  });

  it("drops a gateway that sends a malformed frame, and only that one", async () => {
    engine.script = { deltas: ["fine"] };
    const good = new WorkerLink(base, TOKEN, () => undefined);
    await good.ready;
    const bad = new WebSocket(`${base.replace("http", "ws")}/cluster`, { headers: { authorization: `Bearer ${TOKEN}` } });
    await new Promise((resolve) => bad.once("open", resolve));
    const closed = new Promise<number>((resolve) => bad.once("close", (code) => resolve(code)));
    bad.send(Buffer.from([0xc1, 0x00]));
    bad.send(encodeFrame({ type: "hello" } as never));
    expect(await closed).toBe(1008);
    expect(logged.join("\n")).toMatch(/closing a gateway connection/);
    const events: EngineEvent[] = [];
    await new Promise<void>((resolve) => {
      good.submit("m", { id: "after", input: { text: "x" } }, { event: (event) => { events.push(event); if (event.type === "finish") resolve(); }, lost: () => undefined });
    });
    expect(events.at(-1)?.type).toBe("finish");
    good.close("done");
  });

  it("fails a request for a model it does not serve, naming the model, without touching others", async () => {
    const link = new WorkerLink(base, TOKEN, () => undefined);
    await link.ready;
    const event = await new Promise<EngineEvent>((resolve) => link.submit("other", { id: "x", input: { text: "x" } }, { event: resolve, lost: () => undefined }));
    expect(event.type).toBe("error");
    expect((event as { error: Error }).error.message).toMatch(/does not serve "other"/);
    link.close("done");
  });

  it("gives up on a peer that accepts the connection but never says hello", async () => {
    const silent = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => silent.once("listening", resolve));
    const { port } = silent.address() as { port: number };
    let closedWith: Error | undefined;
    const link = new WorkerLink(`http://127.0.0.1:${port}`, TOKEN, (_link, error) => { closedWith = error; });
    await expect(link.ready).rejects.toThrow();
    expect(closedWith?.message).toMatch(/no hello within 5 s/);
    expect(link.closed).toBe(true);
    silent.close();
  });
});
