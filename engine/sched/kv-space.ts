// The scheduler's view of the KV cache manager for requests that carry their own SequenceKv: adoption sets the
// tokens computed from the cache's reuse and keeps that reuse on the request.
import type { KvCacheManager, KvReuse, SequenceKv } from "../kv/kv-cache.js";
import type { KvSpace, SchedulableRequest } from "./scheduler.js";

/** A request whose KV lives in a SequenceKv of the manager. */
export interface KvBackedRequest extends SchedulableRequest {
  readonly kv: SequenceKv;
  /** The latest adoption's reuse (set on every admission attempt). */
  adoption?: KvReuse;
  /** Reuse only KV computed for these very tokens (a cached prefix), never a relocated section (an approximation). */
  readonly exactKvOnly?: boolean;
}

/** Binds the scheduler's KvSpace to `manager`. */
export function kvSpaceOf<R extends KvBackedRequest>(manager: KvCacheManager): KvSpace<R> {
  return {
    adopt: (request) => {
      // A request that needs every row's logits (prompt log-probabilities) computes its whole prompt: it adopts nothing.
      request.adoption = request.allRowLogits ? { prefixTokens: 0, suffixTokens: 0 } : manager.adopt(request.kv, request.tokens, { sections: !request.exactKvOnly });
      request.computed = request.adoption.prefixTokens + request.adoption.suffixTokens;
    },
    reserve: (request, positions) => manager.reserve(request.kv, positions),
    release: (request) => manager.release(request.kv),
    capacityPositions: manager.pool.capacity * manager.pool.blockSize,
  };
}
