// Which worker takes a request. The worker holding the longest cached prefix of its prompt (exactly: the gateway
// mirrors every worker's prefix cache), unless that worker's load exceeds the least loaded worker's by more than a
// margin. A prefix most recent prompts share (the chat template's first block) is no match while it is at most half
// the prompt: it lives on every worker that served anything. On a miss, the least loaded worker relative to its capacity; among equals, the one that took
// fewest recent requests (a worker added since takes new tenants), then one at random (sending every tie to the
// first worker would pile a burst onto one).

/** How a gateway picks workers: cacheAware (the default), leastLoaded, or in turn (for comparison). */
export type RoutingPolicy = "cache-aware" | "least-load" | "round-robin";

/** The policies, as `loom gateway --routing` takes them. */
export const ROUTING_POLICIES: readonly RoutingPolicy[] = ["cache-aware", "least-load", "round-robin"];

/** What a gateway's routing did for one model (every pool): for /metrics and the routing benchmark. */
export interface RoutingCounters {
  requests: number;
  /** Sent to a worker holding the longest cached prefix any worker held (0 blocks not counted). */
  toCachedPrefix: number;
  /** Some worker held a cached prefix, but the request went elsewhere (its holder was too busy, or the policy ignores caches). */
  awayFromCachedPrefix: number;
  /** Leading prompt blocks cached on the chosen worker, summed over requests. */
  cachedBlocksChosen: number;
  /** Leading prompt blocks cached on the best worker for each request (what an oracle routing on the caches gets), summed. */
  cachedBlocksBest: number;
  /** Leading full prompt blocks, summed (the prompts' blocks, cached or not). */
  promptBlocks: number;
}

/** Counters with nothing counted yet. */
export function noRouting(): RoutingCounters {
  return { requests: 0, toCachedPrefix: 0, awayFromCachedPrefix: 0, cachedBlocksChosen: 0, cachedBlocksBest: 0, promptBlocks: 0 };
}

/** Several counters as one (a model's engines in every pool). */
export function sumRouting(all: readonly RoutingCounters[]): RoutingCounters {
  const total = noRouting();
  for (const counters of all) for (const key of Object.keys(total) as (keyof RoutingCounters)[]) total[key] += counters[key];
  return total;
}

/** A worker as routing sees it. */
export interface RouteCandidate {
  /** Requests in flight on it. */
  load: number;
  /** Sequences it runs at once. */
  capacity: number;
  /** Recent requests sent to it (recent-prompts.ts); among equal loads the fewest wins. Undefined counts as 0. */
  recent?: number;
}

/**
 * The least loaded candidate relative to its capacity; among equals, the one with the fewest recent requests, then a
 * random one; undefined when there is none.
 */
export function leastLoaded<T extends RouteCandidate>(candidates: readonly T[], random: () => number = Math.random): T | undefined {
  let best: T[] = [];
  let bestLoad = Number.POSITIVE_INFINITY;
  let bestRecent = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const load = candidate.load / Math.max(1, candidate.capacity);
    const recent = candidate.recent ?? 0;
    if (load < bestLoad || (load === bestLoad && recent < bestRecent)) {
      best = [candidate];
      bestLoad = load;
      bestRecent = recent;
    } else if (load === bestLoad && recent === bestRecent) {
      best.push(candidate);
    }
  }
  return best.length === 0 ? undefined : best[Math.min(best.length - 1, Math.floor(random() * best.length))];
}

/** A worker as cache-aware routing sees it. */
export interface CacheRouteCandidate extends RouteCandidate {
  /** Leading full blocks of the prompt its prefix cache holds. */
  cachedBlocks: number;
}

/** What cacheAware weighs a worker's cached prefix against its load with. */
export interface CacheRouteOptions {
  /** Tokens per cache block. */
  blockSize: number;
  /** The prompt's tokens. */
  promptTokens: number;
  /** Output tokens per request, on average (the gateway's running mean). */
  meanOutputTokens: number;
  /** A fixed margin in requests (`--cache-load-margin`) instead of the derived one. */
  fixedMargin?: number;
  /**
   * Leading blocks of the prompt most recent prompts share (recent-prompts.ts): while they are at most half the
   * prompt's blocks, holding no more is no match.
   */
  commonBlocks?: number;
}

/**
 * The candidate holding the most leading blocks of the prompt (the least loaded of those that tie), unless its load
 * exceeds the least loaded candidate's by more than a margin: then the least loaded one.
 *
 * Holding no more than the prefix most recent prompts share (`commonBlocks`) is a miss, which the least loaded
 * candidate takes, while that prefix is at most half the prompt: a chat template's first block or a short shared
 * system prompt is cached wherever anything ran, and counting it sent every new tenant to its first holder. Where the
 * shared prefix is most of the prompt (one tenant's long system prompt before short questions, the only traffic so
 * far), holding it saves most of the prefill, and the margin decides as for any match.
 *
 * The margin is derived unless fixed: each request in flight on a worker takes a share of every step while the new
 * request generates, so a worker's work for it is about its uncached prompt tokens plus its requests in flight times
 * the mean output length. The holder wins while that is smallest, i.e. while its extra load is below the prompt
 * tokens it saves over the least loaded worker divided by the mean output length: a 1,000-token system prompt
 * outweighs many requests in flight, a one-block chat-template prefix hardly one.
 */
export function cacheAware<T extends CacheRouteCandidate>(candidates: readonly T[], options: CacheRouteOptions, random: () => number = Math.random): T | undefined {
  const least = leastLoaded(candidates, random);
  if (!least) return undefined;
  const most = Math.max(...candidates.map((candidate) => candidate.cachedBlocks));
  const common = options.commonBlocks ?? 0;
  const promptBlocks = Math.floor(options.promptTokens / options.blockSize);
  if (most <= (common * 2 <= promptBlocks ? common : 0)) return least;
  const holder = leastLoaded(candidates.filter((candidate) => candidate.cachedBlocks === most), random)!;
  const extraLoad = holder.load - least.load;
  if (options.fixedMargin !== undefined) return extraLoad <= options.fixedMargin ? holder : least;
  const savedTokens = Math.min(options.promptTokens, (holder.cachedBlocks - least.cachedBlocks) * options.blockSize);
  return extraLoad * Math.max(1, options.meanOutputTokens) <= savedTokens ? holder : least;
}
