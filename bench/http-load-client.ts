// The client side of the HTTP benchmarks (bench/http-load.ts, bench/platform-overhead.ts): N closed loops of POSTs
// over node:http keep-alive connections (no SDKs; not fetch, which took 1.5-2x the client CPU per token here), either
// streaming through a minimal SSE parser, timing each request's first text delta, the gaps between text deltas and
// its end, or (stream: false) reading one JSON body; output tokens come from the response's usage. Imports node
// builtins only, so it stays light when a bench forks it as a child process (processClient, the default: the client
// then runs on its own event loop and heap, not on the server's).
// Child protocol: the parent sends {id, job: LoadJob}; the child answers {id, result: LoadResult} or {id, error}.
import { type ChildProcess, fork } from "node:child_process";
import { Agent, request } from "node:http";
import { StringDecoder } from "node:string_decoder";
import { fileURLToPath } from "node:url";

/**
 * Which stream shape to parse. "openai": chat.completion.chunk frames and data: [DONE]; "anthropic": messages events;
 * "responses": the Responses API's typed events.
 */
export type StreamFormat = "openai" | "anthropic" | "responses";

/** One load run: `bodies` (JSON) POSTed to `url` from `concurrency` client loops, one request at a time per loop. */
export interface LoadJob {
  url: string;
  format: StreamFormat;
  headers: Record<string, string>;
  bodies: string[];
  concurrency: number;
  /** Reuse connections between a loop's requests (default true); false opens one per request. */
  keepAlive?: boolean;
  /** The bodies ask for a server-sent event stream (default true); false: one JSON response per request. */
  stream?: boolean;
}

/** What one request saw, client side. Seconds from the moment the request was sent. */
export interface RequestTiming {
  /** First non-empty text delta (NaN if none came, and for JSON responses). */
  ttft: number;
  /** Gaps between successive non-empty text deltas, as they arrived (several in one read share a timestamp). */
  gaps: number[];
  total: number;
  /** From the usage (OpenAI final usage chunk, Anthropic message_delta, or the JSON body's); -1 if there was none. */
  outputTokens: number;
  promptTokens: number;
  cachedTokens: number;
  /** Non-empty text deltas received. */
  deltas: number;
  text: string;
}

export interface LoadResult {
  /** Wall time from the first request sent to the last stream ended. */
  seconds: number;
  /** In request order. */
  requests: RequestTiming[];
  /** CPU seconds this process used during the run (user + system), or NaN when the client runs inline. */
  cpuSeconds: number;
}

/** Runs one job in this process. */
export async function runLoad(job: LoadJob, measureCpu: boolean): Promise<LoadResult> {
  const requests: RequestTiming[] = new Array(job.bodies.length);
  const agent = new Agent({ keepAlive: job.keepAlive ?? true, maxSockets: job.concurrency });
  let next = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  try {
    await Promise.all(Array.from({ length: Math.min(job.concurrency, job.bodies.length) }, async () => {
      while (next < job.bodies.length) {
        const index = next++;
        requests[index] = await streamWithRetry(job, job.bodies[index], agent);
      }
    }));
  } finally {
    agent.destroy();
  }
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { seconds, requests, cpuSeconds: measureCpu ? (used.user + used.system) / 1e6 : Number.NaN };
}

/**
 * streamOne, sent again once on a fresh connection when a reused keep-alive connection turns out to have been closed
 * by the server before it answered (llama-server closes them after a stream), as Node's documentation advises.
 */
async function streamWithRetry(job: LoadJob, body: string, agent: Agent): Promise<RequestTiming> {
  try {
    return await streamOne(job, body, agent);
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
    return streamOne(job, body, agent);
  }
}

/** A reused connection was reset before any response arrived. */
class StaleConnectionError extends Error {}

/** One streaming request, read to the end of the response body. */
function streamOne(job: LoadJob, body: string, agent: Agent): Promise<RequestTiming> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const timing: RequestTiming = { ttft: Number.NaN, gaps: [], total: 0, outputTokens: -1, promptTokens: -1, cachedTokens: 0, deltas: 0, text: "" };
    let last = 0;
    const onText = (text: string, now: number) => {
      if (text === "") return;
      if (timing.deltas === 0) timing.ttft = (now - start) / 1000;
      else timing.gaps.push((now - last) / 1000);
      last = now;
      timing.deltas++;
      timing.text += text;
    };
    const onFrame = job.format === "openai" ? openAiFrame : job.format === "responses" ? responsesFrame : anthropicFrame;
    const headers = { "content-type": "application/json", accept: "text/event-stream", "content-length": Buffer.byteLength(body), ...job.headers };
    const post = request(job.url, { method: "POST", headers, agent }, (response) => {
      const decoder = new StringDecoder("utf8");
      let buffer = "";
      if (response.statusCode !== 200) {
        response.on("data", (chunk: Buffer) => { buffer += decoder.write(chunk); });
        response.on("end", () => reject(new Error(`POST ${job.url}: HTTP ${response.statusCode}: ${buffer.slice(0, 500)}`)));
        return;
      }
      if (job.stream === false) {
        response.on("data", (chunk: Buffer) => { buffer += decoder.write(chunk); });
        response.on("end", () => {
          timing.total = (performance.now() - start) / 1000;
          try {
            readJsonResponse(job.format, buffer + decoder.end(), timing);
            resolve(timing);
          } catch (error) {
            reject(error);
          }
        });
        response.on("error", reject);
        return;
      }
      response.on("data", (chunk: Buffer) => {
        const now = performance.now();
        buffer += decoder.write(chunk);
        if (buffer.includes("\r")) buffer = buffer.replace(/\r\n?/g, "\n");
        try {
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let data = "";
            for (const line of frame.split("\n")) {
              if (line.startsWith("data:")) data += (data === "" ? "" : "\n") + line.slice(line[5] === " " ? 6 : 5);
            }
            if (data !== "") onFrame(data, now, timing, onText);
          }
        } catch (error) {
          response.destroy();
          reject(error);
        }
      });
      response.on("end", () => {
        timing.total = (performance.now() - start) / 1000;
        resolve(timing);
      });
      response.on("error", reject);
    });
    post.on("error", (error: NodeJS.ErrnoException) => {
      const stale = post.reusedSocket && (error.code === "ECONNRESET" || error.message === "socket hang up");
      reject(stale ? new StaleConnectionError(error.message) : error);
    });
    post.end(body);
  });
}

/** A whole chat.completion or message body: its text and usage. */
function readJsonResponse(format: StreamFormat, body: string, timing: RequestTiming): void {
  if (format === "openai") {
    const completion = JSON.parse(body) as {
      choices: Array<{ message: { content: string | null } }>;
      usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };
    };
    timing.text = completion.choices[0]?.message.content ?? "";
    timing.outputTokens = completion.usage.completion_tokens;
    timing.promptTokens = completion.usage.prompt_tokens;
    timing.cachedTokens = completion.usage.prompt_tokens_details?.cached_tokens ?? 0;
  } else if (format === "responses") {
    const response = JSON.parse(body) as ResponseBody;
    timing.text = response.output_text;
    readResponsesUsage(response, timing);
  } else {
    const message = JSON.parse(body) as {
      content: Array<{ type: string; text?: string }>;
      usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number };
    };
    timing.text = message.content.map((block) => (block.type === "text" ? block.text ?? "" : "")).join("");
    timing.outputTokens = message.usage.output_tokens;
    timing.cachedTokens = message.usage.cache_read_input_tokens ?? 0;
    timing.promptTokens = message.usage.input_tokens + timing.cachedTokens;
  }
  timing.deltas = timing.text === "" ? 0 : 1;
}

type TextSink = (text: string, now: number) => void;

/** The parts of a Responses API response object the client reads. */
interface ResponseBody {
  output_text: string;
  usage: { input_tokens: number; output_tokens: number; input_tokens_details?: { cached_tokens?: number } } | null;
}

function readResponsesUsage(response: ResponseBody, timing: RequestTiming): void {
  if (!response.usage) return;
  timing.outputTokens = response.usage.output_tokens;
  timing.promptTokens = response.usage.input_tokens;
  timing.cachedTokens = response.usage.input_tokens_details?.cached_tokens ?? 0;
}

function responsesFrame(data: string, now: number, timing: RequestTiming, onText: TextSink): void {
  const event = JSON.parse(data) as { type: string; delta?: string; message?: string; response?: ResponseBody };
  switch (event.type) {
    case "response.output_text.delta":
      if (typeof event.delta === "string") onText(event.delta, now);
      break;
    case "response.completed":
    case "response.incomplete":
      if (event.response) readResponsesUsage(event.response, timing);
      break;
    case "error":
      throw new Error(`stream error: ${event.message ?? data}`);
  }
}

function openAiFrame(data: string, now: number, timing: RequestTiming, onText: TextSink): void {
  if (data === "[DONE]") return;
  const chunk = JSON.parse(data) as {
    error?: { message?: string };
    choices?: Array<{ delta?: { content?: string | null } }>;
    usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
  };
  if (chunk.error) throw new Error(`stream error: ${chunk.error.message ?? JSON.stringify(chunk.error)}`);
  const content = chunk.choices?.[0]?.delta?.content;
  if (typeof content === "string") onText(content, now);
  if (chunk.usage) {
    timing.outputTokens = chunk.usage.completion_tokens;
    timing.promptTokens = chunk.usage.prompt_tokens;
    timing.cachedTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
  }
}

function anthropicFrame(data: string, now: number, timing: RequestTiming, onText: TextSink): void {
  const event = JSON.parse(data) as {
    type: string;
    error?: { message?: string };
    delta?: { type?: string; text?: string };
    message?: { usage?: { input_tokens: number; cache_read_input_tokens?: number } };
    usage?: { output_tokens: number };
  };
  switch (event.type) {
    case "content_block_delta":
      if (event.delta?.type === "text_delta" && typeof event.delta.text === "string") onText(event.delta.text, now);
      break;
    case "message_start": {
      const usage = event.message?.usage;
      if (usage) {
        timing.cachedTokens = usage.cache_read_input_tokens ?? 0;
        timing.promptTokens = usage.input_tokens + timing.cachedTokens;
      }
      break;
    }
    case "message_delta":
      if (event.usage) timing.outputTokens = event.usage.output_tokens;
      break;
    case "error":
      throw new Error(`stream error: ${event.error?.message ?? data}`);
  }
}

/** Runs load jobs: in a forked child process, or inline in the calling process. */
export interface LoadClient {
  readonly mode: "process" | "inline";
  run(job: LoadJob): Promise<LoadResult>;
  close(): void;
}

/** Runs the jobs on the caller's own event loop (its CPU is then counted as the server's). */
export function inlineClient(): LoadClient {
  return { mode: "inline", run: (job) => runLoad(job, false), close: () => {} };
}

/** Runs the jobs in a forked child process running this file, one job at a time per call. */
export function processClient(): LoadClient {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const pending = new Map<number, { resolve: (result: LoadResult) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  child.on("message", (message: { id: number; result?: LoadResult; error?: string }) => {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(`load client: ${message.error}`));
    else waiter?.resolve(message.result!);
  });
  child.on("exit", (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`the load client process exited with code ${code}`));
    pending.clear();
  });
  return {
    mode: "process",
    run: (job) => new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, job });
    }),
    close: () => child.disconnect(),
  };
}

// Child-process entry: forked by processClient with an IPC channel.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) {
  process.on("message", (message: { id: number; job: LoadJob }) => {
    runLoad(message.job, true).then(
      (result) => process.send!({ id: message.id, result }),
      (error: unknown) => process.send!({ id: message.id, error: error instanceof Error ? error.stack ?? error.message : String(error) }),
    );
  });
  process.on("disconnect", () => process.exit(0));
}
