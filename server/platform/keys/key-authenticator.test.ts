// KeyAuthenticator: refusals without a lookup for keys of the wrong form or kind, one lookup per digest shared by
// concurrent requests, a cache whose lifetime bounds how long a revocation takes, and a bound on cached digests.
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../../protocol/internal.js";
import type { KeyRecord } from "../contract.js";
import { digestKey as keyDigest } from "../store/key-secret.js";
import { KeyAuthenticator } from "./key-authenticator.js";

const INFERENCE_KEY = `sk-gw-${"a".repeat(43)}`;
const record = (patch: Partial<KeyRecord> = {}): KeyRecord => ({
  id: "key_1", organizationId: "org_1", kind: "inference", name: "k", keyPrefix: "sk-gw-aaaaaa", isActive: true,
  createdAt: new Date(), lastUsedAt: null, limits: {}, allowedModels: null, ...patch,
});

/** A lookup over a mutable table, counting calls. */
function table(records: Map<string, KeyRecord>) {
  const calls: string[] = [];
  return { calls, lookup: async (digest: string) => { calls.push(digest); return records.get(digest); } };
}

describe("KeyAuthenticator", () => {
  it("refuses a missing key, a key of another form and a management key without a lookup", () => {
    const { calls, lookup } = table(new Map());
    const keys = new KeyAuthenticator(lookup, "inference");
    expect((keys.authenticate({}, "openai") as ProtocolError).message).toMatch(/missing API key: send an Authorization: Bearer/);
    expect((keys.authenticate({ xApiKey: INFERENCE_KEY }, "openai") as ProtocolError).message).toMatch(/missing API key/);
    expect((keys.authenticate({ authorization: "Bearer sk-other" }, "openai") as ProtocolError).message).toBe("invalid API key");
    expect((keys.authenticate({ authorization: `Bearer sk-mgmt-${"b".repeat(43)}` }, "openai") as ProtocolError).message).toMatch(/takes inference keys/);
    expect(calls).toEqual([]);
  });

  it("admits an active key of its kind, found by the SHA-256 digest, and shares one lookup among concurrent requests", async () => {
    const { calls, lookup } = table(new Map([[keyDigest(INFERENCE_KEY), record()]]));
    const keys = new KeyAuthenticator(lookup, "inference");
    const answers = await Promise.all(Array.from({ length: 20 }, () => keys.authenticate({ xApiKey: INFERENCE_KEY }, "anthropic")));
    for (const answer of answers) expect(answer).toMatchObject({ keyId: "key_1", organizationId: "org_1" });
    expect(calls).toEqual([keyDigest(INFERENCE_KEY)]);
    // Cached: the next answer is immediate, not a promise.
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toMatchObject({ keyId: "key_1" });
  });

  it("stops admitting a revoked key once its cache entry expires (ttl), and at once after forget()", async () => {
    const records = new Map([[keyDigest(INFERENCE_KEY), record()]]);
    const { lookup } = table(records);
    const keys = new KeyAuthenticator(lookup, "inference", 50);
    expect(await keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toMatchObject({ keyId: "key_1" });
    records.set(keyDigest(INFERENCE_KEY), record({ isActive: false }));
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toMatchObject({ keyId: "key_1" });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(((await keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")) as ProtocolError).message).toMatch(/unknown or revoked/);
    records.set(keyDigest(INFERENCE_KEY), record());
    const long = new KeyAuthenticator(lookup, "inference", 60_000);
    await long.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai");
    records.set(keyDigest(INFERENCE_KEY), record({ isActive: false }));
    long.forget();
    expect(await long.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toBeInstanceOf(ProtocolError);
  });

  it("reads a key in steady use again in the background past half its cache life, answering at once meanwhile", async () => {
    const records = new Map([[keyDigest(INFERENCE_KEY), record()]]);
    const { calls, lookup } = table(records);
    const keys = new KeyAuthenticator(lookup, "inference", 200);
    await keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai");
    records.set(keyDigest(INFERENCE_KEY), record({ isActive: false }));
    await new Promise((resolve) => setTimeout(resolve, 120));
    // Past half its life: still answered from the cache (not a promise), while a read starts behind it.
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toMatchObject({ keyId: "key_1" });
    expect(calls.length).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The background read found it revoked: refused at once, before the old entry's expiry.
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toBeInstanceOf(ProtocolError);
  });

  it("does not cache a read that began before forget() (it may predate the revocation)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const keys = new KeyAuthenticator(async () => { await gate; return record(); }, "inference", 60_000);
    const pending = keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai");
    keys.forget();
    release();
    await pending;
    // Not cached: the next call looks the key up again (a promise), instead of trusting the old read for a minute.
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toBeInstanceOf(Promise);
  });

  it("refuses a key of the other kind found in the table, and answers a failed lookup with a 502", async () => {
    const { lookup } = table(new Map([[keyDigest(INFERENCE_KEY), record({ kind: "management" })]]));
    expect(await new KeyAuthenticator(lookup, "inference").authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toBeInstanceOf(ProtocolError);
    const failing = new KeyAuthenticator(async () => { throw new Error("connection refused"); }, "inference");
    const answer = (await failing.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")) as ProtocolError;
    expect(answer.status).toBe(502);
    expect(answer.message).toMatch(/connection refused/);
  });

  it("keeps at most maxEntries digests, unknown keys included", async () => {
    const { lookup } = table(new Map());
    const keys = new KeyAuthenticator(lookup, "inference", 60_000, 10);
    for (let i = 0; i < 100; i++) await keys.authenticate({ authorization: `Bearer sk-gw-${String(i).padStart(43, "x")}` }, "openai");
    expect((keys as unknown as { cache: Map<string, unknown> }).cache.size).toBeLessThanOrEqual(10);
  });
});
