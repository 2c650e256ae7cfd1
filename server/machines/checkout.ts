// Buying a run with a verified payment, in the order that makes a crash at any point harmless: record the
// authorization (a replay loses the insert), settle it, then record the settlement and create the run in one
// transaction. A payment whose outcome is unknown (a crash, a timeout) stays `settling` until the reconciler finishes
// it from the chain: used on chain means charged, so the run is created; unused and expired means never charged.
// Before anything is sent the chain is asked whether the transfer can go through (the payer's balance, the
// authorization's state), one settlement per payer at a time, so that a doomed transfer costs no gas.
import { logFailure } from "../http/log.js";
import type { RunSpec } from "../runs/contract.js";
import type { AuthorizationState, ChainState } from "./chain-state.js";
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
  /** Called when a paid run was created (wakes the run worker). */
  runCreated(): void;
  /** Where each payment the reconciler finished is reported, one line each (default: stderr). */
  log?: (line: string) => void;
}

/** Buys runs with verified payments, and finishes payments left unfinished. */
export class Checkout {
  /** Per payer (lower case), the end of the settlements queued in this process. */
  private readonly settling = new Map<string, Promise<void>>();

  constructor(
    private readonly gate: PaymentGate,
    private readonly payments: PaymentStore,
    private readonly chain: ChainState,
    private readonly options: CheckoutOptions,
  ) {}

  /**
   * A settling payment's lease: twice the settlement timeout, so that the reconciler never takes a payment whose
   * request is still waiting on its settlement (both would then decide it).
   */
  private get leaseMs(): number {
    return 2 * this.options.settlementTimeoutMs;
  }

  /** Settles `payment` for a run of `spec` and creates the run, at most once per authorization. */
  async buy(payment: VerifiedPayment, spec: RunSpec): Promise<Purchase> {
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
    }, this.leaseMs);
    if ("existing" in reservation) return this.replayOf(payment, reservation.existing, spec);
    return this.settleChecked(reservation.reserved, payment);
  }

  /**
   * Settles a reserved payment, after the payer's other settlements in this process, unless the chain says first that
   * it cannot go through.
   */
  private settleChecked(record: PaymentRecord, payment: Pick<VerifiedPayment, "x402Version" | "payload" | "requirements" | "declaredExtensions">): Promise<Outcome> {
    return this.oneAtATime(record.payer, async () => (await this.doomed(record)) ?? this.afterSettle(record, await this.gate.settle(payment)));
  }

  /**
   * Runs `work` after the settlements of `payer` queued before it in this process: each then sees the balance the one
   * before left, so of two payments the payer can afford one of, the second is refused before it is broadcast.
   */
  private oneAtATime<T>(payer: string, work: () => Promise<T>): Promise<T> {
    const key = payer.toLowerCase();
    const mine = (this.settling.get(key) ?? Promise.resolve()).then(work);
    const end = mine.then(() => undefined, () => undefined);
    this.settling.set(key, end);
    void end.then(() => {
      // Keeps the map to payers with settlements under way. A payer's next settlement chains to the tail it finds, so
      // deleting another's tail here would let a later one start early: only the last one deletes.
      // Stryker disable next-line ConditionalExpression: telling needs a settlement arriving between two finishing, which no test can time
      if (this.settling.get(key) === end) this.settling.delete(key);
    });
    return mine;
  }

  /**
   * What the chain says before anything is sent: an authorization already used (or cancelled) is finished from that,
   * and a payer holding less than the amount is refused, not charged, with no transfer sent. Undefined: send it (also
   * when the chain cannot be read, which leaves the facilitator's own checks).
   */
  private async doomed(record: PaymentRecord): Promise<Outcome | undefined> {
    let state: AuthorizationState;
    let balance: bigint;
    const checkMs = this.options.chainCheckMs ?? Math.min(5000, this.options.settlementTimeoutMs / 4);
    try {
      // Bounded: an RPC client retries a dead endpoint for many times its timeout, and the payer is waiting.
      [state, balance] = await within(checkMs, Promise.all([this.chain.authorization(record.payer as `0x${string}`, record.nonce as `0x${string}`), this.chain.balance(record.payer as `0x${string}`)]));
    } catch (error) {
      logFailure(`payments: the chain could not be read before settling payment ${record.id} (settled without that check)`, error);
      return undefined;
    }
    if (state.state !== "unused") return this.apply(record, state, "found on chain before settling");
    if (balance < record.amount) return this.refuse(record, describeRefusal("invalid_exact_evm_insufficient_balance"));
    return undefined;
  }

  /** A settlement's outcome, checked against the chain unless it succeeded. */
  private async afterSettle(record: PaymentRecord, outcome: SettlementOutcome): Promise<Outcome> {
    if (outcome.settled === true) return this.bought(await this.payments.settle(record.id, outcome.transaction));
    if (outcome.settled === false) {
      // Final: nothing was sent, or the transfer sent was mined and reverted (the chain's receipt says so).
      const final = NEVER_SENT.has(outcome.code) || (outcome.transaction !== undefined && (await this.chain.reverted(outcome.transaction)));
      return this.fromChain(record, outcome.reason, !final);
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
      const outcome = await this.finish(record);
      if ("pending" in outcome) continue;
      finished += 1;
      const came = "bought" in outcome ? `settled, run ${outcome.bought.runId} created` : `failed, not charged: ${outcome.refused}`;
      this.log(`payments: reconciled payment ${record.id} (payer ${record.payer}, nonce ${record.nonce}): ${came}`);
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
    if (state.state !== "unused") return this.apply(record, state, "reconciled");
    if (record.validBefore <= Math.floor(Date.now() / 1000)) return this.refuse(record, "authorization expired before it was settled (not charged)");
    return this.settleChecked(record, { x402Version: record.x402Version, payload: record.payload, requirements: record.requirements });
  }

  /**
   * After a failed or unknown settlement the chain decides whether it was charged. An unused authorization is final
   * only when nothing was sent (`maySettleLater` false) or it has expired; otherwise a sent transfer may still land.
   */
  private async fromChain(record: PaymentRecord, why: string, maySettleLater: boolean): Promise<Outcome> {
    const state = await this.stateOf(record);
    if (state !== undefined && state.state !== "unused") return this.apply(record, state, why);
    const expired = record.validBefore <= Math.floor(Date.now() / 1000);
    if (state !== undefined && (!maySettleLater || expired)) return this.refuse(record, why);
    await this.payments.extend(record.id, this.leaseMs, why);
    return {
      pending: `the settlement's outcome is not known yet (${why}); the payment is kept and reconciled from the chain: if it is charged, run ${record.runId} is created (poll it), and a retry under the same payment-identifier returns it`,
      runId: record.runId,
    };
  }

  /** A used or cancelled authorization, as the chain reported it. */
  private async apply(record: PaymentRecord, state: Exclude<AuthorizationState, { state: "unused" }>, why: string): Promise<Outcome> {
    if (state.state === "canceled") return this.refuse(record, `the payer cancelled the authorization (not charged); ${why}`);
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

  private async stateOf(record: PaymentRecord): Promise<AuthorizationState | undefined> {
    try {
      return await this.chain.authorization(record.payer as `0x${string}`, record.nonce as `0x${string}`);
    } catch (error) {
      logFailure(`payments: the chain could not be read for payment ${record.id} (it stays unfinished)`, error);
      return undefined;
    }
  }
}

/** `promise`, or a rejection once `ms` have passed without it settling (it goes on, unheeded). */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined); // a rejection after the deadline is nobody's
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
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
