// The platform's pieces on the request path, for bench/platform-overhead.ts: timers around its Authenticator and
// Accountant (what each request spends in authentication, waiting for its prompt's count, the limit reserve and the
// usage commit, measured inside the server), and microbenchmarks of each piece alone on an idle server.
import type { WorkerEngine } from "../engine/host/worker-engine.js";
import { createEndpoints } from "../server/adapters/endpoints.js";
import type { Accountant, Admission, AdmissionRequest } from "../server/http/accounting.js";
import type { Authenticator, Credentials, Principal } from "../server/http/auth.js";
import { ModelRegistry, defaultSlugs } from "../server/models.js";
import { PlatformAccountant } from "../server/platform/accountant.js";
import type { Organization, UsageIncrement } from "../server/platform/contract.js";
import { utcDay } from "../server/platform/limits/daily.js";
import type { KeyPrincipal } from "../server/platform/keys/key-authenticator.js";
import { digestKey as keyDigest } from "../server/platform/store/key-secret.js";
import { MemoryLimitStore } from "../server/platform/limits/memory-store.js";
import type { Platform } from "../server/platform/platform.js";
import { UsageWriter } from "../server/platform/store/usage-writer.js";
import type { ProtocolError, WireFormat } from "../server/protocol/internal.js";
import { toEngineRequest } from "../server/protocol/run.js";
import { median, percentile } from "./bench-models.js";

/** Server-side durations of the platform's pieces, in milliseconds, one entry per call. */
export interface Spans {
  /** authenticate() answered from the key cache (synchronously). */
  authenticationCached: number[];
  /** authenticate() that read the key from the database (its cached record had expired: once a second per key). */
  authenticationRead: number[];
  /** The prompt's token count for admission: the wait for the prompt thread to prepare it (else counted here). */
  countTokens: number[];
  /** admit() less its countTokens: the organization (cached), the limit buckets and their reserve, the headers. */
  admitRest: number[];
  /** settle(): the usage commit (durable before the response is sent) and the limit correction beside it. */
  settle: number[];
}

export function emptySpans(): Spans {
  return { authenticationCached: [], authenticationRead: [], countTokens: [], admitRest: [], settle: [] };
}

/** The platform's Authenticator, timed: a cache hit answers synchronously, a miss with a promise (a database read). */
export class TimedAuthenticator implements Authenticator {
  constructor(private readonly inner: Authenticator, private readonly spans: () => Spans) {}

  authenticate(credentials: Credentials, format: WireFormat): Principal | ProtocolError | Promise<Principal | ProtocolError> {
    const start = performance.now();
    const answer = this.inner.authenticate(credentials, format);
    if (!(answer instanceof Promise)) {
      this.spans().authenticationCached.push(performance.now() - start);
      return answer;
    }
    return answer.finally(() => this.spans().authenticationRead.push(performance.now() - start));
  }
}

/** The platform's Accountant, timed: admit (its countTokens apart) and settle. */
export class TimedAccountant implements Accountant {
  constructor(private readonly inner: Accountant, private readonly spans: () => Spans) {}

  async admit(request: AdmissionRequest): Promise<Admission> {
    let countTokens = 0;
    const timed: AdmissionRequest = {
      ...request,
      inputTokens: async () => {
        const start = performance.now();
        try {
          return await request.inputTokens();
        } finally {
          const elapsed = performance.now() - start;
          countTokens += elapsed;
          this.spans().countTokens.push(elapsed);
        }
      },
    };
    const start = performance.now();
    const admission = await this.inner.admit(timed);
    this.spans().admitRest.push(performance.now() - start - countTokens);
    return {
      headers: admission.headers,
      settle: async (usage) => {
        const settleStart = performance.now();
        try {
          await admission.settle(usage);
        } finally {
          this.spans().settle.push(performance.now() - settleStart);
        }
      },
    };
  }
}

/** One piece timed alone. */
export interface PieceTiming {
  piece: string;
  where: string;
  median: number;
  p99: number;
  /** How often a request pays it. */
  paid: string;
}

/**
 * Median and p99 of `iterations` sequential calls of `work`, in milliseconds, after `warmup` untimed calls; `gapMs`
 * apart when given (then each call starts with cold caches, as a request's pieces do between its engine work).
 */
async function timeEach(iterations: number, work: () => unknown, warmup = Math.min(50, iterations), gapMs = 0): Promise<{ median: number; p99: number }> {
  for (let i = 0; i < warmup; i++) await work();
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return { median: median(times), p99: percentile(times, 0.99) };
}

/** The gap between calls of the "spaced" pieces: about one request's engine time at N=1. */
const SPACED_MS = 80;

/**
 * The platform's pieces one at a time, the engine thread and the database idle: authentication (cached, and the reads
 * behind an expired cache entry), the prompt prepared ahead on the prompt thread and the same tokenization here,
 * admission and settlement without database or engine, database round trips and commits, and the usage commit alone
 * and in a group.
 * `key`: an inference key of `platform`; `countBody`: a chat completions body; `tokenizeHere`: the same prompt's
 * tokenization on this thread.
 */
export async function isolatedPieces(platform: Platform, key: string, engine: WorkerEngine, countBody: string, tokenizeHere: () => number): Promise<PieceTiming[]> {
  const database = platform.database.kind === "pglite" ? "PGlite, on the HTTP thread" : "PostgreSQL round trips";
  const credentials = { authorization: `Bearer ${key}` };
  const principal = (await platform.authenticator.authenticate(credentials, "openai")) as KeyPrincipal;
  const organization = (await platform.stores.organizations.get(principal.organizationId)) as Organization;
  const model = defaultSlugs(engine.model).openai[0];
  const [chat] = createEndpoints(new ModelRegistry([{ model: engine.model, engine, slugs: defaultSlugs(engine.model), created: 0 }]));
  const countRequest = toEngineRequest("count", chat.parse(JSON.parse(countBody)));
  // The accountant over a memory limit store (as the bench's platforms have) with the organization in memory and a
  // record that does nothing: what admission and settlement cost beside the database and the engine.
  const noDatabase = new PlatformAccountant({
    organization: async () => organization,
    consumed: async () => ({ tokens: 0, spendDollars: 0 }),
    record: async () => undefined,
    holdCredits: async () => "insufficient",
    releaseCredits: async () => undefined,
  }, new MemoryLimitStore());
  const admission: AdmissionRequest = { principal, format: "openai", model, inputTokens: async () => 58, maxOutputTokens: () => 4 };
  const usage = { promptTokens: 58, cachedTokens: 48, completionTokens: 4 };
  const increment = (): UsageIncrement => ({
    organizationId: principal.organizationId, keyId: principal.keyId, model, day: utcDay(Date.now()), requests: 1, inputTokens: 58, cachedInputTokens: 48, outputTokens: 4, spendDollars: 0,
  });
  const writer = new UsageWriter(platform.database);
  const pieces: PieceTiming[] = [];
  const add = async (piece: string, where: string, paid: string, iterations: number, work: () => unknown, gapMs = 0) => {
    pieces.push({ piece, where, paid, ...(await timeEach(iterations, work, Math.min(50, iterations), gapMs)) });
  };
  try {
    await add("authentication, key cached (SHA-256 of the key, a map lookup)", "HTTP thread", "every request", 2000, () => platform.authenticator.authenticate(credentials, "openai"));
    await add("key read by digest (its cached record expired)", database, "once a second per key", 200, () => platform.stores.keys.findByDigest(keyDigest(key)));
    await add("organization read (its cached record expired)", database, "once a second per organization", 200, () => platform.stores.organizations.get(principal.organizationId));
    await add("the prompt prepared ahead (prepareAhead: admission's count, which submit then reuses)", "prompt thread, 2 messages", "requests with a token limit", 300, () => engine.prepareAhead(countRequest));
    await add(`the prompt prepared ahead, calls ${SPACED_MS} ms apart`, "prompt thread, 2 messages", "requests with a token limit", 40, () => engine.prepareAhead(countRequest), SPACED_MS);
    await add("the same prompt tokenized on this thread", "HTTP thread", "(admission's count before prepareAhead)", 300, tokenizeHere);
    await add(`the same tokenization, calls ${SPACED_MS} ms apart`, "HTTP thread", "", 40, tokenizeHere, SPACED_MS);
    await add("admit without database and engine (organization cached, 3 buckets reserved in memory, headers)", "HTTP thread", "every request", 2000, () => noDatabase.admit(admission));
    await add("admit + settle without database (the limit correction included)", "HTTP thread", "every request", 2000, async () => (await noDatabase.admit(admission)).settle(usage));
    await add("one round trip (SELECT 1)", database, "-", 300, () => platform.database.query("SELECT 1"));
    for (const commit of ["on", "off"]) {
      await add(`a one-row UPDATE transaction, synchronous_commit ${commit}`, database, "-", 200, () => platform.database.transaction(async (tx) => {
        await tx.query(`SET LOCAL synchronous_commit = ${commit}`);
        await tx.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [principal.keyId]);
      }));
    }
    await add("usage commit of one request alone (one group-commit transaction)", database, "every request (shared when concurrent)", 300, () => writer.record(increment()));
    await add(`usage commit of one request alone, calls ${SPACED_MS} ms apart`, database, "every request (shared when concurrent)", 40, () => writer.record(increment()), SPACED_MS);
    const group = await timeEach(30, () => Promise.all(Array.from({ length: 16 }, () => writer.record(increment()))), 5);
    pieces.push({ piece: "usage commit of 16 requests at once (one or two transactions)", where: database, paid: "per 16 requests", ...group });
  } finally {
    await writer.close();
  }
  return pieces;
}
