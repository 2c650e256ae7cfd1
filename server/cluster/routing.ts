// Which worker takes a request. This first rule is load only: the worker with the fewest requests in flight relative
// to its capacity, ties broken at random (sending every tie to the first worker would pile a burst onto one).

/** A worker as routing sees it. */
export interface RouteCandidate {
  /** Requests in flight on it. */
  load: number;
  /** Sequences it runs at once. */
  capacity: number;
}

/** The least loaded candidate relative to its capacity, a random one among equals; undefined when there is none. */
export function leastLoaded<T extends RouteCandidate>(candidates: readonly T[], random: () => number = Math.random): T | undefined {
  let best: T[] = [];
  let bestLoad = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const load = candidate.load / Math.max(1, candidate.capacity);
    if (load < bestLoad) {
      best = [candidate];
      bestLoad = load;
    } else if (load === bestLoad) {
      best.push(candidate);
    }
  }
  return best.length === 0 ? undefined : best[Math.min(best.length - 1, Math.floor(random() * best.length))];
}
