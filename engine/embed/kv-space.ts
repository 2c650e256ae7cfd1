// The scheduler's KV space for an engine that runs embedding inputs: an input whose pooling reads rows the prefix
// cache would skip (mean, CLS) adopts no cached KV and computes every row; the rest go to the inner space unchanged.
import type { KvSpace } from "../sched/scheduler.js";
import type { KvBackedRequest } from "../sched/kv-space.js";
import { EmbeddingSequence } from "./embedding-job.js";

/** `inner`, except that embedding inputs that must compute every row adopt nothing. */
export function embeddingKvSpace<R extends KvBackedRequest>(inner: KvSpace<R>): KvSpace<R> {
  return {
    ...inner,
    adopt: (request) => {
      if (!(request instanceof EmbeddingSequence) || request.reusesCachedKv) {
        inner.adopt(request);
        return;
      }
      request.adoption = { prefixTokens: 0, suffixTokens: 0 };
      request.computed = 0;
    },
  };
}
