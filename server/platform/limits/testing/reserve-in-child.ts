// A second Node process sharing a limit with the test that spawns it (run through vite-node): it opens its own
// RedisLimitStore, prints "ready", waits for "go" on stdin, fires RESERVES concurrent reserves of one unit against
// one window bucket, and prints {"admitted": N}. Settings come from the environment (see the test).
import { createInterface } from "node:readline";
import { RedisLimitStore } from "../redis-store.js";

const environment = process.env;
const store = new RedisLimitStore({ url: environment.LIMIT_REDIS_URL, keyPrefix: environment.LIMIT_PREFIX });
const bucket = { kind: "window" as const, key: environment.LIMIT_KEY!, limit: Number(environment.LIMIT), windowMs: Number(environment.LIMIT_WINDOW_MS), cost: 1 };
const reserves = Number(environment.RESERVES);

// Warm the connection and load the script on a key of its own, so the contended reserves start together.
await store.reserve([{ ...bucket, key: `${bucket.key}:warm-up` }], Date.now());
process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() !== "go") continue;
  const results = await Promise.all(Array.from({ length: reserves }, () => store.reserve([bucket], Date.now())));
  process.stdout.write(`${JSON.stringify({ admitted: results.filter((result) => result.admitted).length })}\n`);
  break;
}
lines.close();
await store.close();
