// The arithmetic and log reading behind bench/vision-encode.ts: the multiply-adds of one image through a Gemma 3
// vision encoder, by the kernel that does them, and the figures llama-mtmd-cli and /usr/bin/time -v print.
import type { VisionConfig } from "../engine/vision/clip-config.js";

/** Multiply-adds of one image through the encoder, by the loom kernel that does them (1 multiply-add = 2 FLOP). */
export interface EncoderWork {
  /** The layers' q, k, v, output, up and down projections (F16 weights in a published mmproj: matmul_f16). */
  layerMatmuls: number;
  /** q k^T and p v of every layer and head (attention_dense; the exponentials are not counted). */
  attention: number;
  /** The patch embedding (a convolution as a matmul over patch rows) and the projection into the text model (matmul_f32). */
  patchAndProjection: number;
  total: number;
}

/**
 * The multiply-adds of one image through `config`'s encoder: n patches of width d, feed-forward f, L layers:
 * L (4 n d^2 + 2 n d f + 2 n^2 d), plus n (3 p^2) d for the patch embedding and tokens d out for the projection.
 * Norms, biases, GELU, pooling and the softmax are left out (under 0.1% of the total for Gemma 3's tower).
 */
export function encoderWork(config: Pick<VisionConfig, "patchesPerSide" | "patchSize" | "hiddenSize" | "feedForwardSize" | "layers" | "tokensPerImage" | "outputSize">): EncoderWork {
  const { patchesPerSide, patchSize, hiddenSize: d, feedForwardSize: f, layers, tokensPerImage, outputSize } = config;
  const n = patchesPerSide * patchesPerSide;
  const layerMatmuls = layers * (4 * n * d * d + 2 * n * d * f);
  const attention = layers * 2 * n * n * d;
  const patchAndProjection = n * 3 * patchSize * patchSize * d + tokensPerImage * d * outputSize;
  return { layerMatmuls, attention, patchAndProjection, total: layerMatmuls + attention + patchAndProjection };
}

/** What one llama-mtmd-cli run with `--perf -lv 4` logs about an image request; undefined where a line is missing. */
export interface MtmdRun {
  /** The image's encode ("mtmd batch encoding done in N ms", or "image slice encoded in N ms" in older builds). */
  encodeMs: number | undefined;
  /** Decoding the image's embeddings through the text model, all batches ("image decoded (batch i/n) in N ms"). */
  imageDecodeMs: number | undefined;
  /** llama_perf_context_print's prompt eval: every multi-token decode (text chunks and image batches). */
  promptEvalMs: number | undefined;
  promptTokens: number | undefined;
  /** Its eval time: the one-token decodes (with -n 1, the generated token fed back after it is printed). */
  evalMs: number | undefined;
  /** The clip warmup's verdict on flash attention in the encoder. */
  flashAttention: "enabled" | "disabled" | undefined;
  /**
   * From the CLI's warning before the request (after both models are loaded) to the perf print after the first
   * token, less the eval of that token: the request's time to first token, from the log's timestamps.
   */
  timeToFirstTokenMs: number | undefined;
}

/** Seconds since start of a log line's "M.SS.mmm.uuu" timestamp prefix. */
function stampSeconds(line: string): number | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)\.(\d+) /.exec(line);
  if (!match) return undefined;
  const [minutes, seconds, milliseconds, microseconds] = match.slice(1).map(Number) as [number, number, number, number];
  return minutes * 60 + seconds + milliseconds / 1e3 + microseconds / 1e6;
}

/** Reads llama-mtmd-cli's stderr (run with `--perf -lv 4`, timestamps on, as by default). */
export function parseMtmdLog(log: string): MtmdRun {
  // Colour codes, if the log has them, would split the timestamps from the text.
  const lines = log.replace(/\x1b\[[0-9;]*m/g, "").split("\n");
  const number = (pattern: RegExp) => {
    for (const line of lines) {
      const match = pattern.exec(line);
      if (match) return Number(match[1]);
    }
    return undefined;
  };
  let imageDecodeMs: number | undefined;
  for (const line of lines) {
    const match = /image decoded \(batch \d+\/\d+\) in (\d+) ms/.exec(line);
    if (match) imageDecodeMs = (imageDecodeMs ?? 0) + Number(match[1]);
  }
  const prompt = lines.map((line) => /prompt eval time =\s*([\d.]+) ms \/\s*(\d+) tokens/.exec(line)).find((match) => match !== null);
  const evalMs = number(/llama_perf_context_print:\s+eval time =\s*([\d.]+) ms/);
  const flash = lines.map((line) => /warmup: flash attention is (enabled|disabled)/.exec(line)).find((match) => match !== null);
  const startLine = lines.find((line) => line.includes("WARN: This is an experimental CLI"));
  const endLine = lines.find((line) => /llama_perf_context_print:\s+load time/.test(line));
  const start = startLine === undefined ? undefined : stampSeconds(startLine);
  const end = endLine === undefined ? undefined : stampSeconds(endLine);
  return {
    encodeMs: number(/mtmd batch encoding done in (\d+) ms/) ?? number(/image slice encoded in (\d+) ms/),
    imageDecodeMs,
    promptEvalMs: prompt ? Number(prompt[1]) : undefined,
    promptTokens: prompt ? Number(prompt[2]) : undefined,
    evalMs,
    flashAttention: flash ? (flash[1] as "enabled" | "disabled") : undefined,
    timeToFirstTokenMs: start === undefined || end === undefined ? undefined : (end - start) * 1000 - (evalMs ?? 0),
  };
}

/** What GNU time's `-v` report says about a process: peak RSS in bytes, CPU seconds (user + system), wall seconds. */
export interface TimeReport {
  maxRssBytes: number | undefined;
  cpuSeconds: number | undefined;
  wallSeconds: number | undefined;
}

/** Reads the report `/usr/bin/time -v` appends to stderr. */
export function parseTimeReport(log: string): TimeReport {
  const value = (label: string) => {
    const match = new RegExp(`^\\s*${label}: (.+)$`, "m").exec(log);
    return match?.[1]?.trim();
  };
  const rss = value("Maximum resident set size \\(kbytes\\)");
  const user = value("User time \\(seconds\\)");
  const system = value("System time \\(seconds\\)");
  const elapsed = value("Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)");
  let wallSeconds: number | undefined;
  if (elapsed !== undefined) wallSeconds = elapsed.split(":").reduce((total, part) => total * 60 + Number(part), 0);
  return {
    maxRssBytes: rss === undefined ? undefined : Number(rss) * 1024,
    cpuSeconds: user === undefined || system === undefined ? undefined : Number(user) + Number(system),
    wallSeconds,
  };
}
