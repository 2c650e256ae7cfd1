// Fork groups (EngineRequest.fork): the n choices of one client request. The first member to arrive is the group's
// leader and starts at once; the others are held until the leader's prompt is computed (all but its last token), then
// start with the leader as their fork source: at admission they share its KV (kv-cache.ts fork()) and compute only
// their last prompt token. Nothing waits for members that never come: a member arriving late starts at once (forking
// if the leader still runs, else through the prefix cache), and a leader that ends before its prompt is computed hands
// the lead to the next held member. Mechanism only: the engine adds what this returns to the scheduler.
import type { KvCacheManager } from "../kv/kv-cache.js";
import { EngineError } from "../request.js";
import type { KvBackedRequest } from "./kv-space.js";
import type { KvSpace } from "./scheduler.js";

/** Most members of one fork group (the most choices `n` of one request). */
export const MAX_FORKS = 16;

/** What a group needs of a member request. */
export interface ForkMember extends KvBackedRequest {
  readonly promptLength: number;
  /**
   * A running member of its group whose prompt KV it forks at admission (set here when it is released); cleared by
   * the engine once it is admitted, so that a preempted member recomputes through the prefix cache like any request.
   */
  forkSource: ForkMember | undefined;
  /**
   * Whether it needs every prompt row's logits (prompt log-probabilities): such a member never forks, for a fork skips
   * those rows. It may lead (the others fork its computed prompt); otherwise it computes its prompt alone.
   */
  readonly allRowLogits?: boolean;
}

/**
 * The scheduler's KV space with forks: a request with a fork source that holds its prompt's KV takes all of it but the
 * last token from there (KvCacheManager.fork); the last token it computes itself, so that its first token is sampled
 * from its own logits exactly as alone. Otherwise, or when the fork cannot be had, it adopts as `inner` does.
 */
export function forkingKvSpace<R extends ForkMember>(inner: KvSpace<R>, manager: KvCacheManager): KvSpace<R> {
  return {
    ...inner,
    adopt: (request) => {
      const source = request.forkSource;
      const positions = request.promptLength - 1;
      const forked = source && !request.allRowLogits && request.tokens.length === request.promptLength && source.computed >= positions ? manager.fork(request.kv, source.kv, positions) : undefined;
      if (!forked) {
        inner.adopt(request);
        return;
      }
      request.adoption = forked;
      request.computed = positions;
    },
  };
}

interface Group<R extends ForkMember> {
  readonly key: string;
  readonly size: number;
  readonly prompt: readonly number[];
  /** Members submitted so far (ended ones included). */
  joined: number;
  readonly live: Set<R>;
  leader: R | undefined;
  /** Members waiting for the leader's prompt. */
  readonly held: R[];
  /** Whether the leader's prompt was computed (its KV is there to fork, while it runs). */
  ready: boolean;
}

/**
 * Checks a request's `fork` field. @throws EngineError naming `fork`, `fork.group` or `fork.size`.
 */
export function checkFork(fork: unknown): { group: string; size: number } | undefined {
  if (fork === undefined) return undefined;
  if (typeof fork !== "object" || fork === null) throw new EngineError("invalid_request", "fork must be an object {group, size}", "fork");
  const { group, size } = fork as { group?: unknown; size?: unknown };
  if (typeof group !== "string" || group === "") throw new EngineError("invalid_request", `fork.group must be a non-empty string, got ${JSON.stringify(group)}`, "fork.group");
  if (typeof size !== "number" || !Number.isInteger(size) || size < 2 || size > MAX_FORKS) {
    throw new EngineError("invalid_request", `fork.size must be an integer from 2 to ${MAX_FORKS}, got ${JSON.stringify(size)}`, "fork.size");
  }
  return { group, size };
}

/** The fork groups with members alive in the engine. */
export class ForkGroups<R extends ForkMember> {
  private readonly groups = new Map<string, Group<R>>();
  private readonly groupOf = new Map<R, Group<R>>();

  /** Groups with live members (for tests and stats). */
  get size(): number {
    return this.groups.size;
  }

  /**
   * Checks that a member with `prompt` may join group `fork` (before it is accepted).
   * @throws EngineError naming `fork.size` (another size than its group's) or `fork.group` (a full group, another prompt).
   */
  check(fork: { group: string; size: number }, prompt: readonly number[]): void {
    const group = this.groups.get(fork.group);
    if (!group) return;
    if (group.size !== fork.size) throw new EngineError("invalid_request", `fork.size is ${fork.size}, but group ${JSON.stringify(fork.group)} has size ${group.size}`, "fork.size");
    if (group.joined >= group.size) throw new EngineError("invalid_request", `fork group ${JSON.stringify(fork.group)} already has its ${group.size} members`, "fork.group");
    if (!samePrompt(group.prompt, prompt)) {
      throw new EngineError("invalid_request", `the members of fork group ${JSON.stringify(fork.group)} must have the same prompt (this one differs)`, "fork.group");
    }
  }

  /** Members held for their leader's prompt, over every group (they wait as queued requests do). */
  get heldCount(): number {
    let held = 0;
    for (const group of this.groups.values()) held += group.held.length;
    return held;
  }

  /** A live member of the group `key`, if it has one (what a new member may share with it, such as encoded images). */
  memberOf(key: string): R | undefined {
    return this.groups.get(key)?.live.values().next().value;
  }

  /** Adds a checked member; true when it starts now, false when it is held for its leader's prompt. */
  join(request: R, fork: { group: string; size: number }, prompt: readonly number[]): boolean {
    let group = this.groups.get(fork.group);
    if (!group) {
      group = { key: fork.group, size: fork.size, prompt: [...prompt], joined: 0, live: new Set(), leader: undefined, held: [], ready: false };
      this.groups.set(fork.group, group);
    }
    group.joined++;
    group.live.add(request);
    this.groupOf.set(request, group);
    if (!group.leader) {
      group.leader = request;
      group.ready = this.computedPrompt(request);
      return true;
    }
    if (request.allRowLogits) return true; // computes its own prompt: nothing to wait for
    if (group.ready) {
      request.forkSource = group.leader;
      return true;
    }
    group.held.push(request);
    return false;
  }

  /**
   * After a step that computed some of `request`'s tokens: when it leads a group whose held members wait and its prompt
   * is now computed, those members, released with it as their fork source.
   */
  progressed(request: R): R[] {
    const group = this.groupOf.get(request);
    if (!group || group.leader !== request || group.ready || !this.computedPrompt(request)) return [];
    group.ready = true;
    const released = group.held.splice(0);
    for (const member of released) member.forkSource = request;
    return released;
  }

  /**
   * A member ended (finished, aborted or failed). Returns the member to start now when it led a group whose prompt was
   * not yet computed: the next held member, which leads from then on.
   */
  leave(request: R): R[] {
    const group = this.groupOf.get(request);
    if (!group) return [];
    this.groupOf.delete(request);
    group.live.delete(request);
    const held = group.held.indexOf(request);
    if (held >= 0) group.held.splice(held, 1);
    for (const member of group.live) if (member.forkSource === request) member.forkSource = undefined;
    if (group.live.size === 0) {
      // NOTE: members still to come start a new group of their own (they are not held for anyone).
      this.groups.delete(group.key);
      return [];
    }
    if (group.leader !== request) return [];
    group.leader = undefined;
    if (group.ready) return []; // the others were released; a late member leads itself
    const next = group.held.shift();
    if (!next) return [];
    group.leader = next;
    group.ready = this.computedPrompt(next);
    return [next];
  }

  /** Whether the member's prompt is computed up to its last token (what a fork takes). */
  private computedPrompt(request: R): boolean {
    return request.computed >= request.promptLength - 1;
  }
}

function samePrompt(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
