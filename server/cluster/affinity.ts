// Routing affinity: requests that name the same key (OpenAI's `prompt_cache_key`) go to the same worker, where their
// shared prefix is cached, while that worker is connected and has room; otherwise the policy picks one and the key
// moves there. A bounded map, the least recently used key forgotten first.
import type { RouteCandidate } from "./routing.js";

/** Keys remembered per model and pool (a key costs a string and a reference). */
export const AFFINITY_KEYS = 10_000;

/** Which worker each recent key went to. */
export class AffinityMap<W> {
  readonly #workers = new Map<string, W>();

  constructor(private readonly size: number = AFFINITY_KEYS) {}

  /** The worker `key` went to last, if remembered. */
  get(key: string): W | undefined {
    return this.#workers.get(key);
  }

  /** Remembers that `key` went to `worker` (the most recent use), forgetting the oldest key past the size. */
  set(key: string, worker: W): void {
    this.#workers.delete(key);
    this.#workers.set(key, worker);
    if (this.#workers.size > this.size) this.#workers.delete(this.#workers.keys().next().value!);
  }
}

/**
 * Whether the key's worker keeps the request: it does unless it is full (load at its capacity, so the request would
 * wait) while another candidate has room.
 */
export function keepsAffinity(pinned: RouteCandidate, candidates: readonly RouteCandidate[]): boolean {
  if (pinned.load < pinned.capacity) return true;
  return !candidates.some((candidate) => candidate.load < candidate.capacity);
}
