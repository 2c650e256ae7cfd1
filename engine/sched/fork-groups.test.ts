// Fork groups without a model: who starts, who is held and released, how the lead passes on, and the KV a fork takes
// (shared blocks retained, the partial block copied into a fresh one, everything given back).
import { describe, expect, it } from "vitest";
import { BlockPool } from "../kv/block-pool.js";
import { KvCacheManager, SequenceKv } from "../kv/kv-cache.js";
import { EngineError } from "../request.js";
import { type ForkMember, ForkGroups, MAX_FORKS, checkFork } from "./fork-groups.js";

function member(id: string, promptLength = 10): ForkMember & { computed: number } {
  return { id, priority: 0, arrival: 0, tokens: Array.from({ length: promptLength }, (_, i) => i), computed: 0, promptLength, kv: new SequenceKv(), forkSource: undefined };
}

describe("ForkGroups", () => {
  const fork = { group: "g", size: 3 };
  const prompt = Array.from({ length: 10 }, (_, i) => i);

  it("starts the leader at once, holds the others until its prompt is computed, then releases them with it as source", () => {
    const groups = new ForkGroups<ReturnType<typeof member>>();
    const [a, b, c] = [member("a"), member("b"), member("c")];
    expect(groups.join(a, fork, prompt)).toBe(true);
    expect(groups.join(b, fork, prompt)).toBe(false);
    expect(groups.join(c, fork, prompt)).toBe(false);
    expect(groups.heldCount).toBe(2); // they wait as queued requests do (the engine's queueDepth counts them)
    a.computed = 8;
    expect(groups.progressed(a)).toEqual([]);
    a.computed = 9; // all but the last prompt token: what a fork takes
    expect(groups.progressed(a)).toEqual([b, c]);
    expect(groups.heldCount).toBe(0);
    expect(b.forkSource).toBe(a);
    expect(groups.progressed(a)).toEqual([]);
    for (const m of [a, b, c]) groups.leave(m);
    expect(groups.size).toBe(0);
  });

  it("passes the lead to the next held member when the leader ends first, and clears fork sources of an ended source", () => {
    const groups = new ForkGroups<ReturnType<typeof member>>();
    const [a, b, c] = [member("a"), member("b"), member("c")];
    groups.join(a, fork, prompt);
    groups.join(b, fork, prompt);
    groups.join(c, fork, prompt);
    expect(groups.leave(a)).toEqual([b]);
    b.computed = 9;
    expect(groups.progressed(b)).toEqual([c]);
    expect(groups.leave(b)).toEqual([]);
    expect(c.forkSource).toBeUndefined();
  });

  it("starts a late member at once: forking a leader that is ready, or leading a group of its own once all ended", () => {
    const groups = new ForkGroups<ReturnType<typeof member>>();
    const [a, b, c] = [member("a"), member("b"), member("c")];
    groups.join(a, fork, prompt);
    a.computed = 10;
    expect(groups.progressed(a)).toEqual([]);
    expect(groups.join(b, fork, prompt)).toBe(true);
    expect(b.forkSource).toBe(a);
    groups.leave(a);
    groups.leave(b);
    expect(groups.size).toBe(0);
    expect(groups.join(c, fork, prompt)).toBe(true);
    expect(c.forkSource).toBeUndefined();
  });

  it("refuses another size, another prompt and one member too many, naming the field", () => {
    const groups = new ForkGroups<ReturnType<typeof member>>();
    groups.join(member("a"), { group: "g", size: 2 }, prompt);
    const fieldOf = (run: () => void) => {
      try {
        run();
      } catch (error) {
        return (error as EngineError).field;
      }
      return undefined;
    };
    expect(fieldOf(() => groups.check({ group: "g", size: 3 }, prompt))).toBe("fork.size");
    expect(fieldOf(() => groups.check({ group: "g", size: 2 }, [...prompt, 1]))).toBe("fork.group");
    groups.check({ group: "g", size: 2 }, prompt);
    groups.join(member("b"), { group: "g", size: 2 }, prompt);
    expect(fieldOf(() => groups.check({ group: "g", size: 2 }, prompt))).toBe("fork.group");
    expect(fieldOf(() => checkFork({ group: "g", size: MAX_FORKS + 1 }))).toBe("fork.size");
    expect(fieldOf(() => checkFork({ group: 7, size: 2 }))).toBe("fork.group");
    expect(checkFork(undefined)).toBeUndefined();
    expect(() => checkFork(null)).toThrow(EngineError);
  });
});

describe("KvCacheManager.fork", () => {
  it("shares the full blocks, copies the partial one into a fresh block, and gives everything back", () => {
    const pool = new BlockPool(16, 4);
    const kv = new KvCacheManager(pool);
    const leader = new SequenceKv();
    expect(kv.reserve(leader, 11)).toBe(true); // 3 blocks
    const follower = new SequenceKv();
    const reuse = kv.fork(follower, leader, 10);
    expect(reuse).toEqual({ prefixTokens: 10, suffixTokens: 0, forkedTokens: 10 });
    expect(follower.blocks.slice(0, 2)).toEqual(leader.blocks.slice(0, 2));
    expect(follower.blocks[2]).not.toBe(leader.blocks[2]);
    expect(follower.pendingCopies).toEqual([{ sourceBlocks: leader.blocks, sourceStart: 8, targetStart: 8, count: 2 }]);
    expect(pool.refCount(leader.blocks[0])).toBe(2);
    expect(pool.refCount(leader.blocks[2])).toBe(2); // pinned until the copy ran
    const partial = leader.blocks[2];
    kv.release(leader); // the leader ends before the copy runs: its partial block stays for the copy
    expect(pool.refCount(partial)).toBe(1);
    expect(pool.refCount(follower.blocks[0])).toBe(1);
    kv.takeCopies(follower).done();
    kv.release(follower);
    expect(pool.freeCount).toBe(16);
  });

  it("forks nothing from a source that does not hold the positions, or whose copies have not run", () => {
    const kv = new KvCacheManager(new BlockPool(16, 4));
    const source = new SequenceKv();
    expect(kv.fork(new SequenceKv(), source, 5)).toBeUndefined();
    source.pendingCopies = [{ sourceBlocks: [0], sourceStart: 0, targetStart: 0, count: 1 }];
    expect(kv.reserve(source, 8)).toBe(true);
    expect(kv.fork(new SequenceKv(), source, 5)).toBeUndefined();
  });
});
