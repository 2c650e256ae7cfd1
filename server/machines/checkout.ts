// Buying a run with a verified payment, in the order that makes a crash at any point harmless: record the
// authorization (a replay loses the insert), settle it, then record the settlement and create the run in one
// transaction. A payment whose outcome is unknown (a crash, a timeout) stays `settling` until the reconciler finishes
// it from the chain: used on chain means charged, so the run is created; unused and expired means never charged.
import { logFailure } from "../http/log.js";
import type { RunSpec } from "../runs/contract.js";
import type { AuthorizationState, ChainState } from "./chain-state.js";
import type { DecodedPayment, PaymentGate, SettlementOutcome, VerifiedPayment } from "./payment-gate.js";
import type { PaymentRecord, PaymentStore } from "./payment-store.js";
import { NEVER_SENT } from "./refusal-reasons.js";

/** What buying a run came to. */
export type Purchase =
  | { bought: { runId: string; headers: Record<string, string> } }
  /** Not charged: answered 402 with this error. */
  | { refused: string }
  /** A payment identifier reused with another payment, or still being settled: 409. */
  | { conflict: string; retryAfterSeconds?: number }
  /**
   * The outcome is not known yet (kept `settling`, finished by the reconciler): 503. The run, if the payment lands,
   * gets `runId`; a retry under the same payment identifier returns it too.
   */
  | { pending: string; runId?: string };

/** Settings of checkout. */
export interface CheckoutOptions {
  /** The configured network (CAIP-2) and asset address. */
  network: string;
  asset: string;
  /** How long one settlement may take; a settling payment is leased for twice that. */
  settlementTimeoutMs: number;
  /** How long a request for a payment someone else is settling waits for its outcome (default 10 s). */
  duplicateWaitMs?: number;
  /** Called when a paid run was created (wakes the run worker). */
  runCreated(): void;
}

/** Buys runs with verified payments, and finishes payments left unfinished. */
export class Checkout {
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
    const kind = payment.endpoint === "search" ? "machine_search" : "machine_run";
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
    if ("existing" in reservation) return this.replayOf(payment, reservation.existing);
    const record = reservation.reserved;
    const outcome = await this.gate.settle(payment);
    return this.afterSettle(record, outcome);
  }

  /** A settlement's outcome, checked against the chain unless it succeeded. */
  private async afterSettle(record: PaymentRecord, outcome: SettlementOutcome): Promise<Purchase> {
    if (outcome.settled === true) return this.bought(await this.payments.settle(record.id, outcome.transaction));
    if (outcome.settled === false) return this.fromChain(record, outcome.reason, !NEVER_SENT.has(outcome.code));
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
      if (!("pending" in outcome)) finished += 1;
    }
    return finished;
  }

  /** One unfinished payment: what the chain says, else settle it again. */
  private async finish(record: PaymentRecord): Promise<Purchase> {
    const state = await this.stateOf(record);
    // Stryker disable next-line StringLiteral: reconcile() counts a pending outcome and drops its words
    if (state === undefined) return { pending: `payment ${record.id}: the chain could not be read; it will be reconciled` };
    if (state.state !== "unused") return this.apply(record, state, "reconciled");
    if (record.validBefore <= Math.floor(Date.now() / 1000)) return this.refuse(record, "authorization expired before it was settled (not charged)");
    return this.afterSettle(record, await this.gate.settle({ x402Version: record.x402Version, payload: record.payload, requirements: record.requirements }));
  }

  /**
   * After a failed or unknown settlement the chain decides whether it was charged. An unused authorization is final
   * only when nothing was sent (`maySettleLater` false) or it has expired; otherwise a sent transfer may still land.
   */
  private async fromChain(record: PaymentRecord, why: string, maySettleLater: boolean): Promise<Purchase> {
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
  private async apply(record: PaymentRecord, state: Exclude<AuthorizationState, { state: "unused" }>, why: string): Promise<Purchase> {
    if (state.state === "canceled") return this.refuse(record, `the payer cancelled the authorization (not charged); ${why}`);
    return this.bought(await this.payments.settle(record.id, state.transaction));
  }

  private async refuse(record: PaymentRecord, why: string): Promise<Purchase> {
    const now = await this.payments.fail(record.id, why);
    // Someone else finished it first (a reconciler and a slow request): report what it came to.
    if (now.status === "settled") return this.bought(now);
    return { refused: why };
  }

  /** What an earlier payment under the same payment identifier came to; undefined when there was none. */
  async previous(payment: DecodedPayment): Promise<Purchase | undefined> {
    // Stryker disable next-line ConditionalExpression: byIdentifier(undefined) finds nothing either (NULL equals no row's identifier)
    if (payment.paymentIdentifier === undefined) return undefined;
    const existing = await this.payments.byIdentifier(payment.paymentIdentifier);
    return existing ? this.replayOf(payment, existing) : undefined;
  }

  /** A payment of an authorization or identifier already in the journal. */
  private async replayOf(payment: Pick<DecodedPayment, "paymentIdentifier" | "digest">, existing: PaymentRecord): Promise<Purchase> {
    const sameIdentifier = payment.paymentIdentifier !== undefined && existing.paymentIdentifier === payment.paymentIdentifier;
    if (!sameIdentifier) return { refused: "payment already used: this authorization (payer and nonce) was already submitted" };
    if (existing.payloadDigest !== payment.digest) {
      return { conflict: `payment-identifier ${payment.paymentIdentifier} was used with a different payment; use a new identifier for a new payment` };
    }
    const settled = await this.awaitOutcome(existing);
    if (settled.status === "settled") return this.bought(settled);
    if (settled.status === "failed") return { refused: settled.error ?? "the payment failed (not charged)" };
    return { conflict: `payment-identifier ${payment.paymentIdentifier} is still being settled; retry shortly`, retryAfterSeconds: 1 };
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

  private bought(record: PaymentRecord): Purchase {
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
