// The platform's Accountant: admission of a request against every limit that applies to its key and organization, in
// one all-or-nothing reservation (requests and tokens per minute, tokens per day, a hard daily allowance), then the
// prepaid credit hold; settlement corrects the reservations to what the request used and records its usage durably
// (group commit, usage-writer) before the response's last byte. Agent-run turns go through the same admission, and
// commit their usage with their step (settleWith).
import type { Accountant, Admission, AdmissionRequest } from "../http/accounting.js";
import { logFailure } from "../http/log.js";
import { type InternalUsage, ProtocolError, type WireFormat } from "../protocol/internal.js";
import { type BucketState, type LimitBucket, type LimitStore, LimitStoreUnavailableError, type Organization, type UsageIncrement } from "./contract.js";
import { utcDay } from "./limits/daily.js";
import type { KeyPrincipal } from "./keys/key-authenticator.js";
import { rateLimitHeaders } from "./limits/headers.js";
import { costDollars, priceOf, usageIncrementOf } from "./pricing.js";
import type { UsageRecord } from "./store/usage-writer.js";

/** What the accountant needs of the database. */
export interface AccountingStore {
  /** The organization (a cached read is fine: limits and prices may lag a change by a second). */
  organization(id: string): Promise<Organization | undefined>;
  /** Tokens (input + output) and dollars used on `day` by the organization, or by one of its keys. */
  consumed(organizationId: string, day: string, keyId?: string): Promise<{ tokens: number; spendDollars: number }>;
  /** Records usage; resolves once durable (group commit). Deletes the credit hold it names. */
  record(increment: UsageIncrement & { creditHoldId?: string }): Promise<void>;
  /** Holds `dollars` of a prepaid balance for `ttlMs`, or says the balance cannot cover it. */
  holdCredits(organizationId: string, dollars: number, ttlMs: number): Promise<string | "insufficient">;
  /** Drops a credit hold at once (an admission given back unused). */
  releaseCredits(holdId: string): Promise<void>;
}

/**
 * What a caller's commit did with a request's usage record: `committed` it in its own transaction; wrote nothing and
 * the request is to be billed all the same (`record`: it is recorded on its own); or wrote nothing and the request is
 * not to be billed (`release`: loom cut it and will run it again, so the whole admission is given back).
 */
export type UsageCommit = "committed" | "record" | "release";

/** A platform admission, with the two ends other writers of usage need beside settle(). */
export interface PlatformAdmission extends Admission {
  /**
   * settle(), but the usage record (with its credit hold, which goes with it) is committed by `commit`, in a
   * transaction of the caller's (an agent run's step and its tokens, counted once together); what `commit` resolves
   * says what became of it (UsageCommit). When `commit` throws (its transaction did not commit), the usage is recorded
   * on its own, as settle() does, since the engine computed it all the same, and the error is rethrown. Called
   * exactly once, instead of settle() or release().
   * @throws ProtocolError (bad_gateway) when the usage cannot be recorded; what `commit` throws.
   */
  settleWith(usage: InternalUsage, commit: (record: UsageRecord) => Promise<UsageCommit>): Promise<void>;
  /** Gives the whole admission back (its reservations and credit hold): the request never reached the engine. */
  release(): Promise<void>;
}

export interface AccountantOptions {
  /** Admit requests when the limit store cannot be reached (default false: refuse them, fail closed). */
  failOpen?: boolean;
  /**
   * How long a credit hold lasts if its request never settles (a crash), unless the request says it may run longer
   * (AdmitOptions.holdMs). Default 15 minutes.
   */
  creditHoldMs?: number;
  now?: () => number;
}

/** What admit() may be told beside the request. */
export interface AdmitOptions {
  /**
   * The longest the request may run, in ms, when that may be longer than the credit hold's default lifetime (an
   * agent-run turn: up to its run's remaining timeout). Its credit hold lives at least this long: a hold that ran out
   * before its request settled would free credit other requests could be admitted against, overshooting the balance.
   */
  holdMs?: number;
}

const MINUTE_MS = 60_000;
/** Credit-sized buckets count nano-dollars, the balance's precision. */
const NANO = 1e9;

/** One bucket with what it stands for, for refusals and headers. */
interface NamedBucket {
  bucket: LimitBucket;
  /** "requests" or "tokens" per minute (rate-limit headers), or "day" (daily caps). */
  measure: "requests" | "tokens" | "day";
  /** "the organization's tokens per minute (1000000)". */
  description: string;
  /** How the request's actual use maps onto this bucket's units, at settlement. */
  actual: (usage: InternalUsage) => number;
}

/**
 * The 502 of a read or write the database did not answer: `what` in loom's words for the client; the driver's error
 * (which names the database's host, port, user or data dir) goes to the log.
 */
function unanswered(what: string, error: unknown): ProtocolError {
  logFailure(what, error);
  return new ProtocolError("bad_gateway", `${what}: the platform database did not answer`);
}

/** Admits and settles requests for the platform. */
export class PlatformAccountant implements Accountant {
  private readonly now: () => number;

  constructor(private readonly store: AccountingStore, private readonly limits: LimitStore, private readonly options: AccountantOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  async admit(request: AdmissionRequest, options: AdmitOptions = {}): Promise<PlatformAdmission> {
    const principal = request.principal as KeyPrincipal;
    if (!principal.key) throw new ProtocolError("internal", "the platform accountant got a request without a platform key");
    const organization = await this.organizationOf(principal.organizationId);
    const key = principal.key;
    if (key.allowedModels && !key.allowedModels.includes(request.model)) {
      throw new ProtocolError("permission", `this API key may not use the model '${request.model}'; it may use: ${key.allowedModels.join(", ")}`, "model");
    }
    // Tokens are counted only where something is sized in them (a token limit, an allowance, a prepaid balance).
    const tokenLimits = [organization.limits, key.limits].some((limits) => limits.tokensPerMinute !== undefined || limits.tokensPerDay !== undefined);
    const needsTokens = tokenLimits || organization.billingMode === "prepaid" || (organization.dailyAllowance?.hardCap === true && !organization.plan.isUnlimitedComp);
    const inputTokens = needsTokens ? await request.inputTokens() : 0;
    const maxOutputTokens = needsTokens ? request.maxOutputTokens(inputTokens) : 0;
    const now = this.now();
    const day = utcDay(now);
    const price = priceOf(organization, request.model);
    const buckets = this.bucketsFor(organization, key.id, key.limits, day, inputTokens + maxOutputTokens, price && { price, inputTokens, maxOutputTokens });

    const tooBig = buckets.find(({ bucket }) => bucket.cost > bucket.limit);
    if (tooBig) {
      throw new ProtocolError("rate_limit", `this request alone needs ${tooBig.bucket.cost} of ${tooBig.description}: lower max_tokens or the prompt`, undefined, undefined, { limit: tooBig.description });
    }
    let states: BucketState[] = [];
    // The buckets reserved: none when the limit store is down and limits fail open.
    let reserved = buckets;
    try {
      const result = await this.limits.reserve(buckets.map((b) => b.bucket), now);
      states = result.buckets;
      if (!result.admitted) {
        const refused = buckets.find((b) => b.bucket.key === result.refusedBy);
        const error = new ProtocolError("rate_limit", `rate limit reached: ${refused?.description ?? result.refusedBy}; retry in ${Math.ceil(result.retryAfterMs / 1000)} s`, undefined, result.retryAfterMs / 1000);
        error.responseHeaders = this.headers(buckets, states, request.format);
        throw error;
      }
    } catch (error) {
      if (!(error instanceof LimitStoreUnavailableError)) throw error;
      // Its address and the driver's words are the operator's: the log has them, the client loom's own message.
      logFailure(`the rate-limit store cannot be reached (requests ${this.options.failOpen ? "admitted: --limits-fail-open" : "refused"})`, error);
      if (!this.options.failOpen) throw new ProtocolError("overloaded", "the rate-limit store cannot be reached; retry shortly", undefined, 1);
      // Only the limits are skipped: the balance is the database's, so a prepaid request still holds its credit.
      reserved = [];
    }
    const headers = this.headers(reserved, states, request.format);

    let creditHoldId: string | undefined;
    if (organization.billingMode === "prepaid") {
      if (!price) {
        await this.giveBack(reserved);
        throw new ProtocolError("permission", `the model '${request.model}' has no price for this prepaid organization: an operator must set one (loom admin org set --price)`, "model");
      }
      // A request that costs nothing (a model priced at $0) needs no hold: it cannot take the balance below zero.
      const dollars = costDollars(price, inputTokens, maxOutputTokens);
      const holdMs = Math.max(this.options.creditHoldMs ?? 15 * MINUTE_MS, Math.ceil(options.holdMs ?? 0));
      const hold = dollars === 0 ? undefined : await this.store.holdCredits(organization.id, dollars, holdMs).catch(async (error: unknown) => {
        await this.giveBack(reserved);
        throw unanswered("the credit balance could not be read", error);
      });
      if (hold === "insufficient") {
        await this.giveBack(reserved);
        const error = new ProtocolError("insufficient_quota", `Your credit balance is too low to run this request (up to ${inputTokens} input and ${maxOutputTokens} output tokens): add credits or lower max_tokens.`);
        error.responseHeaders = headers;
        throw error;
      }
      creditHoldId = hold;
    }
    return this.admission(request, principal, organization, reserved, headers, creditHoldId);
  }

  private admission(request: AdmissionRequest, principal: KeyPrincipal, organization: Organization, buckets: NamedBucket[], headers: Record<string, string>, creditHoldId: string | undefined): PlatformAdmission {
    const release = async () => {
      await this.giveBack(buckets);
      if (creditHoldId) await this.store.releaseCredits(creditHoldId).catch((error: unknown) => logFailure("a credit hold could not be dropped (it expires on its own)", error));
    };
    const recordAlone = (record: UsageRecord) => this.store.record(record).catch((error: unknown) => {
      throw unanswered("the request's usage could not be recorded", error);
    });
    const settleWith = async (usage: InternalUsage, commit: (record: UsageRecord) => Promise<UsageCommit>) => {
      const record: UsageRecord = { ...usageIncrementOf(principal, organization, request.model, usage, this.now()), ...(creditHoldId ? { creditHoldId } : {}) };
      let outcome: UsageCommit;
      try {
        outcome = await commit(record);
      } catch (error) {
        // The caller's transaction did not commit, but the engine computed the request: it is billed all the same.
        await recordAlone(record).catch(() => undefined);
        await this.correct(buckets, usage);
        throw error;
      }
      if (outcome === "release") return release();
      const correction = this.correct(buckets, usage);
      try {
        if (outcome === "record") await recordAlone(record);
      } finally {
        await correction;
      }
    };
    return {
      headers,
      ...(organization.pool === null ? {} : { pool: organization.pool }),
      settle: (usage) => settleWith(usage, async () => "record"),
      settleWith,
      release,
    };
  }

  private async organizationOf(id: string): Promise<Organization> {
    let organization: Organization | undefined;
    try {
      organization = await this.store.organization(id);
    } catch (error) {
      throw unanswered("the organization could not be read", error);
    }
    if (!organization) throw new ProtocolError("authentication", "invalid API key (its organization no longer exists)");
    return organization;
  }

  /** Every limit that applies: the key's and the organization's, per minute and per day, and a hard allowance. */
  private bucketsFor(organization: Organization, keyId: string, keyLimits: Organization["limits"], day: string, tokens: number, priced: { price: NonNullable<ReturnType<typeof priceOf>>; inputTokens: number; maxOutputTokens: number } | undefined): NamedBucket[] {
    const buckets: NamedBucket[] = [];
    const totalTokens = (usage: InternalUsage) => usage.promptTokens + usage.completionTokens;
    const levels = [
      { who: "organization", id: organization.id, limits: organization.limits, keyId: undefined },
      { who: "API key", id: keyId, limits: keyLimits, keyId },
    ];
    for (const level of levels) {
      const { requestsPerMinute, tokensPerMinute, tokensPerDay } = level.limits;
      const prefix = `${level.who === "organization" ? "org" : "key"}:${level.id}`;
      if (requestsPerMinute !== undefined) {
        buckets.push({ bucket: { kind: "window", key: `${prefix}:rpm`, limit: requestsPerMinute, windowMs: MINUTE_MS, cost: 1 }, measure: "requests", description: `the ${level.who}'s requests per minute (${requestsPerMinute})`, actual: () => 1 });
      }
      if (tokensPerMinute !== undefined) {
        buckets.push({ bucket: { kind: "window", key: `${prefix}:tpm`, limit: tokensPerMinute, windowMs: MINUTE_MS, cost: tokens }, measure: "tokens", description: `the ${level.who}'s tokens per minute (${tokensPerMinute})`, actual: totalTokens });
      }
      if (tokensPerDay !== undefined) {
        const seed = () => this.store.consumed(organization.id, day, level.keyId).then((used) => used.tokens);
        buckets.push({ bucket: { kind: "daily", key: `${prefix}:tpd:${day}`, limit: tokensPerDay, day, cost: tokens, seed }, measure: "day", description: `the ${level.who}'s tokens per day (${tokensPerDay}; resets at UTC midnight)`, actual: totalTokens });
      }
    }
    const allowance = organization.dailyAllowance;
    if (allowance?.hardCap && !organization.plan.isUnlimitedComp) {
      if (allowance.basis === "tokens") {
        const seed = () => this.store.consumed(organization.id, day).then((used) => used.tokens);
        buckets.push({ bucket: { kind: "daily", key: `org:${organization.id}:allowance:${day}`, limit: allowance.amount, day, cost: tokens, seed }, measure: "day", description: `the plan's daily allowance (${allowance.amount} tokens; resets at UTC midnight)`, actual: totalTokens });
      } else if (priced) {
        const seed = () => this.store.consumed(organization.id, day).then((used) => Math.round(used.spendDollars * NANO));
        const cost = Math.round(costDollars(priced.price, priced.inputTokens, priced.maxOutputTokens) * NANO);
        const actual = (usage: InternalUsage) => Math.round(costDollars(priced.price, usage.promptTokens, usage.completionTokens) * NANO);
        buckets.push({ bucket: { kind: "daily", key: `org:${organization.id}:allowance-credit:${day}`, limit: Math.round(allowance.amount * NANO), day, cost, seed }, measure: "day", description: `the plan's daily allowance ($${allowance.amount}; resets at UTC midnight)`, actual });
      }
    }
    return buckets;
  }

  /** The rate-limit headers: the tightest requests-per-minute and tokens-per-minute buckets. */
  private headers(buckets: NamedBucket[], states: BucketState[], format: WireFormat): Record<string, string> {
    const tightest = (measure: NamedBucket["measure"]) => {
      const keys = new Set(buckets.filter((b) => b.measure === measure).map((b) => b.bucket.key));
      return states.filter((state) => keys.has(state.key)).sort((a, b) => a.remaining - b.remaining)[0];
    };
    return rateLimitHeaders(tightest("requests"), tightest("tokens"), format);
  }

  /** Corrects the buckets' reservations to what the request used (never failing: a lost correction only lags). */
  private async correct(buckets: NamedBucket[], usage: InternalUsage): Promise<void> {
    const adjustments = buckets
      .map(({ bucket, actual }) => ({ bucket, delta: actual(usage) - bucket.cost }))
      .filter(({ delta }) => delta !== 0);
    if (adjustments.length > 0) await this.limits.adjust(adjustments, this.now()).catch(() => undefined);
  }

  private async giveBack(buckets: NamedBucket[]): Promise<void> {
    if (buckets.length === 0) return;
    await this.limits.adjust(buckets.map(({ bucket }) => ({ bucket, delta: -bucket.cost })), this.now()).catch(() => undefined);
  }
}
