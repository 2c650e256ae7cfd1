// Prometheus metrics of the HTTP server and the engines behind it, rendered in the text exposition format.
import type { RoutingCounters } from "../cluster/routing.js";
import { TokenRate } from "./token-rate.js";

/** Upper bounds (seconds) of the latency histograms. */
const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const ITL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = buckets.map(() => 0);
  }
  observe(value: number): void {
    this.sum += value;
    this.count++;
    this.buckets.forEach((bound, i) => { if (value <= bound) this.counts[i]++; });
  }
}

/** Engine figures sampled at scrape time. */
export interface EngineGauges {
  model: string;
  running: number;
  waiting: number;
  kvBlocksUsed: number;
  kvBlocksCached: number;
  kvBlocksFree: number;
  prefixHits: number;
  sectionHits: number;
  lookups: number;
  /** Prompt tokens the engine ran through the model (cache hits and forked choices' shared prompts excluded). */
  computedPromptTokens: number;
  /** Prompt tokens choices of one request (`n`) took from their group's one prefill instead of computing them. */
  forkedPromptTokens: number;
  /** A gateway's routing for the model (absent on loom serve). */
  routing?: RoutingCounters;
}

/** Counters and histograms the server updates as requests run. */
export class Metrics {
  private readonly requests = new Map<string, number>();
  private promptTokens = 0;
  private cachedTokens = 0;
  private completionTokens = 0;
  private readonly ttft = new Histogram(TTFT_BUCKETS);
  private readonly itl = new Histogram(ITL_BUCKETS);

  /** @param inFlight the HTTP requests being answered now (drain.ts counts them). */
  constructor(private readonly inFlight: () => number = () => 0) {}

  /** Counts a finished HTTP request by route and status. */
  request(route: string, status: number): void {
    const key = `route="${route}",status="${status}"`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  /** Generated tokens per second of each model over the last 10 seconds (the dashboard's live load). */
  readonly generated = new TokenRate();

  /** Counts a finished request's tokens; `model` (its metrics name, as the gauges label it) feeds `generated`. */
  tokens(prompt: number, cached: number, completion: number, model?: string): void {
    this.promptTokens += prompt;
    this.cachedTokens += cached;
    this.completionTokens += completion;
    if (model !== undefined) this.generated.record(model, completion);
  }

  timeToFirstToken(seconds: number): void {
    this.ttft.observe(seconds);
  }

  interTokenLatency(seconds: number): void {
    this.itl.observe(seconds);
  }

  /** The exposition text, with the engines' gauges sampled now. */
  render(engines: readonly EngineGauges[]): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    metric("loom_http_requests_total", "counter", "HTTP requests by route and status.");
    for (const [labels, value] of this.requests) lines.push(`loom_http_requests_total{${labels}} ${value}`);
    metric("loom_http_requests_in_flight", "gauge", "HTTP requests being answered (streams until their last event).");
    lines.push(`loom_http_requests_in_flight ${this.inFlight()}`);
    metric("loom_prompt_tokens_total", "counter", "Prompt tokens of finished requests.");
    lines.push(`loom_prompt_tokens_total ${this.promptTokens}`);
    metric("loom_cached_prompt_tokens_total", "counter", "Prompt tokens served from the prefix or section cache.");
    lines.push(`loom_cached_prompt_tokens_total ${this.cachedTokens}`);
    metric("loom_completion_tokens_total", "counter", "Generated tokens.");
    lines.push(`loom_completion_tokens_total ${this.completionTokens}`);
    histogram(lines, "loom_time_to_first_token_seconds", "Time from request to first generated token.", this.ttft);
    histogram(lines, "loom_inter_token_latency_seconds", "Time between streamed tokens.", this.itl);
    const gauge = (name: string, help: string, pick: (e: EngineGauges) => number) => {
      metric(name, "gauge", help);
      for (const e of engines) lines.push(`${name}{model="${e.model}"} ${pick(e)}`);
    };
    gauge("loom_requests_running", "Requests being computed.", (e) => e.running);
    gauge("loom_queue_depth", "Requests waiting to be admitted.", (e) => e.waiting);
    gauge("loom_kv_blocks_used", "KV blocks held by running requests.", (e) => e.kvBlocksUsed);
    gauge("loom_kv_blocks_cached", "KV blocks cached and evictable.", (e) => e.kvBlocksCached);
    gauge("loom_kv_blocks_free", "Free KV blocks.", (e) => e.kvBlocksFree);
    gauge("loom_cache_lookups", "Prompt cache lookups (admissions).", (e) => e.lookups);
    gauge("loom_prefix_cache_hits", "Admissions that reused a cached prefix.", (e) => e.prefixHits);
    gauge("loom_section_cache_hits", "Admissions that reused a section after a pruned span.", (e) => e.sectionHits);
    gauge("loom_computed_prompt_tokens", "Prompt tokens run through the model since start (cache hits and forked choices excluded).", (e) => e.computedPromptTokens);
    gauge("loom_forked_prompt_tokens", "Prompt tokens that choices of one request (n) took from their group's one prefill since start.", (e) => e.forkedPromptTokens);
    const routed = engines.filter((e) => e.routing);
    if (routed.length > 0) {
      const counter = (name: string, help: string, pick: (r: RoutingCounters) => number) => {
        metric(name, "counter", help);
        for (const e of routed) lines.push(`${name}{model="${e.model}"} ${pick(e.routing!)}`);
      };
      counter("loom_routed_requests_total", "Requests a gateway sent to workers.", (r) => r.requests);
      counter("loom_routed_to_cached_prefix_total", "Requests sent to a worker holding the longest cached prefix of their prompt.", (r) => r.toCachedPrefix);
      counter("loom_routed_away_from_cached_prefix_total", "Requests sent elsewhere than to a worker holding a longer cached prefix.", (r) => r.awayFromCachedPrefix);
      counter("loom_routed_prompt_blocks_total", "Leading full prompt blocks of routed requests.", (r) => r.promptBlocks);
      counter("loom_routed_cached_blocks_chosen_total", "Leading prompt blocks cached on the chosen worker.", (r) => r.cachedBlocksChosen);
      counter("loom_routed_cached_blocks_best_total", "Leading prompt blocks cached on the best worker for each request.", (r) => r.cachedBlocksBest);
    }
    return `${lines.join("\n")}\n`;
  }
}

function histogram(lines: string[], name: string, help: string, h: Histogram): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
  h.buckets.forEach((bound, i) => lines.push(`${name}_bucket{le="${bound}"} ${h.counts[i]}`));
  lines.push(`${name}_bucket{le="+Inf"} ${h.count}`, `${name}_sum ${h.sum}`, `${name}_count ${h.count}`);
}
