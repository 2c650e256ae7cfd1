// Clients that keep asking while an operator changes the deployment under them: closed loops of chat completions,
// each request's start, end and outcome recorded, with no retries (a failure is what a client without retry logic
// sees), and what a window of that record says: how many failed, the longest time without a successful answer, the
// slowest answer.

/** One request: when it started and ended (performance.now() ms), and what went wrong if it did. */
export interface ProbeRequest {
  start: number;
  end: number;
  /** Undefined for success: HTTP 200 and, for a stream, `data: [DONE]` at its end. */
  failure?: string;
}

/** What the clients saw in a window. */
export interface WindowReport {
  succeeded: number;
  failed: number;
  /** Failures by kind ("HTTP 503", "fetch failed: other side closed"), most frequent first. */
  failures: Array<{ kind: string; count: number }>;
  /** The longest time in the window with no request succeeding: between the window's edges and successes' ends. */
  longestGapMs: number;
  /** The slowest successful request that started in the window. */
  slowestMs: number;
}

/** How each lane asks. */
export interface ProbeLane {
  stream: boolean;
  maxTokens: number;
}

/** Wait after a failure before the next try, so a refused port does not spin the client. */
const PAUSE_AFTER_FAILURE_MS = 20;

/** Closed client loops against `base` (`http://host:port`) with an inference key, until stop(). */
export class AvailabilityProbe {
  readonly requests: ProbeRequest[] = [];
  private running = true;
  private readonly lanes: Promise<void>[];

  constructor(private readonly base: string, private readonly key: string, private readonly model: string, lanes: readonly ProbeLane[]) {
    this.lanes = lanes.map((lane, index) => this.loop(lane, index));
  }

  /** Stops the loops once their requests in flight end. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
  }

  /** What the clients saw between `from` and `to` (performance.now() ms). */
  window(from: number, to: number): WindowReport {
    const ended = this.requests.filter((request) => request.end >= from && request.end <= to);
    const successes = ended.filter((request) => request.failure === undefined);
    const edges = [from, ...successes.map((request) => request.end).sort((a, b) => a - b), to];
    let longestGapMs = 0;
    for (let i = 1; i < edges.length; i++) longestGapMs = Math.max(longestGapMs, edges[i]! - edges[i - 1]!);
    const kinds = new Map<string, number>();
    for (const request of ended) if (request.failure !== undefined) kinds.set(request.failure, (kinds.get(request.failure) ?? 0) + 1);
    const slowest = successes.filter((request) => request.start >= from).map((request) => request.end - request.start);
    return {
      succeeded: successes.length,
      failed: ended.length - successes.length,
      failures: [...kinds].map(([kind, count]) => ({ kind, count })).sort((a, b) => b.count - a.count),
      longestGapMs,
      slowestMs: slowest.length === 0 ? Number.NaN : Math.max(...slowest),
    };
  }

  private async loop(lane: ProbeLane, index: number): Promise<void> {
    let turn = 0;
    while (this.running) {
      const start = performance.now();
      const failure = await this.ask(lane, `Client ${index}, request ${turn++}: say something.`);
      this.requests.push({ start, end: performance.now(), failure });
      if (failure !== undefined) await new Promise((resolve) => setTimeout(resolve, PAUSE_AFTER_FAILURE_MS));
    }
  }

  /** One chat completion. @returns undefined on success, else what failed. */
  private async ask(lane: ProbeLane, content: string): Promise<string | undefined> {
    try {
      const response = await fetch(`${this.base}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: this.model, messages: [{ role: "user", content }], max_tokens: lane.maxTokens, temperature: 0, stream: lane.stream }),
        signal: AbortSignal.timeout(120_000),
      });
      const body = await response.text();
      if (response.status !== 200) return `HTTP ${response.status}`;
      if (lane.stream && !body.endsWith("data: [DONE]\n\n")) return /data: \{"error"/.test(body) ? "stream ended with an error event" : "stream cut off";
      return undefined;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return `${(error as Error).message}${cause ? `: ${cause.code ?? cause.message}` : ""}`;
    }
  }
}
