// What only the Redis store must do: name and expire its keys as documented, share one limit between connections
// and between processes (a second Node process), seed a day once among racing processes, and fail fast with
// LimitStoreUnavailableError when Redis is down or silent.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, REPOSITORY_ROOT, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { closedLoopbackPort } from "../../testing/closed-port.js";
import { type LimitBucket, LimitStoreUnavailableError } from "../contract.js";
import { DAILY_SLACK_MS, nextUtcMidnightMs, utcDay } from "./daily.js";
import { DEFAULT_LIMIT_KEY_PREFIX, RedisLimitStore, redisAddress } from "./redis-store.js";
import { deleteKeys, inspectionClient, redisMissingReason, TEST_REDIS_URL, testKeyPrefix } from "./testing/redis.js";

const redisReason = await redisMissingReason();
const VITE_NODE = join(REPOSITORY_ROOT, "node_modules", "vite-node", "vite-node.mjs");
const CHILD_SCRIPT = join(REPOSITORY_ROOT, "server", "platform", "limits", "testing", "reserve-in-child.ts");

describe.skipIf(skipOutsideCi(redisReason))(titled("RedisLimitStore against Redis", redisReason), () => {
  const prefixes: string[] = [];
  const stores: RedisLimitStore[] = [];
  const children: ChildProcess[] = [];
  /** A store on a fresh prefix (or the given one), closed and cleaned after the test. */
  const openStore = (keyPrefix = testKeyPrefix()): RedisLimitStore => {
    if (!prefixes.includes(keyPrefix)) prefixes.push(keyPrefix);
    const store = new RedisLimitStore({ url: TEST_REDIS_URL, keyPrefix });
    stores.push(store);
    return store;
  };

  beforeAll(() => failIfMissing(redisReason));
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill();
    await Promise.all(stores.splice(0).map((store) => store.close()));
    await Promise.all(prefixes.splice(0).map((prefix) => deleteKeys(prefix)));
  });

  it("keeps a window under PREFIX + window:KEY until it is full again, and a day under PREFIX + daily:KEY:DAY until an hour after it", async () => {
    const store = openStore();
    const day = utcDay(Date.now());
    const result = await store.reserve(
      [
        { kind: "window", key: "org:1:rpm", limit: 10, windowMs: 60_000, cost: 2 }, // backlog 12 s
        { kind: "daily", key: "org:1:tpd", limit: 1000, day, cost: 10, seed: async () => 5 },
      ],
      Date.now(),
    );
    expect(result.admitted).toBe(true);
    const redis = inspectionClient();
    try {
      const windowKey = `${store.keyPrefix}window:org:1:rpm`;
      const dayKey = `${store.keyPrefix}daily:org:1:tpd:${day}`;
      expect((await redis.keys(`${store.keyPrefix}*`)).sort()).toEqual([dayKey, windowKey].sort());
      const ttl = await redis.pttl(windowKey);
      expect(ttl).toBeGreaterThan(11_000);
      expect(ttl).toBeLessThanOrEqual(12_000);
      expect(await redis.get(dayKey)).toBe("15");
      expect(await redis.call("EXPIRETIME", dayKey)).toBe(Math.ceil((nextUtcMidnightMs(day) + DAILY_SLACK_MS) / 1000));
      // Given all back, the window's key is gone at once.
      await store.adjust([{ bucket: { kind: "window", key: "org:1:rpm", limit: 10, windowMs: 60_000, cost: 2 }, delta: -2 }], Date.now());
      expect(await redis.exists(windowKey)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it("shares one limit between two connections: 500 concurrent reserves against 100 admit exactly 100", async () => {
    const prefix = testKeyPrefix();
    const [first, second] = [openStore(prefix), openStore(prefix)];
    const bucket: LimitBucket = { kind: "window", key: "shared", limit: 100, windowMs: 3_600_000, cost: 1 };
    const results = await Promise.all(Array.from({ length: 500 }, (_, i) => (i % 2 === 0 ? first : second).reserve([bucket], Date.now())));
    expect(results.filter((result) => result.admitted)).toHaveLength(100);
  });

  it("seeds a day once when two connections race to seed it with different values", async () => {
    const prefix = testKeyPrefix();
    const [first, second] = [openStore(prefix), openStore(prefix)];
    const day = utcDay(Date.now());
    const bucket = (seed: number): LimitBucket => ({ kind: "daily", key: "tpd", limit: 100, day, cost: 1, seed: async () => seed });
    const results = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? first.reserve([bucket(10)], 0) : second.reserve([bucket(70)], 0))));
    const admitted = results.filter((result) => result.admitted).length;
    expect([90, 30]).toContain(admitted); // one seed stands, never both, never added
  });

  it("shares one limit with another Node process: 2 x 250 concurrent reserves against 100 admit exactly 100", async () => {
    const prefix = testKeyPrefix();
    prefixes.push(prefix);
    const environment = { LIMIT_REDIS_URL: TEST_REDIS_URL, LIMIT_PREFIX: prefix, LIMIT_KEY: "two-processes", LIMIT: "100", LIMIT_WINDOW_MS: "3600000", RESERVES: "250" };
    const child = spawn(process.execPath, [VITE_NODE, CHILD_SCRIPT], { cwd: REPOSITORY_ROOT, env: { ...process.env, ...environment }, stdio: ["pipe", "pipe", "pipe"] });
    children.push(child);
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const nextLine = async (): Promise<string> => {
      const exited = once(child, "exit").then(([code]) => {
        throw new Error(`child exited (${code}) early: ${stderr}`);
      });
      return String((await Promise.race([lines.next(), exited])).value);
    };
    expect(await nextLine()).toBe("ready");

    const store = openStore(prefix);
    const bucket: LimitBucket = { kind: "window", key: "two-processes", limit: 100, windowMs: 3_600_000, cost: 1 };
    await store.reserve([{ ...bucket, key: "warm-up-here" }], Date.now());
    child.stdin!.write("go\n");
    const here = await Promise.all(Array.from({ length: 250 }, () => store.reserve([bucket], Date.now())));
    const there = JSON.parse(await nextLine()) as { admitted: number };
    const admittedHere = here.filter((result) => result.admitted).length;
    expect(admittedHere + there.admitted).toBe(100);
    child.stdin!.end();
  });

  it("rejects with LimitStoreUnavailableError within about a second when a connected Redis stops answering", async () => {
    // A proxy in front of the real Redis that can stop passing bytes: a Redis that hangs mid-connection.
    const target = new URL(TEST_REDIS_URL);
    let frozen = false;
    const sockets: Socket[] = [];
    const proxy = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      sockets.push(client, upstream);
      client.on("data", (chunk) => frozen || upstream.write(chunk));
      upstream.on("data", (chunk) => frozen || client.write(chunk));
      for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
        from.on("error", () => to.destroy());
        from.on("close", () => to.destroy());
      }
    });
    proxy.listen(0, "127.0.0.1");
    await once(proxy, "listening");
    try {
      const store = openStore();
      const proxied = new RedisLimitStore({ url: `redis://127.0.0.1:${(proxy.address() as { port: number }).port}`, keyPrefix: store.keyPrefix });
      stores.push(proxied);
      const bucket: LimitBucket = { kind: "window", key: "hang", limit: 10, windowMs: 60_000, cost: 1 };
      expect((await proxied.reserve([bucket], Date.now())).admitted).toBe(true);
      frozen = true;
      const started = performance.now();
      await expect(proxied.reserve([bucket], Date.now())).rejects.toBeInstanceOf(LimitStoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(1200);
    } finally {
      for (const socket of sockets) socket.destroy();
      proxy.close();
    }
  });

  it.skipIf(TEST_REDIS_URL !== "redis://127.0.0.1:6379")("by default reaches redis://127.0.0.1:6379 and writes under loom:limits:", async () => {
    const store = new RedisLimitStore();
    stores.push(store);
    const key = `default-${randomUUID()}`;
    expect(store.keyPrefix).toBe(DEFAULT_LIMIT_KEY_PREFIX);
    expect((await store.reserve([{ kind: "window", key, limit: 10, windowMs: 60_000, cost: 1 }], Date.now())).admitted).toBe(true);
    const inspect = inspectionClient();
    try {
      expect(await inspect.exists(`loom:limits:window:${key}`)).toBe(1);
      await inspect.del(`loom:limits:window:${key}`);
    } finally {
      inspect.disconnect();
    }
    await store.close();
    await expect(store.reserve([{ kind: "window", key, limit: 10, windowMs: 60_000, cost: 1 }], Date.now())).rejects.toThrow("Redis limit store at 127.0.0.1:6379 is closed");
  });

  it("gives up after three runs when daily counters keep disappearing while being seeded", async () => {
    const store = openStore();
    const day = utcDay(Date.now());
    const bucket = (key: string, seed: () => Promise<number>): LimitBucket => ({ kind: "daily", key, limit: 100, day, cost: 1, seed });
    for (const key of ["b", "c"]) await store.reserve([bucket(key, async () => 0)], Date.now());
    const inspect = inspectionClient();
    const remove = (key: string) => async () => (await inspect.del(`${store.keyPrefix}daily:${key}:${day}`), 0);
    const seeded: string[] = [];
    try {
      // Seeding a deletes b's counter, seeding b deletes c's: each run finds another one missing.
      const reserve = store.reserve([
        bucket("a", async () => (seeded.push("a"), remove("b")())),
        bucket("b", async () => (seeded.push("b"), remove("c")())),
        bucket("c", async () => (seeded.push("c"), 0)),
      ], Date.now());
      await expect(reserve).rejects.toThrow(new LimitStoreUnavailableError(`Redis limit store at ${redisAddress(TEST_REDIS_URL)}: daily counters kept disappearing while being seeded`));
      expect(seeded).toEqual(["a", "b", "c"]);
    } finally {
      inspect.disconnect();
    }
  });

  it("adjusts nothing without asking Redis, closed or not", async () => {
    const store = openStore();
    await store.close();
    await expect(store.adjust([], Date.now())).resolves.toBeUndefined();
  });

  it("times windows by Redis's clock, not the nowMs a caller passes", async () => {
    const store = openStore();
    const bucket: LimitBucket = { kind: "window", key: "skewed", limit: 2, windowMs: 60_000, cost: 1 };
    expect((await store.reserve([bucket], Date.now())).admitted).toBe(true);
    expect((await store.reserve([bucket], Date.now())).admitted).toBe(true);
    // A process whose clock runs an hour fast still sees the shared window full.
    expect((await store.reserve([bucket], Date.now() + 3_600_000)).admitted).toBe(false);
  });
});

describe("RedisLimitStore when Redis is unreachable", () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    for (const server of servers) server.close();
  });

  /** A server that accepts connections and never answers (a hung Redis). */
  async function silentPort(): Promise<number> {
    const server = createServer((socket) => sockets.push(socket));
    servers.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return (server.address() as { port: number }).port;
  }

  const bucket: LimitBucket = { kind: "window", key: "down", limit: 10, windowMs: 60_000, cost: 1 };

  for (const [what, port] of [
    ["refused connections (closed port)", closedLoopbackPort],
    ["a server that never answers", silentPort],
  ] as const) {
    it(`rejects with LimitStoreUnavailableError within about a second, never hangs: ${what}`, async () => {
      const store = new RedisLimitStore({ url: `redis://127.0.0.1:${await port()}`, keyPrefix: testKeyPrefix() });
      try {
        for (const call of [() => store.reserve([bucket], Date.now()), () => store.adjust([{ bucket, delta: -1 }], Date.now())]) {
          const started = performance.now();
          const error = await call().then(
            () => undefined,
            (caught: unknown) => caught,
          );
          expect(error).toBeInstanceOf(LimitStoreUnavailableError);
          expect(performance.now() - started).toBeLessThan(1200);
        }
        // Many callers at once share the wait and all fail fast.
        const started = performance.now();
        const results = await Promise.allSettled(Array.from({ length: 50 }, () => store.reserve([bucket], Date.now())));
        expect(results.every((result) => result.status === "rejected" && result.reason instanceof LimitStoreUnavailableError)).toBe(true);
        expect(performance.now() - started).toBeLessThan(1200);
      } finally {
        await store.close();
      }
    });
  }

  it("names the address and the cause, refuses at once while Redis was just found down, then waits afresh", async () => {
    const port = await closedLoopbackPort();
    const store = new RedisLimitStore({ url: `redis://127.0.0.1:${port}`, timeoutMs: 1000 });
    const listeners = (store as unknown as { client: { listenerCount(event: string): number } }).client;
    const readyListeners = listeners.listenerCount("ready");
    try {
      const first = (await store.reserve([bucket], Date.now()).catch((error: unknown) => error)) as LimitStoreUnavailableError;
      expect(first).toBeInstanceOf(LimitStoreUnavailableError);
      expect(first.message).toBe(`Redis limit store at 127.0.0.1:${port} unavailable: connect ECONNREFUSED 127.0.0.1:${port}`);
      expect((first.cause as Error).message).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
      // Within timeoutMs of that wait: refused at once, with the same reason, instead of waiting out a timeout again.
      const started = performance.now();
      const second = (await store.reserve([bucket], Date.now()).catch((error: unknown) => error)) as LimitStoreUnavailableError;
      expect(performance.now() - started).toBeLessThan(500);
      expect(second.message).toBe(first.message);
      // After it: a new wait (not the old one's answer), which leaves no listener behind either.
      await new Promise((resolve) => setTimeout(resolve, 1050));
      const third = await store.reserve([bucket], Date.now()).catch((error: unknown) => error);
      expect(third).toBeInstanceOf(LimitStoreUnavailableError);
      expect(third).not.toBe(first);
      expect(listeners.listenerCount("ready")).toBe(readyListeners);
    } finally {
      await store.close();
    }
  });

  it("says when a silent Redis gave no connection in time, and no connection while it was just found down", async () => {
    const port = await silentPort();
    const store = new RedisLimitStore({ url: `redis://127.0.0.1:${port}`, timeoutMs: 300 });
    try {
      await expect(store.reserve([bucket], Date.now())).rejects.toThrow(`Redis limit store at 127.0.0.1:${port} unavailable: no connection within 300 ms (status connect)`);
      await expect(store.reserve([bucket], Date.now())).rejects.toThrow(new LimitStoreUnavailableError(`Redis limit store at 127.0.0.1:${port} unavailable: no connection`));
    } finally {
      await store.close();
    }
  });

  it("names a Redis by host and port only", () => {
    expect(redisAddress("redis://user:secret@redis.example:6380/2")).toBe("redis.example:6380");
    expect(redisAddress("redis://redis.example")).toBe("redis.example:6379");
    expect(redisAddress("not a url")).toBe("(unparsable URL)");
  });

  it("rejects with LimitStoreUnavailableError after close", async () => {
    const store = new RedisLimitStore({ url: `redis://127.0.0.1:${await closedLoopbackPort()}` });
    await store.close();
    const started = performance.now();
    await expect(store.reserve([bucket], Date.now())).rejects.toThrow(LimitStoreUnavailableError);
    await expect(store.reserve([bucket], Date.now())).rejects.toThrow(/^Redis limit store at 127\.0\.0\.1:\d+ is closed$/);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
