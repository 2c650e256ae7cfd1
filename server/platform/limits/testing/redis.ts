// What the limit tests need from Redis: its URL, whether it answers (the reason to skip outside CI when it does not),
// a fresh key prefix per test, and the removal of that prefix's keys afterwards.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

/** The Redis the tests use (nothing is persisted there): `LOOM_TEST_REDIS_URL`, else 127.0.0.1:6379. */
export const TEST_REDIS_URL = process.env.LOOM_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Why Redis cannot be used (it does not answer PING within a second), or undefined when it can. */
export async function redisMissingReason(url: string = TEST_REDIS_URL): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, connectTimeout: 1000, commandTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return `no Redis at ${url} (${error instanceof Error ? error.message : String(error)}; LOOM_TEST_REDIS_URL moves it)`;
  } finally {
    client.disconnect();
  }
}

/** A key prefix no other test or run uses. */
export function testKeyPrefix(): string {
  return `loom-test:limits:${randomUUID()}:`;
}

/** A plain client for looking at what a store wrote. Disconnect it after use. */
export function inspectionClient(url: string = TEST_REDIS_URL): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1 });
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(prefix: string, url: string = TEST_REDIS_URL): Promise<void> {
  const client = inspectionClient(url);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}
