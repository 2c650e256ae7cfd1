// The Responses API adapter's own CPU cost against chat completions', on the HTTP thread, without the engine or the
// network: parsing the same conversation in each format, and encoding the same stream of events (start, N text
// deltas, finish) into each format's server-sent events, per request and per output token. What bench/http-load.js
// measures end to end within its run-to-run spread, this measures to the microsecond. Then what `store: true` adds:
// saving that response (and reading it back, as previous_response_id does) on PGlite.
// Run: npm run build && node dist/bench/responses-adapter.js [options] (USAGE below; --help prints it).
// (--decode-step-us: the time of one decode step at N=1 on the machine, bench/http-load.js's ITL p50, to put the
// difference in proportion.)
import { createEndpoints } from "../server/adapters/endpoints.js";
import { parseResponsesRequest } from "../server/adapters/responses/parse.js";
import { ResponsesStreamWriter } from "../server/adapters/responses/response.js";
import type { InternalEvent, ServedModels } from "../server/protocol/internal.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../server/platform/db/open-database.js";
import { SqlResponseStore } from "../server/platform/store/response-store.js";
import { BenchCli } from "./bench-args.js";
import { median, percentile, printHeader } from "./bench-models.js";
import { SUPPORT_SYSTEM_PROMPT, openAiBody, responsesBody } from "./chat-workload.js";

const MODEL = "service/tim-bench-27b";
const models: ServedModels = { slugs: () => [MODEL], hasVision: () => false };

/**
 * Microseconds per call of `work`, the median of `rounds` rounds of `iterations` calls; each call is awaited (the
 * Responses stream's finish is a promise), so both adapters pay the same for it.
 */
async function timePerCall(work: () => unknown, iterations: number, rounds: number): Promise<{ median: number; spread: [number, number] }> {
  for (let i = 0; i < iterations; i++) await work(); // warm-up: compiled before the clock starts
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) await work();
    samples.push((1000 * (performance.now() - start)) / iterations);
  }
  return { median: median(samples), spread: [Math.min(...samples), Math.max(...samples)] };
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/responses-adapter.js [--tokens 48] [--rounds 5] [--decode-step-us 17600]`;
const cli: BenchCli = new BenchCli("responses-adapter", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({ tokens: { type: "string" }, rounds: { type: "string" }, "decode-step-us": { type: "string" } });
  const tokens = cli.integer("tokens", values.tokens ?? 48);
  const rounds = cli.integer("rounds", values.rounds ?? 5);
  const decodeStepUs = cli.integer("decode-step-us", values["decode-step-us"] ?? 17_600);
  const command = `node dist/bench/responses-adapter.js --tokens ${tokens} --rounds ${rounds} --decode-step-us ${decodeStepUs}`;
  printHeader(command, 1, [
    `the same conversation (the http-load workload's system prompt and a user message) and the same ${tokens}-token stream (4-character deltas) through each adapter; no engine, no sockets`,
    "chat completions: parseChatCompletionRequest + ChatCompletionStreamWriter (include_usage); Responses: parseResponsesRequest + ResponsesStreamWriter (store: false, nothing saved)",
  ]);
  const [chat] = createEndpoints(models);
  const user = "Please check the order status for order number 12345 and tell me when it ships.";
  const chatBody = JSON.parse(openAiBody(MODEL, SUPPORT_SYSTEM_PROMPT, user, tokens)) as object;
  const responsesRequestBody = JSON.parse(responsesBody(MODEL, SUPPORT_SYSTEM_PROMPT, user, tokens)) as object;
  const usage = { promptTokens: 92, cachedTokens: 64, completionTokens: tokens };
  const events: InternalEvent[] = [
    { type: "start", usage: { ...usage, completionTokens: 0 } },
    ...Array.from({ length: tokens }, (_, i): InternalEvent => ({ type: "text", text: ` w${String(i).padStart(2, "0")}` })),
    { type: "finish", reason: "max_tokens", usage },
  ];
  const meta = { id: "resp_0123456789abcdef01234567", model: MODEL, created: 1_700_000_000 };
  const bytes = { chat: 0, responses: 0 };
  const iterations = 2000;

  // Neither parser changes the body it reads.
  const parseChat = await timePerCall(() => chat!.parse(chatBody), iterations, rounds);
  const parseResponses = await timePerCall(() => parseResponsesRequest(responsesRequestBody, models), iterations, rounds);
  const chatRequest = chat!.parse(chatBody);
  const encodeChat = await timePerCall(async () => {
    const writer = chat!.stream(meta, chatRequest);
    let out = 0;
    for (const event of events) out += (await writer.event(event)).length;
    bytes.chat = out;
  }, iterations / 4, rounds);
  const responsesRequest = parseResponsesRequest(responsesRequestBody, models, meta.id);
  const state = responsesRequest.wireState as ConstructorParameters<typeof ResponsesStreamWriter>[1];
  state.owner = "key:bench";
  const encodeResponses = await timePerCall(async () => {
    // store: false, so the finish stores nothing: only the encoding is timed.
    const writer = new ResponsesStreamWriter(meta, state, async () => {});
    let out = 0;
    for (const event of events) out += (await writer.event(event)).length;
    bytes.responses = out;
  }, iterations / 4, rounds);

  const row = (name: string, parse: Awaited<ReturnType<typeof timePerCall>>, encode: Awaited<ReturnType<typeof timePerCall>>, streamBytes: number) => {
    const perToken = (parse.median + encode.median) / tokens;
    console.log(`| ${name} | ${parse.median.toFixed(1)} (${parse.spread.map((x) => x.toFixed(1)).join("-")}) | ${encode.median.toFixed(1)} (${encode.spread.map((x) => x.toFixed(1)).join("-")}) | ${perToken.toFixed(2)} | ${streamBytes} |`);
    return perToken;
  };
  console.log("");
  console.log(`| adapter | parse µs (spread) | encode ${tokens}-token stream µs (spread) | µs per output token | stream bytes |`);
  console.log("|---|---|---|---|---|");
  const chatPerToken = row("chat completions", parseChat, encodeChat, bytes.chat);
  const responsesPerToken = row("Responses", parseResponses, encodeResponses, bytes.responses);
  console.log("");
  const difference = responsesPerToken - chatPerToken;
  console.log(`Responses against chat completions on the HTTP thread: ${difference >= 0 ? "+" : ""}${difference.toFixed(2)} µs per output token `
    + `(${(responsesPerToken / chatPerToken).toFixed(2)}x), ${((100 * difference) / decodeStepUs).toFixed(3)}% of a ${decodeStepUs} µs decode step at N=1`);
  const stored = await storeCosts(meta, state, events);
  console.log(`store: true on PGlite (a fresh data dir, ${STORE_SAMPLES} responses one after another): save ${stored.save.median.toFixed(2)} ms median `
    + `(p90 ${stored.save.p90.toFixed(2)}), the read of previous_response_id ${stored.get.median.toFixed(2)} ms (p90 ${stored.get.p90.toFixed(2)}), `
    + `${stored.responseBytes} bytes of response and ${stored.itemBytes} of input items each`);
  console.log(JSON.stringify({ bench: "responses-adapter", command, tokens, rounds, decodeStepUs, parseChat, parseResponses, encodeChat, encodeResponses, bytes, chatPerToken, responsesPerToken, stored }));
}

/** Responses saved and read back per run of storeCosts. */
const STORE_SAMPLES = 200;

/**
 * What `store: true` adds: SqlResponseStore.save of this stream's response (as the endpoint saves it: the response
 * object and its input items) and the read a continuation makes, on PGlite in a temporary data dir, one at a time.
 */
async function storeCosts(meta: { id: string; model: string; created: number }, state: ConstructorParameters<typeof ResponsesStreamWriter>[1], events: InternalEvent[]) {
  let response: Record<string, unknown> | undefined;
  const writer = new ResponsesStreamWriter(meta, { ...state, store: true }, async (_state, saved) => { response = saved; });
  for (const event of events) await writer.event(event);
  const dataDir = mkdtempSync(join(tmpdir(), "loom-bench-store-"));
  const database = await openDatabase({ dataDir });
  try {
    const store = new SqlResponseStore(database);
    const inputItems = state.input as unknown as Record<string, unknown>[];
    const save: number[] = [];
    const get: number[] = [];
    for (let i = 0; i < STORE_SAMPLES; i++) {
      const id = `resp_${i.toString(16).padStart(24, "0")}`;
      let start = performance.now();
      await store.save({ id, owner: "key:bench", createdAt: new Date(), expiresAt: new Date(Date.now() + 3_600_000), response: { ...response!, id }, inputItems });
      save.push(performance.now() - start);
      start = performance.now();
      await store.get("key:bench", id);
      get.push(performance.now() - start);
    }
    const summary = (samples: number[]) => ({ median: median(samples), p90: percentile(samples, 0.9) });
    return { save: summary(save), get: summary(get), responseBytes: JSON.stringify(response).length, itemBytes: JSON.stringify(inputItems).length };
  } finally {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
