// Buying a run with a verified payment, in the order that makes a crash at any point harmless: record the
// authorization (a replay loses the insert), settle it, then record the settlement and create the run in one
// transaction. A payment whose outcome is unknown (a crash, a timeout) stays `settling` until the reconciler finishes
// it from the chain: used on chain means charged, so the run is created; unused and expired means never charged.
// Before anything is sent the chain is asked whether the transfer can go through (the payer's balance, the
// authorization's state), one settlement per payer at a time, so that a doomed transfer costs no gas. Each settlement
// is bounded in time, and a payer's queue in depth, so that no payer's backlog or hung call stalls anyone else.
import { logFailure } from "../http/log.js";
import { TimedOut, within } from "../time-limit.js";
import type { RunSpec } from "../runs/contract.js";
import type { AuthorizationState, ChainState } from "./chain-state.js";
import { PayerQueues, type QueuePlace } from "./payer-queue.js";
import type { DecodedPayment, PaymentGate, SettlementOutcome, VerifiedPayment } from "./payment-gate.js";
import type { PaymentRecord, PaymentStore } from "./payment-store.js";
import { describeRefusal, NEVER_SENT } from "./refusal-reasons.js";

/** What buying a run came to. */
export type Purchase =
  | { bought: { runId: string; headers: Record<string, string> } }
  /** Not charged: answered 402 with this error. */
  | { refused: string }
  /** A payment identifier reused with another payment: 409. */
  | { conflict: string }
  /**
   * The outcome is not known yet (kept `settling`, finished by the reconciler, or still being settled by another
   * request): 503 with Retry-After (`retryAfterSeconds`, default 5). The run, if the payment lands, gets `runId`; a
   * retry of the same payment returns it too.
   */
  | { pending: string; runId?: string; retryAfterSeconds?: number };

/** What settling or reconciling a payment of this request came to (never a conflict: that is a retry's). */
type Outcome = Exclude<Purchase, { conflict: string }>;

/** How many settlements one payer may have taken in a process at once (the one settling included). */
export const MAX_QUEUED_PER_PAYER = 8;

/**
 * How many times (every half lease) the lease of a settlement past its bound is renewed while it is still under way:
 * four leases, eight settlement timeouts, more than a direct-mode send that viem retries takes; a promise that never
 * settles does not keep its row from the reconciler forever.
 */
const LATE_RENEWALS = 8;

/** How long after it failed a payment's authorization is still looked at on chain (the events' lookback is ~5.5 h). */
const RECHECK_WINDOW_MS = 6 * 3600_000;

/** A replayed authorization that is not a retry of its payment. */
const ALREADY_USED = "payment already used: this authorization (payer and nonce) was already submitted";

/** Settings of checkout. */
export interface CheckoutOptions {
  /** The configured network (CAIP-2) and asset address. */
  network: string;
  asset: string;
  /** How long one settlement may take; a settling payment is leased for twice that. */
  settlementTimeoutMs: number;
  /** How long a request for a payment someone else is settling waits for its outcome (default 10 s). */
  duplicateWaitMs?: number;
  /**
   * How long the chain's check before a settlement may take (default: a quarter of the settlement timeout, at most
   * 5 s): past it the settlement goes ahead without it, as when the chain cannot be read.
   */
  chainCheckMs?: number;
  /**
   * How long one settlement (the chain's check, the transfer, and what the chain says after it) is waited for before
   * the payer's next one goes and the client is answered pending (default: 1.5 times the settlement timeout, within
   * the lease). The settlement goes on, unheeded; the reconciler finishes it if it does not.
   */
  settlementBoundMs?: number;
  /** How many settlements one payer may have taken at once in this process (default MAX_QUEUED_PER_PAYER). */
  maxQueuedPerPayer?: number;
  /** Called when a paid run was created (wakes the run worker). */
  runCreated(): void;
  /** Where each payment the reconciler finished is reported, one line each (default: stderr). */
  log?: (line: string) => void;
}

/** Buys runs with verified payments, and finishes payments left unfinished. */
export class Checkout {
  /** Per payer, the settlements taken in this process. */
  private readonly queues: PayerQueues;

  constructor(
    private readonly gate: PaymentGate,
    private readonly payments: PaymentStore,
    private readonly chain: ChainState,
    private readonly options: CheckoutOptions,
  ) {
    this.queues = new PayerQueues(options.maxQueuedPerPayer ?? MAX_QUEUED_PER_PAYER);
  }

  /**
   * A settling payment's lease: twice the settlement timeout, so that the reconciler never takes a payment whose
   * request is still waiting on its settlement (both would then decide it).
   */
  private get leaseMs(): number {
    return 2 * this.options.settlementTimeoutMs;
  }

  /** How long one settlement is waited for (less than the lease, which it renews as it starts). */
  private get boundMs(): number {
    return this.options.settlementBoundMs ?? 1.5 * this.options.settlementTimeoutMs;
  }

  /** How long the chain's check before a settlement may take. */
  private get checkMs(): number {
    return this.options.chainCheckMs ?? Math.min(5000, this.options.settlementTimeoutMs / 4);
  }

  /** Settles `payment` for a run of `spec` and creates the run, at most once per authorization. */
  async buy(payment: VerifiedPayment, spec: RunSpec): Promise<Purchase> {
    const kind = kindOf(payment.endpoint);
    const { authorization } = payment;
    const place = this.queues.enter(authorization.from);
    if (!place) {
      return {
        pending: `too many payments of payer ${authorization.from} are being settled at once (at most ${this.queues.maxDepth}); this one was not recorded and nothing was charged: retry it later`,
        retryAfterSeconds: 5,
      };
    }
    try {
      return await this.reserveAndSettle(place, payment, spec);
    } finally {
      place.leave();
    }
  }

  private async reserveAndSettle(place: QueuePlace, payment: VerifiedPayment, spec: RunSpec): Promise<Purchase> {
    const kind = kindOf(payment.endpoint);
    const { authorization } = payment;
    const reservation = await this.payments.reserve({
      kind,
      x402Version: payment.x402Version,
      // The gate checked both against the offer: the journal keys authorizations by the configured ones.
      network: this.options.network,
      asset: this.options.asset,
      payTo: authorization.to,
      payer: authorization.from,
      nonce: authorization.nonce,
      amount: authorization.value,
      validBefore: authorization.validBefore,
      ...(payment.paymentIdentifier ? { paymentIdentifier: payment.paymentIdentifier } : {}),
      payloadDigest: payment.digest,
      payload: payment.payload,
      requirements: payment.requirements,
      runRequest: spec,
      // Leased for the wait behind the payer's settlements ahead (each bounded) as well as its own.
    }, this.leaseMs + place.ahead * this.boundMs);
    if ("existing" in reservation) {
      place.leave(); // a retry waits for its payment's outcome without holding up the payer's queue
      return this.replayOf(payment, reservation.existing, spec);
    }
    return this.settleInTurn(place, reservation.reserved, payment, "new");
  }

  /**
   * Settles a reserved payment in its turn (after the payer's other settlements in this process: each then sees the
   * balance the one before left), unless the chain says first that it cannot go through. The lease is renewed as the
   * turn comes; past the bound the payer's next settlement goes and this one is answered pending (kept `settling`).
   * `origin`: "new" when this process never broadcast the row's authorization, "reconciled" when a settler may have.
   */
  private async settleInTurn(place: QueuePlace, record: PaymentRecord, payment: Pick<VerifiedPayment, "x402Version" | "payload" | "requirements" | "declaredExtensions">, origin: "new" | "reconciled"): Promise<Outcome> {
    await place.turn;
    const current = await this.payments.renew(record.id, this.leaseMs);
    if (current.status !== "settling") return current.status === "settled" ? this.bought(current) : { refused: current.error ?? "the payment failed (not charged)" };
    const work = (async () => (await this.doomed(record, origin)) ?? this.afterSettle(record, await this.gate.settle(payment)))();
    try {
      return await within(this.boundMs, work);
    } catch (error) {
      if (!(error instanceof TimedOut)) throw error;
      const why = `the settlement took longer than ${this.boundMs} ms (it goes on; the payment is kept)`;
      logFailure(`payments: payment ${record.id}: ${why}`, error);
      await this.payments.extend(record.id, this.leaseMs, why);
      this.keepLeased(record.id, work);
      return this.unknownYet(record, why);
    }
  }

  /**
   * Renews the lease of a settlement that went past its bound while it is still under way, at most LATE_RENEWALS
   * times, so that no reconciler settles the payment beside it (both would then decide it).
   */
  private keepLeased(id: string, work: Promise<unknown>): void {
    let renewals = 0;
    const timer = setInterval(() => {
      renewals += 1;
      if (renewals > LATE_RENEWALS) return clearInterval(timer);
      this.payments.renew(id, this.leaseMs).then((row) => {
        if (row.status !== "settling") clearInterval(timer);
      }, (error: unknown) => logFailure(`payments: the lease of payment ${id} could not be renewed`, error));
    }, this.leaseMs / 2);
    timer.unref();
    const stop = () => clearInterval(timer);
    work.then(stop, stop);
  }

  /**
   * What the chain says before anything is sent: an authorization already used (or cancelled) is finished from that,
   * and a payer holding less than the amount is refused, not charged, with no transfer sent. Undefined: send it (also
   * when the chain cannot be read, which leaves the facilitator's own checks).
   */
  private async doomed(record: PaymentRecord, origin: "new" | "reconciled"): Promise<Outcome | undefined> {
    let state: AuthorizationState;
    let balance: bigint;
    try {
      // Bounded: an RPC client retries a dead endpoint for many times its timeout, and the payer is waiting.
      [state, balance] = await within(this.checkMs, Promise.all([this.chain.authorization(queryOf(record)), this.chain.balance(record.payer as `0x${string}`)]));
    } catch (error) {
      logFailure(`payments: the chain could not be read before settling payment ${record.id} (settled without that check)`, error);
      return undefined;
    }
    if (state.state === "unproven" && origin === "new") {
      // Nothing of this process sent it: used or cancelled by someone else (the payer can cancel after verification).
      return this.refuse(record, `payment failed: the authorization was used or cancelled elsewhere, with no transfer to the payee found on chain (not charged); ${state.why}`);
    }
    if (state.state === "unproven") {
      // A settler before this one may have sent it, its event not found yet: neither paid nor refused.
      await this.payments.extend(record.id, this.leaseMs, state.why);
      return this.unknownYet(record, state.why);
    }
    if (state.state !== "unused") return this.apply(record, state, "found on chain before settling");
    if (balance < record.amount) return this.refuse(record, describeRefusal("invalid_exact_evm_insufficient_balance"));
    return undefined;
  }

  /** A settlement's outcome, checked against the chain unless it succeeded. */
  private async afterSettle(record: PaymentRecord, outcome: SettlementOutcome): Promise<Outcome> {
    if (outcome.settled === true) return this.bought(await this.payments.settle(record.id, outcome.transaction));
    if (outcome.settled === false) {
      // Final: nothing was sent, or the transfer sent was mined and reverted (the chain's receipt says so). The state
      // is then read at the receipt's block or later: a lagging endpoint must not say "unused" of a nonce that a
      // concurrent settler's transfer used (the very reason ours reverted).
      const receipt = outcome.transaction === undefined ? undefined : await this.chain.receipt(outcome.transaction);
      const final = NEVER_SENT.has(outcome.code) || receipt?.reverted === true;
      return this.fromChain(record, outcome.reason, !final, receipt?.blockNumber);
    }
    return this.fromChain(record, "the facilitator gave no outcome (no answer in time, or a network failure)", true);
  }

  /**
   * Finishes up to `limit` payments whose settler is gone (lease expired): from the chain's state, settling again
   * where the authorization is unused and still valid (the nonce makes a second submission harmless).
   * @returns how many were finished either way.
   */
  async reconcile(limit = 16): Promise<number> {
    const stale = await this.payments.takeExpired(limit, this.leaseMs);
    let finished = 0;
    for (const record of stale) {
      // A payer settling here now: its queue finishes its own payments (this one's lease runs out again meanwhile).
      if (this.queues.busy(record.payer)) continue;
      const outcome = await this.finish(record);
      if ("pending" in outcome) continue;
      finished += 1;
      const came = "bought" in outcome ? `settled, run ${outcome.bought.runId} created` : `failed, not charged: ${outcome.refused}`;
      this.log(`payments: reconciled payment ${record.id} (payer ${record.payer}, nonce ${record.nonce}): ${came}`);
    }
    return finished + (await this.recheckFailed(limit));
  }

  /**
   * Looks again at failed payments whose authorization is still valid (or barely expired): once broadcast, a signed
   * authorization is public and anyone may submit it, charging the payer. Found paid to the payee on chain, the payment
   * is settled and its run created (the run is what the payer paid for; a retry of the request returns it).
   */
  private async recheckFailed(limit: number): Promise<number> {
    const failed = await this.payments.takeFailedToRecheck(limit, this.leaseMs, RECHECK_WINDOW_MS, Math.ceil((2 * this.leaseMs) / 1000));
    let finished = 0;
    for (const record of failed) {
      if (this.queues.busy(record.payer)) continue;
      const state = await this.stateOf(record);
      if (state?.state !== "used") continue;
      const outcome = this.bought(await this.payments.settle(record.id, state.transaction));
      if (!("bought" in outcome)) continue;
      finished += 1;
      this.log(`payments: reconciled payment ${record.id} (payer ${record.payer}, nonce ${record.nonce}): settled after it had failed (the authorization was used on chain in ${state.transaction}), run ${outcome.bought.runId} created`);
    }
    return finished;
  }

  private log(line: string): void {
    if (this.options.log) this.options.log(line);
    else process.stderr.write(`loom: ${line}\n`);
  }

  /** One unfinished payment: what the chain says, else settle it again. */
  private async finish(record: PaymentRecord): Promise<Outcome> {
    const state = await this.stateOf(record);
    // Stryker disable next-line StringLiteral: reconcile() counts a pending outcome and drops its words
    if (state === undefined) return { pending: `payment ${record.id}: the chain could not be read; it will be reconciled` };
    // Used without proof of payment: a settler may have sent it (its event not found yet); looked at again later.
    // Stryker disable next-line StringLiteral: reconcile() counts a pending outcome and drops its words
    if (state.state === "unproven") return { pending: `payment ${record.id}: ${state.why}; it will be reconciled` };
    if (state.state !== "unused") return this.apply(record, state, "reconciled");
    if (record.validBefore <= Math.floor(Date.now() / 1000)) return this.refuse(record, "authorization expired before it was settled (not charged)");
    const place = this.queues.enter(record.payer);
    // Stryker disable next-line StringLiteral: reconcile() counts a pending outcome and drops its words
    if (!place) return { pending: `payment ${record.id}: its payer's queue is full; it will be reconciled` };
    try {
      return await this.settleInTurn(place, record, { x402Version: record.x402Version, payload: record.payload, requirements: record.requirements }, "reconciled");
    } finally {
      place.leave();
    }
  }

  /**
   * After a failed or unknown settlement the chain decides whether it was charged. An unused authorization is final
   * only when nothing was sent (`maySettleLater` false) or it has expired; otherwise a sent transfer may still land.
   */
  private async fromChain(record: PaymentRecord, why: string, maySettleLater: boolean, atBlock?: bigint): Promise<Outcome> {
    const state = await this.stateOf(record, atBlock);
    // Used without proof: this process may have sent it, so it is neither paid nor refused yet.
    if (state !== undefined && state.state !== "unused" && state.state !== "unproven") return this.apply(record, state, why);
    const expired = record.validBefore <= Math.floor(Date.now() / 1000);
    if (state?.state === "unused" && (!maySettleLater || expired)) return this.refuse(record, why);
    await this.payments.extend(record.id, this.leaseMs, why);
    return this.unknownYet(record, why);
  }

  /** The answer for a payment kept `settling` because its outcome is not known yet. */
  private unknownYet(record: PaymentRecord, why: string): Outcome {
    return {
      pending: `the settlement's outcome is not known yet (${why}); the payment is kept and reconciled from the chain: if it is charged, run ${record.runId} is created (poll it), and a retry under the same payment-identifier returns it`,
      runId: record.runId,
    };
  }

  /** A used or cancelled authorization, as the chain reported it. */
  private async apply(record: PaymentRecord, state: Extract<AuthorizationState, { state: "used" | "canceled" }>, why: string): Promise<Outcome> {
    if (state.state === "canceled") return this.refuse(record, `${state.why} (not charged); ${why}`);
    return this.bought(await this.payments.settle(record.id, state.transaction));
  }

  private async refuse(record: PaymentRecord, why: string): Promise<Outcome> {
    const now = await this.payments.fail(record.id, why);
    // Someone else finished it first (a reconciler and a slow request): report what it came to.
    if (now.status === "settled") return this.bought(now);
    return { refused: why };
  }

  /**
   * What an earlier try of this payment came to, found by its payment identifier or else by its authorization;
   * undefined when there was none, or when the authorization's earlier payment failed (never charged: it may be
   * settled again). Asked before the facilitator, which would now find the authorization used.
   */
  async previous(payment: DecodedPayment, spec: RunSpec): Promise<Purchase | undefined> {
    const byIdentifier = payment.paymentIdentifier === undefined ? undefined : await this.payments.byIdentifier(payment.paymentIdentifier);
    if (byIdentifier) return this.replayOf(payment, byIdentifier, spec);
    const { authorization } = payment;
    const existing = await this.payments.byAuthorization({ network: this.options.network, asset: this.options.asset, payer: authorization.from, nonce: authorization.nonce });
    return existing && existing.status !== "failed" ? this.replayOf(payment, existing, spec) : undefined;
  }

  /**
   * A payment of an authorization or identifier already in the journal. A retry (the same identifier with the same
   * payment, or without one the same payment for the same request: a client that lost its answer) gets the first
   * try's run; any other use of the authorization or identifier is refused.
   */
  private async replayOf(payment: Pick<DecodedPayment, "endpoint" | "paymentIdentifier" | "digest">, existing: PaymentRecord, spec: RunSpec): Promise<Purchase> {
    const samePayment = existing.payloadDigest === payment.digest;
    const sameIdentifier = payment.paymentIdentifier !== undefined && existing.paymentIdentifier === payment.paymentIdentifier;
    if (sameIdentifier && !samePayment) {
      return { conflict: `payment-identifier ${payment.paymentIdentifier} was used with a different payment; use a new identifier for a new payment` };
    }
    if (!samePayment) return { refused: ALREADY_USED };
    // The same payment (so the same identifier, or none): without an identifier, only the same request is its retry.
    if (!sameIdentifier && !sameRequest(existing, payment.endpoint, spec)) {
      return { refused: "payment already used: this authorization paid for another request; to get that run, retry with the same body and payment header" };
    }
    const settled = await this.awaitOutcome(existing);
    if (settled.status === "settled") return this.bought(settled);
    if (settled.status === "failed") return { refused: settled.error ?? "the payment failed (not charged)" };
    return {
      pending: `this payment is still being settled: if it is charged, run ${existing.runId} is created (poll it, or retry the same request)`,
      runId: existing.runId,
      retryAfterSeconds: 1,
    };
  }

  /** Waits a little for a payment another request is settling. */
  private async awaitOutcome(record: PaymentRecord): Promise<PaymentRecord> {
    const deadline = Date.now() + (this.options.duplicateWaitMs ?? 10_000);
    let current = record;
    // Stryker disable next-line EqualityOperator: one millisecond more or less of waiting
    while (current.status === "settling" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = (await this.payments.byRun(record.runId)) ?? current;
    }
    return current;
  }

  private bought(record: PaymentRecord): Outcome {
    if (record.status !== "settled") return { refused: record.error ?? "the payment failed (not charged)" };
    this.options.runCreated();
    return { bought: { runId: record.runId, headers: this.gate.settlementHeaders(record.x402Version, record.transaction, record.payer) } };
  }

  /** The authorization's state (at `atBlock` or later, if given), or undefined when the chain does not say in time. */
  private async stateOf(record: PaymentRecord, atBlock?: bigint): Promise<AuthorizationState | undefined> {
    try {
      // Bounded: a hung read must not hold up the payer's queue or the reconciler's pass.
      return await within(Math.max(this.checkMs, this.options.settlementTimeoutMs / 4), this.chain.authorization({ ...queryOf(record), ...(atBlock === undefined ? {} : { atBlock }) }));
    } catch (error) {
      logFailure(`payments: the chain could not be read for payment ${record.id} (it stays unfinished)`, error);
      return undefined;
    }
  }
}


/** What the chain is asked about a payment's authorization. */
function queryOf(record: PaymentRecord) {
  return { payer: record.payer as `0x${string}`, nonce: record.nonce as `0x${string}`, payTo: record.payTo, amount: record.amount };
}

function kindOf(endpoint: DecodedPayment["endpoint"]): PaymentRecord["kind"] {
  return endpoint === "search" ? "machine_search" : "machine_run";
}

/** Whether a journaled payment bought `spec` on `endpoint` (the journal's JSON may order keys otherwise). */
function sameRequest(record: PaymentRecord, endpoint: DecodedPayment["endpoint"], spec: RunSpec): boolean {
  return record.kind === kindOf(endpoint) && canonicalJson(record.runRequest) === canonicalJson(JSON.parse(JSON.stringify(spec)));
}

/** JSON with object keys sorted: equal for equal values whatever order their keys were stored in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
