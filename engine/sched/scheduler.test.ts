// Scheduler and KV invariants under random traffic: the real scheduler, KV cache manager, prefix index and block
// pool, with the forward pass replaced by bookkeeping (the model runner is not involved in these properties).
import { describe, expect, it } from "vitest";
import { BlockPool } from "../kv/block-pool.js";
import { KvCacheManager, SequenceKv } from "../kv/kv-cache.js";
import { seededRandom } from "../testing/seeded-random.js";
import { type KvBackedRequest, kvSpaceOf } from "./kv-space.js";
import { MAX_YIELDED_STEPS, Scheduler } from "./scheduler.js";

interface FakeRequest extends KvBackedRequest {
  tokens: number[];
  kv: SequenceKv;
  maxTokens: number;
}

function harness(capacity: number, blockSize: number, limits = { maxStepTokens: 64, maxSequences: 8 }) {
  const pool = new BlockPool(capacity, blockSize);
  const kv = new KvCacheManager(pool, { sectionThreshold: 3 });
  const scheduler = new Scheduler(kvSpaceOf<FakeRequest>(kv), limits);

  /** Every block's reference count equals its holders: sequences plus the index; free blocks are exactly the unheld. */
  function checkInvariants(live: readonly FakeRequest[]): void {
    const expected = new Uint32Array(capacity);
    for (const r of live) for (const id of r.kv.blocks) expected[id]++;
    const cached = new Set<number>();
    const walk = (from: Parameters<typeof kv.index.continuations>[0]) => {
      for (const chain of kv.index.continuations(from, Infinity, Infinity)) for (const block of chain) cached.add(block.blockId);
    };
    walk(null);
    for (const id of cached) expected[id]++;
    let free = 0;
    for (let id = 0; id < capacity; id++) {
      expect(pool.refCount(id), `block ${id}`).toBe(expected[id]);
      if (expected[id] === 0) free++;
    }
    expect(pool.freeCount).toBe(free);
    for (const r of scheduler.running) expect(r.kv.blocks.length * blockSize).toBeGreaterThanOrEqual(r.computed);
  }
  return { pool, kv, scheduler, checkInvariants };
}

describe("Scheduler with the KV cache manager", () => {
  it("keeps reference counts exact through thousands of random submits, aborts, finishes and preemptions", () => {
    const random = seededRandom(7);
    const blockSize = 4;
    const capacity = 48;
    const { pool, kv, scheduler, checkInvariants } = harness(capacity, blockSize);
    const live: FakeRequest[] = [];
    const prefixes = [Array.from({ length: 13 }, (_, i) => 1000 + i), Array.from({ length: 9 }, (_, i) => 2000 + i)];
    const pastPrompts: number[][] = [];
    let arrival = 0;
    let preemptions = 0;
    let finished = 0;
    let reusedRequests = 0;

    for (let op = 0; op < 4000; op++) {
      const roll = random();
      if (roll < 0.25 && live.length < 24) {
        // Prompts share prefixes; some prune a span of an earlier prompt (section hits).
        const base = prefixes[Math.floor(random() * prefixes.length)];
        const tail = Array.from({ length: 1 + Math.floor(random() * 30) }, () => Math.floor(random() * 50));
        const earlier = pastPrompts[Math.floor(random() * pastPrompts.length)];
        // Some prompts repeat an earlier one with a span pruned (section hits); the rest share a prefix.
        const tokens = earlier && random() < 0.4 ? [...earlier.slice(0, 14), ...earlier.slice(19), ...tail.slice(0, 3)] : [...base, ...tail];
        if (tokens.length > 30) pastPrompts.push(tokens);
        const request: FakeRequest = { id: `r${arrival}`, priority: Math.floor(random() * 3), arrival: arrival++, tokens, computed: 0, kv: new SequenceKv(), maxTokens: 1 + Math.floor(random() * 20) };
        live.push(request);
        scheduler.add(request);
      } else if (roll < 0.3 && live.length > 0) {
        const victim = live.splice(Math.floor(random() * live.length), 1)[0];
        scheduler.remove(victim); // abort: waiting or running
      } else {
        const plan = scheduler.schedule();
        preemptions += plan.preempted.length;
        for (const r of plan.admitted) {
          if (r.computed > 0) reusedRequests++;
          kv.recordAdmission(r.tokens.length, r.adoption!);
          kv.takeCopies(r.kv).done();
        }
        expect(plan.chunks.reduce((n, c) => n + c.count, 0)).toBeLessThanOrEqual(64);
        expect(plan.chunks.length).toBeLessThanOrEqual(8);
        for (const { request, start, count } of plan.chunks) {
          expect(start).toBe(request.computed);
          request.computed += count;
          kv.commit(request.kv, request.tokens, request.computed);
          if (request.computed === request.tokens.length) request.tokens.push(Math.floor(random() * 50)); // "sampled"
        }
        for (const r of [...plan.exhausted, ...plan.chunks.map((c) => c.request)]) {
          const generated = r.tokens.length - r.computed;
          if (plan.exhausted.includes(r) || (live.includes(r) && r.tokens.length > 60) || (generated > 0 && random() < 1 / r.maxTokens)) {
            if (!live.includes(r)) continue;
            live.splice(live.indexOf(r), 1);
            scheduler.remove(r);
            finished++;
          }
        }
      }
      checkInvariants(live);
    }
    for (const r of [...live]) scheduler.remove(r);
    checkInvariants([]);
    kv.index.clear();
    expect(pool.freeCount).toBe(capacity);
    for (let id = 0; id < capacity; id++) expect(pool.refCount(id)).toBe(0);
    // The run exercised what it claims to.
    expect(finished).toBeGreaterThan(100);
    expect(preemptions).toBeGreaterThan(0);
    expect(reusedRequests).toBeGreaterThan(20);
    expect(kv.counters.sectionHits).toBeGreaterThan(0);
  });

  it("serves priority classes first and FCFS within a class", () => {
    const { scheduler } = harness(64, 4, { maxStepTokens: 8, maxSequences: 8 });
    const make = (id: string, priority: number, arrival: number): FakeRequest => ({ id, priority, arrival, tokens: [arrival, 1, 2, 3, 4, 5, 6, 7], computed: 0, kv: new SequenceKv(), maxTokens: 1 });
    scheduler.add(make("low", 2, 0));
    scheduler.add(make("normal-1", 0, 1));
    scheduler.add(make("normal-2", 0, 2));
    scheduler.add(make("high", -1, 3));
    expect(scheduler.waiting.map((r) => r.id)).toEqual(["high", "normal-1", "normal-2", "low"]);
    const plan = scheduler.schedule();
    expect(plan.chunks.map((c) => c.request.id)).toEqual(["high"]);
  });

  it("mixes chunked prefill with decode under the token budget, decodes first", () => {
    const { scheduler } = harness(64, 4, { maxStepTokens: 10, maxSequences: 4 });
    const decoding: FakeRequest = { id: "d", priority: 0, arrival: 1, tokens: [1, 2, 3], computed: 0, kv: new SequenceKv(), maxTokens: 9 };
    scheduler.add(decoding);
    let plan = scheduler.schedule();
    decoding.computed = 3;
    decoding.tokens.push(4);
    const long: FakeRequest = { id: "p", priority: 0, arrival: 0, tokens: Array.from({ length: 30 }, (_, i) => 100 + i), computed: 0, kv: new SequenceKv(), maxTokens: 1 };
    scheduler.add(long);
    plan = scheduler.schedule();
    expect(plan.chunks.map((c) => [c.request.id, c.start, c.count])).toEqual([["d", 3, 1], ["p", 0, 9]]);
  });

  it("preempts the least urgent running request when KV runs out, and it resumes by recompute", () => {
    const { scheduler, pool } = harness(6, 4, { maxStepTokens: 64, maxSequences: 4 });
    const a: FakeRequest = { id: "a", priority: 0, arrival: 0, tokens: Array.from({ length: 11 }, (_, i) => i), computed: 0, kv: new SequenceKv(), maxTokens: 8 };
    const b: FakeRequest = { id: "b", priority: 1, arrival: 1, tokens: Array.from({ length: 11 }, (_, i) => 50 + i), computed: 0, kv: new SequenceKv(), maxTokens: 8 };
    // b runs first; a, more urgent, then starts alone (b keeps its KV and sits the step out).
    scheduler.add(b);
    let plan = scheduler.schedule();
    expect(plan.chunks.map((c) => c.request.id)).toEqual(["b"]);
    for (const c of plan.chunks) c.request.computed += c.count;
    scheduler.add(a);
    plan = scheduler.schedule();
    expect(plan.chunks.map((c) => c.request.id)).toEqual(["a"]);
    for (const c of plan.chunks) c.request.computed += c.count;
    a.tokens.push(99);
    b.tokens.push(98);
    a.tokens.push(97); // a needs a fourth block: only b's can be taken
    a.computed = 11;
    plan = scheduler.schedule();
    expect(plan.preempted.map((r) => r.id)).toEqual(["b"]);
    expect(b.computed).toBe(0);
    expect(scheduler.waiting.map((r) => r.id)).toEqual(["b"]);
    // b's blocks went back to the pool; a holds the four its 13 tokens need.
    expect(b.kv.blocks).toEqual([]);
    expect(a.kv.blocks).toHaveLength(4);
    expect(pool.freeCount).toBe(6 - 4);
  });

  it("lets a more urgent request start alone: less urgent ones sit out until its prompt is computed, a few steps at most", () => {
    const { scheduler } = harness(64, 4, { maxStepTokens: 8, maxSequences: 8 });
    const background = Array.from({ length: 3 }, (_, i): FakeRequest => ({ id: `b${i}`, priority: 1, arrival: i, tokens: [i, 1, 2], computed: 0, kv: new SequenceKv(), maxTokens: 50 }));
    for (const request of background) scheduler.add(request);
    const step = () => {
      const plan = scheduler.schedule();
      for (const c of plan.chunks) c.request.computed += c.count;
      // Each decoding request gets its next token.
      for (const c of plan.chunks) if (c.request.computed === c.request.tokens.length) (c.request.tokens as number[]).push(7);
      return plan.chunks.map((c) => c.request.id);
    };
    expect(step()).toEqual(["b0", "b1", "b2"]);
    // An urgent request with a 20-token prompt: prefilled in chunks of 8, alone.
    const urgent: FakeRequest = { id: "u", priority: 0, arrival: 9, tokens: Array.from({ length: 20 }, (_, i) => 100 + i), computed: 0, kv: new SequenceKv(), maxTokens: 5 };
    scheduler.add(urgent);
    expect(step()).toEqual(["u"]);
    expect(step()).toEqual(["u"]);
    expect(step()).toEqual(["u"]);
    // Its prompt is computed: it decodes, and the background decodes beside it again.
    expect(step()).toEqual(["u", "b0", "b1", "b2"]);

    // A stream of urgent arrivals lets the background sit out MAX_YIELDED_STEPS steps in a row, then one step runs it.
    const seen: string[][] = [];
    for (let i = 0; i < MAX_YIELDED_STEPS + 2; i++) {
      scheduler.add({ id: `s${i}`, priority: 0, arrival: 20 + i, tokens: Array.from({ length: 8 }, (_, j) => 200 + j), computed: 0, kv: new SequenceKv(), maxTokens: 1 });
      seen.push(step());
    }
    const withBackground = seen.map((ids) => ids.some((id) => id.startsWith("b")));
    expect(withBackground.slice(0, MAX_YIELDED_STEPS)).toEqual(Array(MAX_YIELDED_STEPS).fill(false));
    expect(withBackground[MAX_YIELDED_STEPS]).toBe(true);
  });

  it("runs at most backgroundSequences background requests per step, in arrival order, and never caps class 0", () => {
    const { scheduler } = harness(64, 4, { maxStepTokens: 64, maxSequences: 16, backgroundSequences: 4 });
    const background = Array.from({ length: 10 }, (_, i): FakeRequest => ({ id: `b${i}`, priority: 1, arrival: i, tokens: [i, 1], computed: 0, kv: new SequenceKv(), maxTokens: 50 }));
    const interactive = Array.from({ length: 6 }, (_, i): FakeRequest => ({ id: `i${i}`, priority: 0, arrival: 100 + i, tokens: [i, 2], computed: 1, kv: new SequenceKv(), maxTokens: 50 }));
    for (const request of background) scheduler.add(request);
    const plan = scheduler.schedule();
    expect(plan.chunks.map((c) => c.request.id)).toEqual(["b0", "b1", "b2", "b3"]);
    for (const c of plan.chunks) c.request.computed += c.count;
    // Class 0 requests start alone, then decode beside the background without counting against its cap.
    for (const request of interactive) scheduler.add(request);
    const start = scheduler.schedule();
    expect(start.chunks.map((c) => c.request.id)).toEqual(interactive.map((r) => r.id));
    for (const c of start.chunks) c.request.computed += c.count;
    for (const request of interactive) (request.tokens as number[]).push(3);
    const next = scheduler.schedule().chunks.map((c) => c.request.id);
    expect(next.filter((id) => id.startsWith("b"))).toHaveLength(4);
    expect(next.filter((id) => id.startsWith("i"))).toHaveLength(6);
  });

  it("bounds the rows of allRowLogits requests per step by maxLogitRows, adopting nothing from the cache for them", () => {
    const { scheduler, kv } = harness(64, 4, { maxStepTokens: 80, maxSequences: 8, maxLogitRows: 10 });
    const prompt = Array.from({ length: 24 }, (_, i) => 300 + i);
    // A plain request computes the prompt and leaves its blocks in the prefix cache.
    const cached: FakeRequest = { id: "c", priority: 0, arrival: 0, tokens: [...prompt], computed: 0, kv: new SequenceKv(), maxTokens: 1 };
    scheduler.add(cached);
    for (const c of scheduler.schedule().chunks) c.request.computed += c.count;
    kv.commit(cached.kv, cached.tokens, cached.computed);
    scheduler.remove(cached);
    const scoring = (id: string, arrival: number): FakeRequest & { allRowLogits: boolean } => ({ id, priority: 0, arrival, tokens: [...prompt], computed: 0, kv: new SequenceKv(), maxTokens: 1, allRowLogits: true });
    const [a, b] = [scoring("a", 1), scoring("b", 2)];
    scheduler.add(a);
    scheduler.add(b);
    const plain: FakeRequest = { id: "p", priority: 0, arrival: 3, tokens: Array.from({ length: 20 }, (_, i) => 900 + i), computed: 0, kv: new SequenceKv(), maxTokens: 1 };
    scheduler.add(plain);
    const again: FakeRequest = { id: "q", priority: 0, arrival: 4, tokens: [...prompt], computed: 0, kv: new SequenceKv(), maxTokens: 1 };
    scheduler.add(again);
    const first = scheduler.schedule();
    // a takes the 10 rows from position 0 (no reuse); b finds none left and waits, and FCFS keeps p and q behind it.
    expect(first.chunks.map((c) => [c.request.id, c.start, c.count])).toEqual([["a", 0, 10]]);
    for (const c of first.chunks) c.request.computed += c.count;
    const second = scheduler.schedule();
    expect(second.chunks.map((c) => [c.request.id, c.start, c.count])).toEqual([["a", 10, 10]]);
    for (const c of second.chunks) c.request.computed += c.count;
    // Without the flag a's rows are not limited: a's last 4, b's first 10 from position 0, p's prompt, and q, which
    // reuses the cached prefix (20 tokens in full blocks, 3 copied).
    a.allRowLogits = false;
    const third = scheduler.schedule();
    expect(third.chunks.map((c) => [c.request.id, c.start, c.count])).toEqual([["a", 20, 4], ["b", 0, 10], ["p", 0, 20], ["q", 23, 1]]);
  });

  it("reports a lone request that outgrows the whole KV cache as exhausted instead of looping", () => {
    const { scheduler } = harness(2, 4, { maxStepTokens: 64, maxSequences: 4 });
    const r: FakeRequest = { id: "r", priority: 0, arrival: 0, tokens: Array.from({ length: 8 }, (_, i) => i), computed: 0, kv: new SequenceKv(), maxTokens: 8 };
    scheduler.add(r);
    scheduler.schedule();
    r.computed = 8;
    r.tokens.push(1);
    const plan = scheduler.schedule();
    expect(plan.exhausted).toEqual([r]);
    expect(plan.chunks).toEqual([]);
  });
});
