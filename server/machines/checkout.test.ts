// Checkout on its own, with real parts: the payment gate and the official facilitator on a local EVM chain, the chain's
// state read over RPC, and the payments journal in PGlite. A payment buys its run once; a replay, a conflicting
// payment identifier and a refusal charge nothing; a retry of a paid request gets its run; the chain is asked before a
// transfer is sent, one settlement per payer at a time; a transfer that reverted is refused at once; a settlement with
// no outcome waits for the chain; and the reconciler finishes what is left from the chain's state (settled again, used,
// cancelled, expired, or unreadable), saying what it finished.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { toFunctionSelector } from "viem";
import type { PaymentRequirements } from "@x402/core/types";
import { PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { openTestPglite, type TestDatabase } from "../platform/testing/test-databases.js";
import type { RunSpec } from "../runs/contract.js";
import { RunStore } from "../runs/run-store.js";
import { ChainState } from "./chain-state.js";
import { Checkout, type CheckoutOptions } from "./checkout.js";
import { openFacilitator } from "./facilitator.js";
import { type CapturedRequest, type DecodedPayment, PaymentGate, type VerifiedPayment } from "./payment-gate.js";
import { PaymentStore } from "./payment-store.js";
import { type PaymentsSettings, resolvePaymentsConfig } from "./payments-config.js";
import { type ChainAccount, type LocalChain, startLocalChain } from "./testing/local-chain.js";
import { localChainPayments } from "./testing/local-payments.js";
import { type AuthorizationFields, cancelAuthorization, handSignedPayment, paymentHeader, submitAuthorization, transferTokens } from "./testing/paying-clients.js";

const SEARCH_PRICE = 100_000n;
const SPEC: RunSpec = { engine: "tim", content: ["What is loom?"], resources: [], skills: [], tools: [], timeoutSeconds: 60 };
const REQUEST: CapturedRequest = { headers: {}, url: "http://127.0.0.1:9/v1/machines/searches", body: { instructions: "What is loom?" } };

let chain: LocalChain;
let settings: PaymentsSettings;
let gate: PaymentGate;
/** A gate whose facilitator cannot be reached: every settlement's outcome is unknown. */
let silentGate: PaymentGate;
let requirements: PaymentRequirements;
let test: TestDatabase;
let payments: PaymentStore;
let runs: RunStore;
let created = 0;

beforeAll(async () => {
  chain = await startLocalChain({ payers: 4 });
  settings = resolvePaymentsConfig(localChainPayments(chain, { mode: "direct" }, 20));
  gate = new PaymentGate(settings, openFacilitator(settings.settlement, settings.network));
  await gate.initialize();
  silentGate = new PaymentGate(settings, new HTTPFacilitatorClient({ url: "http://127.0.0.1:9", timeoutMs: 2000 }));
  const challenge = await gate.challenge("search", REQUEST, "payment required");
  requirements = decodePaymentRequiredHeader(challenge.headers["PAYMENT-REQUIRED"]!).accepts[0]!;
  test = await openTestPglite();
  payments = new PaymentStore(test.database);
  runs = new RunStore(test.database);
}, 60_000);
afterAll(async () => {
  await test?.dispose();
  await chain?.close();
});
afterEach(() => {
  chain.setIntercept(undefined);
  vi.restoreAllMocks();
});

/** A checkout over `paymentGate` and `chainState` (default: the working ones), counting the runs it says it created. */
function checkoutWith(options: Partial<CheckoutOptions> & { paymentGate?: PaymentGate; chainState?: ChainState } = {}): Checkout {
  const { paymentGate = gate, chainState = new ChainState(chain.rpcUrl, chain.token), ...rest } = options;
  return new Checkout(paymentGate, payments, chainState, {
    network: settings.network.caip2, asset: settings.asset.address, settlementTimeoutMs: 20_000, duplicateWaitMs: 300,
    runCreated: () => {
      created += 1;
    },
    ...rest,
  });
}

/** A decoded search payment of `payer`, hand-signed with any field changed, and with a payment identifier if given. */
async function decodedPayment(payer: ChainAccount, change: Partial<AuthorizationFields> = {}, identifier?: string): Promise<DecodedPayment> {
  const payment = await handSignedPayment(chain, payer, requirements, change);
  const withId = identifier ? { ...payment, extensions: { [PAYMENT_IDENTIFIER]: { info: { id: identifier } } } } : payment;
  const result = await gate.decode("search", { ...REQUEST, headers: { "payment-signature": paymentHeader(withId) } });
  if (!("decoded" in result)) throw new Error(`the gate refused the test's payment: ${JSON.stringify(result.answer.body)}`);
  return result.decoded;
}

/** A decoded payment as the gate hands it on after verification (the facilitator is not asked here). */
function verifiedOf(decoded: DecodedPayment, endpoint: DecodedPayment["endpoint"] = "search"): VerifiedPayment {
  const { header: _, ...payment } = decoded;
  return { ...payment, endpoint, requirements: requirements as unknown as Record<string, unknown> };
}

/** The journal's row of the payment of `decoded`. */
async function rowOf(decoded: DecodedPayment) {
  const rows = await test.database.query<{ id: string }>("SELECT id FROM payments WHERE nonce = $1", [decoded.authorization.nonce]);
  const row = await payments.byRun((await test.database.query<{ run_id: string }>("SELECT run_id FROM payments WHERE id = $1", [rows[0]!.id]))[0]!.run_id);
  return row!;
}

/** Waits `ms` milliseconds (for a lease, an authorization's validity, or another request to run out). */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the payment's lease has run out and stayed out for 150 ms: the settler that left it settling keeps
 * renewing the lease while its attempt runs, which on a crowded machine outlasts any fixed pause.
 */
async function untilLeaseLapsed(decoded: DecodedPayment): Promise<void> {
  const deadline = Date.now() + 30_000;
  let lapsedSince: number | undefined;
  for (;;) {
    const [row] = await test.database.query<{ lapsed: boolean }>("SELECT lease_expires_at < now() AS lapsed FROM payments WHERE nonce = $1", [decoded.authorization.nonce]);
    if (row?.lapsed) {
      lapsedSince ??= Date.now();
      if (Date.now() - lapsedSince >= 150) return;
    } else {
      lapsedSince = undefined;
    }
    if (Date.now() > deadline) throw new Error("the payment's lease did not lapse within 30 s");
    await pause(25);
  }
}

/** Waits until the clock reaches the start of Unix second `second` (an authorization's validBefore: expired from then). */
const untilSecond = (second: bigint) => pause(Math.max(0, Number(second) * 1000 - Date.now()));

/** Runs `action` once, when the next JSON-RPC call of `method` reaches the chain, before it is answered. */
function onceBefore(method: string, action: () => Promise<unknown>): void {
  let done = false;
  chain.setIntercept(async (call, forward) => {
    if (!done && call.method === method) {
      done = true;
      await action();
    }
    return forward();
  });
}

/** Counts the transfers broadcast (eth_sendRawTransaction) from now on, holding the first one back `holdMs`. */
function countBroadcasts(holdMs = 0): { count: number } {
  const broadcasts = { count: 0 };
  chain.setIntercept(async (call, forward) => {
    if (call.method !== "eth_sendRawTransaction") return forward();
    broadcasts.count += 1;
    if (broadcasts.count === 1) await pause(holdMs);
    return forward();
  });
  return broadcasts;
}

describe("Checkout.buy", () => {
  it("settles a payment, creates its run of the endpoint's kind, and answers with the settlement header", async () => {
    const checkout = checkoutWith();
    const payer = chain.accounts.payers[0]!;
    const before = [created, await chain.balanceOf(payer.address)] as const;
    for (const [endpoint, kind] of [["search", "machine_search"], ["run", "machine_run"]] as const) {
      const decoded = await decodedPayment(payer);
      const purchase = await checkout.buy(verifiedOf(decoded, endpoint), SPEC);
      if (!("bought" in purchase)) throw new Error(JSON.stringify(purchase));
      const row = await rowOf(decoded);
      expect(row).toMatchObject({ status: "settled", runId: purchase.bought.runId, kind, payer: payer.address.toLowerCase(), amount: SEARCH_PRICE, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      expect(await runs.get(purchase.bought.runId)).toMatchObject({ id: purchase.bought.runId, kind, status: "queued", spec: SPEC });
      expect(decodePaymentResponseHeader(purchase.bought.headers["PAYMENT-RESPONSE"]!)).toMatchObject({ success: true, transaction: row.transaction, network: "eip155:8453", payer: payer.address });
    }
    expect(created).toBe(before[0] + 2);
    expect(await chain.balanceOf(payer.address)).toBe(before[1] - 2n * SEARCH_PRICE);
  });

  it("gives a retry of the same payment for the same request its run (no identifier: a client that lost its answer); refuses the authorization for another request", async () => {
    const checkout = checkoutWith();
    const payer = chain.accounts.payers[0]!;
    const decoded = await decodedPayment(payer);
    const bought = await checkout.buy(verifiedOf(decoded), SPEC);
    if (!("bought" in bought)) throw new Error(JSON.stringify(bought));
    const [createdBefore, balanceBefore] = [created, await chain.balanceOf(payer.address)];
    // The journal keeps the request as JSON whose keys it orders its own way: still the same request.
    expect(await checkout.previous(decoded, { ...SPEC })).toEqual(bought);
    // A field left undefined is not in the journal's JSON either: the same request.
    expect(await checkout.previous(decoded, { ...SPEC, callbackUrl: undefined })).toEqual(bought);
    expect(await checkout.buy(verifiedOf(decoded), SPEC)).toEqual(bought);
    expect(created).toBe(createdBefore + 3); // announced again each time (the worker may not have picked it up)
    const another = "payment already used: this authorization paid for another request; to get that run, retry with the same body and payment header";
    expect(await checkout.previous(decoded, { ...SPEC, content: ["Something else?"] })).toEqual({ refused: another });
    expect(await checkout.buy(verifiedOf(decoded), { ...SPEC, timeoutSeconds: 61 })).toEqual({ refused: another });
    // The same payment sent to the other endpoint is another request too.
    expect(await checkout.previous({ ...decoded, endpoint: "run" }, SPEC)).toEqual({ refused: another });
    // The same authorization in another payment header (here v1's shape): not a retry of the payment that was sent.
    const resent = { ...decoded, payload: { ...decoded.payload, x402Version: 1 }, digest: "0".repeat(64) };
    expect(await checkout.previous(resent, SPEC)).toEqual({ refused: "payment already used: this authorization (payer and nonce) was already submitted" });
    expect([created, await chain.balanceOf(payer.address)]).toEqual([createdBefore + 3, balanceBefore]);
  });

  it("looks up no earlier try of a payment the journal does not have, or whose earlier try failed (never charged)", async () => {
    const checkout = checkoutWith();
    const decoded = await decodedPayment(chain.accounts.broke);
    expect(await checkout.previous(decoded, SPEC)).toBeUndefined();
    expect(await checkout.buy(verifiedOf(decoded), SPEC)).toHaveProperty("refused");
    expect(await rowOf(decoded)).toMatchObject({ status: "failed" });
    expect(await checkout.previous(decoded, SPEC)).toBeUndefined();
  });

  it("refuses, not charged, a settlement that failed before anything was sent, and settles the same authorization once it can", async () => {
    const checkout = checkoutWith();
    // A payer without balance: the facilitator refuses to send (insufficient balance is final: nothing was sent).
    const decoded = await decodedPayment(chain.accounts.broke);
    const createdBefore = created;
    // The chain's balance is read first: nothing is sent (the facilitator is not even asked).
    const settle = vi.spyOn(gate, "settle");
    const purchase = await checkout.buy(verifiedOf(decoded), SPEC);
    expect(purchase).toEqual({ refused: "payer without balance: the payer holds less than the price (invalid_exact_evm_insufficient_balance)" });
    expect(settle).not.toHaveBeenCalled();
    expect(await rowOf(decoded)).toMatchObject({ status: "failed", error: (purchase as { refused: string }).refused });
    expect(created).toBe(createdBefore);
    // Funded now, the same authorization is tried again (a failed payment was never charged) and buys its run.
    await chain.mint(chain.accounts.broke.address, SEARCH_PRICE);
    const again = await checkout.buy(verifiedOf(decoded), SPEC);
    expect(again).toMatchObject({ bought: { runId: (await rowOf(decoded)).runId } });
    expect(await rowOf(decoded)).toMatchObject({ status: "settled" });
    expect(await chain.balanceOf(chain.accounts.broke.address)).toBe(0n);
  });

  it("sends nothing for an authorization the chain shows used (recorded as paid) or cancelled (refused, not charged)", async () => {
    const payer = chain.accounts.payers[1]!;
    const used = await decodedPayment(payer);
    const landed = await gate.settle(verifiedOf(used)); // sent before loom's settlement (its answer lost)
    if (landed.settled !== true) throw new Error(JSON.stringify(landed));
    const cancelled = await decodedPayment(payer);
    await cancelAuthorization(chain, payer, cancelled.authorization.nonce);
    const balanceBefore = await chain.balanceOf(payer.address);
    const settle = vi.spyOn(gate, "settle");
    expect(await checkoutWith().buy(verifiedOf(used), SPEC)).toMatchObject({ bought: { runId: (await rowOf(used)).runId } });
    expect(await rowOf(used)).toMatchObject({ status: "settled", transaction: landed.transaction.toLowerCase() });
    const refused = "the payer cancelled the authorization (not charged); found on chain before settling";
    expect(await checkoutWith().buy(verifiedOf(cancelled), SPEC)).toEqual({ refused });
    expect(await rowOf(cancelled)).toMatchObject({ status: "failed", error: refused });
    expect(settle).not.toHaveBeenCalled();
    expect(await chain.balanceOf(payer.address)).toBe(balanceBefore);
  });

  it("settles one payer's payments one at a time: of two it can afford one of, the second is refused before it is broadcast", async () => {
    const payer = chain.accounts.broke;
    await chain.mint(payer.address, SEARCH_PRICE); // exactly one price
    const [first, second] = [await decodedPayment(payer), await decodedPayment(payer)];
    // The first transfer is slow to reach the chain: the second would pass every check meanwhile if it did not wait.
    const broadcasts = countBroadcasts(500);
    const checkout = checkoutWith();
    const purchases = await Promise.all([checkout.buy(verifiedOf(first), SPEC), checkout.buy(verifiedOf(second), SPEC)]);
    expect(purchases.map((purchase) => Object.keys(purchase)[0]).sort()).toEqual(["bought", "refused"]);
    expect(purchases.find((purchase) => "refused" in purchase)).toEqual({ refused: "payer without balance: the payer holds less than the price (invalid_exact_evm_insufficient_balance)" });
    expect(broadcasts.count).toBe(1);
    expect(await chain.balanceOf(payer.address)).toBe(0n);
    // Other payers are not held up by it: their settlements run beside it.
    const [one, other] = [await decodedPayment(chain.accounts.payers[2]!), await decodedPayment(chain.accounts.payers[3]!)];
    // The first transfer is held 1.5 s; the other payer's is sent meanwhile, not after it.
    const sent = { count: 0, holding: false, sentWhileHolding: false };
    chain.setIntercept(async (call, forward) => {
      if (call.method !== "eth_sendRawTransaction") return forward();
      sent.count += 1;
      if (sent.count > 1) sent.sentWhileHolding = sent.holding;
      else {
        sent.holding = true;
        await pause(1500);
        sent.holding = false;
      }
      return forward();
    });
    const bought = await Promise.all([checkout.buy(verifiedOf(one), SPEC), checkout.buy(verifiedOf(other), SPEC)]);
    expect(bought.map((purchase) => Object.keys(purchase)[0])).toEqual(["bought", "bought"]);
    expect(sent).toEqual({ count: 2, holding: false, sentWhileHolding: true });
  });

  it("goes on with a payer's next settlement when the one before it failed on loom's side", async () => {
    const payer = chain.accounts.payers[2]!;
    const [first, second] = [await decodedPayment(payer), await decodedPayment(payer)];
    // The first one's record fails (the database went away after the transfer): it stays settling, for the reconciler.
    vi.spyOn(payments, "settle").mockRejectedValueOnce(new Error("the database is gone (test)"));
    const checkout = checkoutWith();
    const [one, two] = await Promise.allSettled([checkout.buy(verifiedOf(first), SPEC), checkout.buy(verifiedOf(second), SPEC)]);
    expect(one).toMatchObject({ status: "rejected", reason: { message: "the database is gone (test)" } });
    expect(two).toMatchObject({ status: "fulfilled", value: { bought: { runId: (await rowOf(second)).runId } } });
    expect(await rowOf(first)).toMatchObject({ status: "settling" });
    await payments.settle((await rowOf(first)).id, `0x${"ab".repeat(32)}`); // as the reconciler would (not this test's subject)
  });

  it("refuses at once, not charged, a transfer the chain mined and reverted (no 503 and no run promised)", async () => {
    const payer = chain.accounts.broke;
    await chain.mint(payer.address, SEARCH_PRICE);
    const decoded = await decodedPayment(payer);
    // Between loom's checks and the transfer's arrival, the payer spends its balance elsewhere: the transfer reverts.
    onceBefore("eth_sendRawTransaction", () => transferTokens(chain, payer, chain.accounts.deployer.address, SEARCH_PRICE));
    const createdBefore = created;
    const purchase = await checkoutWith().buy(verifiedOf(decoded), SPEC);
    const refused = "settlement failed: the transfer did not go through on chain (invalid_exact_evm_transaction_failed)";
    expect(purchase).toEqual({ refused });
    expect(await rowOf(decoded)).toMatchObject({ status: "failed", error: refused });
    expect(created).toBe(createdBefore);
  });

  it("settles without the chain's check when the chain does not answer it in time (a quarter of the settlement timeout)", async () => {
    const payer = chain.accounts.payers[0]!;
    const decoded = await decodedPayment(payer);
    // The payer's balance is never answered (the reads of the check go out together).
    const balanceOf = toFunctionSelector("balanceOf(address)");
    let answer!: () => void;
    const hung = new Promise<void>((resolve) => (answer = resolve));
    chain.setIntercept(async (call, forward) => {
      const data = (call.params as Array<{ data?: string }> | undefined)?.[0]?.data ?? "";
      if (call.method === "eth_call" && data.startsWith(balanceOf)) await hung;
      return forward();
    });
    const logged: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => logged.push(String(chunk)) > 0);
    const started = Date.now();
    try {
      const purchase = await checkoutWith({ settlementTimeoutMs: 2000 }).buy(verifiedOf(decoded), SPEC);
      expect(purchase).toMatchObject({ bought: { runId: (await rowOf(decoded)).runId } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(500);
      expect(logged.join("")).toContain(`loom: payments: the chain could not be read before settling payment ${(await rowOf(decoded)).id} (settled without that check): no answer within 500 ms`);
    } finally {
      answer();
    }
  });

  it("settles, with its run, a payment another process failed while this one's transfer was landing (the transfer's hash outranks it)", async () => {
    const payer = chain.accounts.payers[3]!;
    const decoded = await decodedPayment(payer);
    // While the transfer is being sent, someone else (a reconciler misled by a lagging endpoint) records it failed.
    onceBefore("eth_sendRawTransaction", async () => payments.fail((await rowOf(decoded)).id, "failed by another process (test)"));
    const [createdBefore, balanceBefore] = [created, await chain.balanceOf(payer.address)];
    const purchase = await checkoutWith().buy(verifiedOf(decoded), SPEC);
    const row = await rowOf(decoded);
    expect(purchase).toMatchObject({ bought: { runId: row.runId } });
    expect(row).toMatchObject({ status: "settled", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await runs.get(row.runId)).toMatchObject({ status: "queued" });
    expect([created, await chain.balanceOf(payer.address)]).toEqual([createdBefore + 1, balanceBefore - SEARCH_PRICE]);
  });

  it("refuses, not charged, a payment with no settlement outcome whose authorization has expired unused (from its validBefore second on)", async () => {
    const validBefore = BigInt(Math.floor(Date.now() / 1000)) + 2n;
    const decoded = await decodedPayment(chain.accounts.payers[1]!, { validBefore });
    await untilSecond(validBefore);
    const purchase = await checkoutWith({ paymentGate: silentGate }).buy(verifiedOf(decoded), SPEC);
    expect(purchase).toEqual({ refused: "the facilitator gave no outcome (no answer in time, or a network failure)" });
    expect(await rowOf(decoded)).toMatchObject({ status: "failed" });
  });

  it("keeps a payment whose settlement has no outcome as settling, and answers pending with the run it will have", async () => {
    const checkout = checkoutWith({ paymentGate: silentGate });
    const decoded = await decodedPayment(chain.accounts.payers[1]!);
    const createdBefore = created;
    const purchase = await checkout.buy(verifiedOf(decoded), SPEC);
    const row = await rowOf(decoded);
    expect(purchase).toEqual({ pending: expect.stringMatching(/^the settlement's outcome is not known yet \(the facilitator gave no outcome.*run run_[0-9a-f]{32} is created/), runId: row.runId });
    expect((purchase as { pending: string }).pending).toContain(row.runId);
    expect(row).toMatchObject({ status: "settling", error: "the facilitator gave no outcome (no answer in time, or a network failure)" });
    expect(await runs.get(row.runId)).toBeUndefined();
    expect(created).toBe(createdBefore);
  });

  it("waits when the chain cannot be read after a failed settlement: pending, never refused", async () => {
    const checkout = checkoutWith({ chainState: new ChainState("http://127.0.0.1:9", chain.token, 1000) });
    const decoded = await decodedPayment(chain.accounts.broke);
    const logged: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => logged.push(String(chunk)) > 0);
    const settle = vi.spyOn(gate, "settle");
    const purchase = await checkout.buy(verifiedOf(decoded), SPEC);
    expect(purchase).toMatchObject({ pending: expect.stringContaining("not known yet"), runId: (await rowOf(decoded)).runId });
    expect(await rowOf(decoded)).toMatchObject({ status: "settling" });
    // Unread before settling: the facilitator was asked all the same (its own checks refused), and the log says why.
    expect(settle).toHaveBeenCalledTimes(1);
    expect(logged.join("")).toContain(`loom: payments: the chain could not be read before settling payment ${(await rowOf(decoded)).id} (settled without that check): `);
  });
});

describe("Checkout.previous: retries under a payment identifier", () => {
  it("returns the run of the same payment, a conflict for another payment, and nothing without an identifier or a record", async () => {
    const checkout = checkoutWith();
    const payer = chain.accounts.payers[2]!;
    const id = `checkout_${Date.now()}_same`;
    const first = await decodedPayment(payer, {}, id);
    expect(await checkout.previous(first, SPEC)).toBeUndefined();
    const bought = await checkout.buy(verifiedOf(first), SPEC);
    if (!("bought" in bought)) throw new Error(JSON.stringify(bought));
    const createdBefore = created;
    // Settled already: answered at once, whatever the wait for a settling one would be.
    expect(await checkoutWith({ duplicateWaitMs: 60_000 }).previous(first, SPEC)).toEqual(bought);
    expect(created).toBe(createdBefore + 1); // the run is announced again (it may not have been picked up)
    expect(await checkout.previous(first, SPEC)).toEqual(bought);
    const other = await decodedPayment(payer, {}, id);
    expect(await checkout.previous(other, SPEC)).toEqual({ conflict: `payment-identifier ${id} was used with a different payment; use a new identifier for a new payment` });
    // The other payment submitted under the same identifier is refused as a conflict too, not charged.
    expect(await checkout.buy(verifiedOf(other), SPEC)).toEqual({ conflict: expect.stringContaining(`payment-identifier ${id} was used with a different payment`) });
    expect(await checkout.previous(await decodedPayment(payer), SPEC)).toBeUndefined();
    // The first authorization again, under an identifier of its own: a replay of a used authorization, not a retry.
    const { authorization } = first;
    const replayed = await decodedPayment(payer, { nonce: authorization.nonce, validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore) }, `${id}_other`);
    expect(await checkout.buy(verifiedOf(replayed), SPEC)).toEqual({ refused: "payment already used: this authorization (payer and nonce) was already submitted" });
  });

  it("waits a little for a payment still settling, then says to retry; reports a failed one as refused", async () => {
    const payer = chain.accounts.payers[3]!;
    const id = `checkout_${Date.now()}_wait`;
    const decoded = await decodedPayment(payer, {}, id);
    expect(await checkoutWith({ paymentGate: silentGate }).buy(verifiedOf(decoded), SPEC)).toHaveProperty("pending");
    const { runId } = await rowOf(decoded);
    expect(await checkoutWith({ duplicateWaitMs: 300 }).previous(decoded, SPEC)).toEqual({
      pending: `this payment is still being settled: if it is charged, run ${runId} is created (poll it, or retry the same request)`,
      runId,
      retryAfterSeconds: 1,
    });
    // Settled by someone else after the 300 ms this checkout waits: not seen. By default it waits up to 10 s: seen.
    const later = await decodedPayment(payer, {}, `${id}_later`);
    expect(await checkoutWith({ paymentGate: silentGate }).buy(verifiedOf(later), SPEC)).toHaveProperty("pending");
    const laterRow = await rowOf(later);
    setTimeout(() => void payments.settle(laterRow.id, `0x${"cd".repeat(32)}`), 1000);
    expect(await checkoutWith({ duplicateWaitMs: 300 }).previous(later, SPEC)).toMatchObject({ pending: expect.stringContaining("still being settled"), runId: laterRow.runId });
    expect(await checkoutWith({ duplicateWaitMs: undefined }).previous(later, SPEC)).toMatchObject({ bought: { runId: laterRow.runId } });
    // Failed meanwhile by someone else: the waiting retry reports what it came to.
    const row = await rowOf(decoded);
    const waiting = checkoutWith({ duplicateWaitMs: 5000 }).previous(decoded, SPEC);
    await pause(150);
    await payments.fail(row.id, "expired before it was settled (test)");
    expect(await waiting).toEqual({ refused: "expired before it was settled (test)" });
  });
});

describe("Checkout.reconcile", () => {
  /** A payment left settling by a settlement with no outcome, its lease already over (settlement timeout 50 ms). */
  async function leftSettling(payer: ChainAccount, change: Partial<AuthorizationFields> = {}): Promise<DecodedPayment> {
    const decoded = await decodedPayment(payer, change);
    // The chain's reads keep a bound of their own (a quarter of 50 ms would time them out here).
    expect(await checkoutWith({ paymentGate: silentGate, settlementTimeoutMs: 50, chainCheckMs: 5000 }).buy(verifiedOf(decoded), SPEC)).toHaveProperty("pending");
    await untilLeaseLapsed(decoded);
    return decoded;
  }

  it("leaves a payment alone until its lease (twice the settlement timeout) is over", async () => {
    const decoded = await decodedPayment(chain.accounts.payers[0]!);
    expect(await checkoutWith({ paymentGate: silentGate, settlementTimeoutMs: 1000 }).buy(verifiedOf(decoded), SPEC)).toHaveProperty("pending");
    const checkout = checkoutWith({ settlementTimeoutMs: 1000 });
    await pause(1300); // past one settlement timeout, within two
    expect(await checkout.reconcile()).toBe(0);
    expect(await rowOf(decoded)).toMatchObject({ status: "settling" });
    await pause(1000);
    expect(await checkout.reconcile()).toBe(1);
    expect(await rowOf(decoded)).toMatchObject({ status: "settled" });
  });

  it("settles again an authorization the chain has not seen and that is still valid, and creates the run", async () => {
    const payer = chain.accounts.payers[0]!;
    const decoded = await leftSettling(payer);
    const [createdBefore, balanceBefore] = [created, await chain.balanceOf(payer.address)];
    // What it finished goes to stderr by default.
    const logged: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => logged.push(String(chunk)) > 0);
    expect(await checkoutWith().reconcile()).toBe(1);
    vi.restoreAllMocks();
    const row = await rowOf(decoded);
    expect(row).toMatchObject({ status: "settled", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(logged).toContain(`loom: payments: reconciled payment ${row.id} (payer ${payer.address.toLowerCase()}, nonce ${decoded.authorization.nonce}): settled, run ${row.runId} created\n`);
    expect(await runs.get(row.runId)).toMatchObject({ status: "queued" });
    expect(created).toBe(createdBefore + 1);
    expect(await chain.balanceOf(payer.address)).toBe(balanceBefore - SEARCH_PRICE);
    expect(await checkoutWith().reconcile()).toBe(0);
  });

  it("records as settled, with its transaction, an authorization the chain shows used (the transfer landed)", async () => {
    const decoded = await leftSettling(chain.accounts.payers[1]!);
    // The transfer lands after all (the first settlement's answer was lost).
    const landed = await gate.settle(verifiedOf(decoded));
    if (landed.settled !== true) throw new Error(JSON.stringify(landed));
    expect(await checkoutWith().reconcile()).toBe(1);
    expect(await rowOf(decoded)).toMatchObject({ status: "settled", transaction: landed.transaction.toLowerCase() });
  });

  it("fails, not charged, an authorization its payer cancelled, or one that expired unused", async () => {
    const payer = chain.accounts.payers[2]!;
    const cancelled = await leftSettling(payer);
    await cancelAuthorization(chain, payer, cancelled.authorization.nonce);
    const validBefore = BigInt(Math.floor(Date.now() / 1000)) + 2n;
    const expiring = await leftSettling(payer, { validBefore });
    await untilSecond(validBefore);
    const [createdBefore, balanceBefore] = [created, await chain.balanceOf(payer.address)];
    const logged: string[] = [];
    expect(await checkoutWith({ log: (line) => logged.push(line) }).reconcile()).toBe(2);
    expect(await rowOf(cancelled)).toMatchObject({ status: "failed", error: "the payer cancelled the authorization (not charged); reconciled" });
    expect(await rowOf(expiring)).toMatchObject({ status: "failed", error: "authorization expired before it was settled (not charged)" });
    expect(logged.sort()).toEqual([
      `payments: reconciled payment ${(await rowOf(cancelled)).id} (payer ${payer.address.toLowerCase()}, nonce ${cancelled.authorization.nonce}): failed, not charged: the payer cancelled the authorization (not charged); reconciled`,
      `payments: reconciled payment ${(await rowOf(expiring)).id} (payer ${payer.address.toLowerCase()}, nonce ${expiring.authorization.nonce}): failed, not charged: authorization expired before it was settled (not charged)`,
    ].sort());
    expect([created, await chain.balanceOf(payer.address)]).toEqual([createdBefore, balanceBefore]);
  });

  it("keeps a payment settling while the chain cannot be read, and finishes it once it can", async () => {
    const decoded = await leftSettling(chain.accounts.payers[3]!);
    const blind = checkoutWith({ chainState: new ChainState("http://127.0.0.1:9", chain.token, 1000), settlementTimeoutMs: 50, chainCheckMs: 5000 });
    const logged: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => logged.push(String(chunk)) > 0);
    expect(await blind.reconcile()).toBe(0);
    const { id } = await rowOf(decoded);
    expect(await rowOf(decoded)).toMatchObject({ status: "settling" });
    // The operator is told why, in the log.
    expect(logged.join("")).toContain(`loom: payments: the chain could not be read for payment ${id} (it stays unfinished): `);
    vi.restoreAllMocks();
    await untilLeaseLapsed(decoded);
    expect(await checkoutWith().reconcile()).toBe(1);
    expect(await rowOf(decoded)).toMatchObject({ status: "settled" });
  });

  it("reports as bought a payment another process settled while this one found it expired", async () => {
    const validBefore = BigInt(Math.floor(Date.now() / 1000)) + 2n;
    const decoded = await leftSettling(chain.accounts.payers[0]!, { validBefore });
    await untilSecond(validBefore);
    const row = await rowOf(decoded);
    // While the chain is read, the request that settled it (its answer slow) records the settlement.
    onceBefore("eth_call", () => payments.settle(row.id, `0x${"ef".repeat(32)}`));
    const createdBefore = created;
    expect(await checkoutWith().reconcile()).toBe(1);
    expect(await rowOf(decoded)).toMatchObject({ status: "settled", transaction: `0x${"ef".repeat(32)}` });
    expect(created).toBe(createdBefore + 1);
  });

  it("takes at most `limit` payments a pass", async () => {
    const left = [await leftSettling(chain.accounts.payers[0]!), await leftSettling(chain.accounts.payers[1]!), await leftSettling(chain.accounts.payers[3]!)];
    const checkout = checkoutWith();
    expect(await checkout.reconcile(2)).toBe(2);
    expect(await checkout.reconcile(2)).toBe(1);
    for (const decoded of left) expect(await rowOf(decoded)).toMatchObject({ status: "settled" });
  });
});

describe("Checkout under a hostile review (issue 36 follow-up)", () => {
  const balanceOf = toFunctionSelector("balanceOf(address)");
  const authorizationState = toFunctionSelector("authorizationState(address,bytes32)");
  const dataOf = (call: { params?: unknown }) => (call.params as Array<{ data?: string }> | undefined)?.[0]?.data ?? "";
  /** A settlement that never answers (a library promise that never settles), for the next call of gate.settle. */
  const hangNextSettlement = () => vi.spyOn(gate, "settle").mockImplementationOnce(() => new Promise(() => {}));

  it("renews a queued payment's lease when its turn comes: a reconciler elsewhere does not take it while it settles", async () => {
    const payer = chain.accounts.payers[2]!;
    const [first, second] = [await decodedPayment(payer), await decodedPayment(payer)];
    // Lease 2 s, bound 1.5 s. The first transfer reaches the chain 1.4 s late; when the second's turn has come, another
    // process (after 750 ms more) takes whatever payments' leases ran out. The second's settlement then has 750 ms of
    // its bound left, for a loaded machine's slow chain.
    let broadcasts = 0;
    let taking: Promise<string[]> | undefined;
    chain.setIntercept(async (call, forward) => {
      if (call.method === "eth_sendRawTransaction" && ++broadcasts === 1) await pause(1400);
      else if (broadcasts === 1 && taking === undefined && call.method === "eth_call" && dataOf(call).startsWith(balanceOf)) {
        taking = pause(750).then(async () => (await payments.takeExpired(100, 2000)).map((row) => row.id));
        await taking;
      }
      return forward();
    });
    const checkout = checkoutWith({ settlementTimeoutMs: 1000 });
    const purchases = await Promise.all([checkout.buy(verifiedOf(first), SPEC), checkout.buy(verifiedOf(second), SPEC)]);
    // The other process's take is awaited here: the chain check that ran into it gave up after its own bound, and a
    // take still under way would lease later tests' payments.
    expect(await taking).not.toContain((await rowOf(second)).id);
    expect(purchases[1]).toMatchObject({ bought: { runId: (await rowOf(second)).runId } });
    for (let i = 0; i < 50 && (await rowOf(first)).status === "settling"; i++) await pause(100);
    expect(await rowOf(first)).toMatchObject({ status: "settled" }); // past its bound, it went on and was recorded
  });

  it("reads the authorization at the reverted receipt's block: a lagging endpoint's 'unused' does not fail a payment a concurrent settler charged", async () => {
    const payer = chain.accounts.payers[1]!;
    const decoded = await decodedPayment(payer);
    // A concurrent settler's transfer lands; loom's, sent after it, is mined and reverted (the nonce is used), and
    // the facilitator says so naming it.
    const submitted = await submitAuthorization(chain, chain.accounts.deployer, decoded);
    const balanceBefore = await chain.balanceOf(payer.address);
    const reverted = await submitAuthorization(chain, chain.accounts.relayer, decoded, 200_000n);
    const reason = "settlement failed: the transfer did not go through on chain (invalid_exact_evm_transaction_failed)";
    vi.spyOn(gate, "settle").mockResolvedValueOnce({ settled: false, code: "invalid_exact_evm_transaction_failed", reason, transaction: reverted });
    // An endpoint whose "latest" lags behind both: the nonce is still unused there.
    chain.setIntercept(async (call, forward) => {
      const block = (call.params as unknown[] | undefined)?.[1];
      if (call.method === "eth_call" && dataOf(call).startsWith(authorizationState) && block === "latest") return `0x${"0".repeat(64)}`;
      return forward();
    });
    const createdBefore = created;
    const purchase = await checkoutWith().buy(verifiedOf(decoded), SPEC);
    const row = await rowOf(decoded);
    expect(purchase).toMatchObject({ bought: { runId: row.runId } });
    expect(row).toMatchObject({ status: "settled", transaction: submitted.toLowerCase() });
    expect([created, await chain.balanceOf(payer.address)]).toEqual([createdBefore + 1, balanceBefore]); // charged once
  });

  it("never treats 'used' without an AuthorizationUsed event as paid: refused when loom never sent it, kept unfinished by the reconciler", async () => {
    const payer = chain.accounts.payers[0]!;
    // The payer cancels after verification, and the endpoint refuses log searches: the chain only says "used".
    const refuseLogs = () => chain.setIntercept(async (call, forward) => {
      if (call.method === "eth_getLogs") throw Object.assign(new Error("block range too large (test)"), { code: -32602 });
      return forward();
    });
    const decoded = await decodedPayment(payer);
    await cancelAuthorization(chain, payer, decoded.authorization.nonce);
    refuseLogs();
    const settle = vi.spyOn(gate, "settle");
    const createdBefore = created;
    const purchase = await checkoutWith().buy(verifiedOf(decoded), SPEC);
    expect(purchase).toEqual({ refused: expect.stringMatching(/^payment failed: the authorization was used or cancelled elsewhere, with no transfer to the payee found on chain \(not charged\); used on chain, but its events could not be read/) });
    expect(await rowOf(decoded)).toMatchObject({ status: "failed" });
    expect(settle).not.toHaveBeenCalled();
    expect(created).toBe(createdBefore);
    // A payment left settling (a settler may have sent it) whose authorization reads the same: not finished.
    chain.setIntercept(undefined);
    const left = await decodedPayment(payer);
    expect(await checkoutWith({ paymentGate: silentGate, settlementTimeoutMs: 50, chainCheckMs: 5000 }).buy(verifiedOf(left), SPEC)).toHaveProperty("pending");
    await cancelAuthorization(chain, payer, left.authorization.nonce);
    await pause(150);
    refuseLogs();
    await checkoutWith({ settlementTimeoutMs: 50, chainCheckMs: 5000 }).reconcile(1000);
    expect(await rowOf(left)).toMatchObject({ status: "settling" });
    expect(created).toBe(createdBefore);
    // Once the events can be read, the cancellation finishes it, not charged.
    chain.setIntercept(undefined);
    await pause(150);
    await checkoutWith({ settlementTimeoutMs: 50, chainCheckMs: 5000 }).reconcile(1000);
    expect(await rowOf(left)).toMatchObject({ status: "failed", error: "the payer cancelled the authorization (not charged); reconciled" });
  });

  it("bounds a settlement that never answers: pending with its run, the payer's next settlement goes on, and the reconciler is not held up", async () => {
    const payer = chain.accounts.payers[3]!;
    const stale = await decodedPayment(payer);
    expect(await checkoutWith({ paymentGate: silentGate, settlementTimeoutMs: 50, chainCheckMs: 5000 }).buy(verifiedOf(stale), SPEC)).toHaveProperty("pending");
    await pause(150); // its lease is over: the reconciler may take it
    const [hung, next] = [await decodedPayment(payer), await decodedPayment(payer)];
    hangNextSettlement();
    const checkout = checkoutWith({ settlementBoundMs: 1500 });
    const started = Date.now();
    const purchases = Promise.all([checkout.buy(verifiedOf(hung), SPEC), checkout.buy(verifiedOf(next), SPEC)]);
    await pause(300);
    // The payer's queue is live here: the reconciler leaves its payment for later instead of waiting behind it.
    await checkout.reconcile();
    expect(Date.now() - started).toBeLessThan(1500);
    expect(await rowOf(stale)).toMatchObject({ status: "settling" });
    const [one, two] = await purchases;
    const row = await rowOf(hung);
    expect(one).toEqual({ pending: expect.stringContaining("the settlement took longer than 1500 ms"), runId: row.runId });
    expect(row).toMatchObject({ status: "settling", error: "the settlement took longer than 1500 ms (it goes on; the payment is kept)" });
    expect(two).toMatchObject({ bought: { runId: (await rowOf(next)).runId } });
    await payments.fail(row.id, "never sent (test)"); // the hung settlement sent nothing
  });

  it("keeps renewing the lease of a settlement past its bound while it is under way, a bounded number of times", async () => {
    const decoded = await decodedPayment(chain.accounts.payers[0]!);
    hangNextSettlement();
    // Lease 1 s, bound 750 ms: renewed every 500 ms while the settlement hangs, at most 8 times (4 s). Each renewal
    // may come up to 500 ms late (a loaded machine) before the lease would run out between two of them.
    const purchase = await checkoutWith({ settlementTimeoutMs: 500, chainCheckMs: 5000 }).buy(verifiedOf(decoded), SPEC);
    const { id, runId } = await rowOf(decoded);
    expect(purchase).toMatchObject({ pending: expect.stringContaining("took longer than 750 ms"), runId });
    const takenBy = async () => (await payments.takeExpired(100, 1000)).map((row) => row.id);
    await pause(2250); // past the lease that the bound's extension alone gives (750 + 1000 ms)
    expect(await takenBy()).not.toContain(id);
    await pause(4500); // past the last renewal (about 4.75 s after the start) and its lease: the reconciler may take it
    expect(await takenBy()).toContain(id);
    await payments.fail(id, "never sent (test)");
  });

  it("takes a queued payment that another process finished while it waited as finished: settled is bought, failed is refused, nothing sent", async () => {
    const payer = chain.accounts.payers[1]!;
    const [hung, failedElsewhere, settledElsewhere] = [await decodedPayment(payer), await decodedPayment(payer), await decodedPayment(payer)];
    hangNextSettlement();
    const broadcasts = countBroadcasts();
    const checkout = checkoutWith({ settlementBoundMs: 600 });
    const purchases = Promise.all([hung, failedElsewhere, settledElsewhere].map((decoded) => checkout.buy(verifiedOf(decoded), SPEC)));
    await pause(200); // all three reserved; the second and third wait behind the hung one
    await payments.fail((await rowOf(failedElsewhere)).id, "refused by the facilitator (another process)");
    const settledRow = await payments.settle((await rowOf(settledElsewhere)).id, `0x${"ab".repeat(32)}`);
    const [first, second, third] = await purchases;
    expect(first).toHaveProperty("pending");
    expect(second).toEqual({ refused: "refused by the facilitator (another process)" });
    expect(third).toMatchObject({ bought: { runId: settledRow.runId } });
    expect(broadcasts.count).toBe(0);
    chain.setIntercept(undefined);
    await payments.fail((await rowOf(hung)).id, "never sent (test)");
  });

  /**
   * A purchase by `payer` whose settlement hangs past its bound (answered pending; lease 2 x `settlementTimeoutMs`,
   * late renewals every `settlementTimeoutMs`), with the journal's lease renewals counted from before it.
   */
  async function pendingPastBound(payer: ChainAccount, settlementTimeoutMs: number) {
    const decoded = await decodedPayment(payer);
    hangNextSettlement();
    const renewals = vi.spyOn(payments, "renew"); // restored after each test
    expect(await checkoutWith({ settlementTimeoutMs, chainCheckMs: 5000 }).buy(verifiedOf(decoded), SPEC)).toHaveProperty("pending");
    return { decoded, renewals: () => renewals.mock.calls.length };
  }

  it("renews a late settlement's lease exactly LATE_RENEWALS (8) times, then leaves it to expire", async () => {
    // Lease 200 ms, bound 150 ms: renewed every 100 ms; eight renewals take 0.8 s, however late each one comes.
    const { decoded, renewals } = await pendingPastBound(chain.accounts.payers[1]!, 100);
    const atBound = renewals(); // the renewal as its turn came
    for (let i = 0; i < 60 && renewals() < atBound + 8; i++) await pause(50);
    await pause(500); // time for a ninth, were there one
    expect(renewals() - atBound).toBe(8);
    await payments.fail((await rowOf(decoded)).id, "never sent (test)");
  });

  it("stops renewing a late settlement's lease once its row is finished elsewhere", async () => {
    // Lease 400 ms, bound 300 ms: renewed every 200 ms while the settlement hangs.
    const { decoded, renewals } = await pendingPastBound(chain.accounts.payers[3]!, 200);
    await payments.settle((await rowOf(decoded)).id, `0x${"cd".repeat(32)}`); // settled by another process
    // The next renewal finds it settled and stops the timer: none after it.
    const atSettle = renewals();
    for (let i = 0; i < 40 && renewals() === atSettle; i++) await pause(50);
    expect(renewals()).toBe(atSettle + 1);
    await pause(700);
    expect(renewals()).toBe(atSettle + 1);
  });

  it("caps the settlements one payer may have waiting: beyond it 503 Retry-After, nothing recorded or charged", async () => {
    const payer = chain.accounts.payers[2]!;
    const [one, two, three] = [await decodedPayment(payer), await decodedPayment(payer), await decodedPayment(payer)];
    hangNextSettlement();
    // The bound only has to outlast the second and the retried third settlement: 800 ms was too short on a loaded CI.
    const checkout = checkoutWith({ maxQueuedPerPayer: 2, settlementBoundMs: 2500 });
    const purchases = await Promise.all([one, two, three].map((decoded) => checkout.buy(verifiedOf(decoded), SPEC)));
    expect(purchases[2]).toEqual({
      pending: `too many payments of payer ${payer.address} are being settled at once (at most 2); this one was not recorded and nothing was charged: retry it later`,
      retryAfterSeconds: 5,
    });
    expect(await payments.byAuthorization({ network: settings.network.caip2, asset: settings.asset.address, payer: payer.address, nonce: three.authorization.nonce })).toBeUndefined();
    expect(purchases[0]).toHaveProperty("pending");
    expect(purchases[1]).toHaveProperty("bought");
    // The queue is free again: the same payment now goes through.
    expect(await checkout.buy(verifiedOf(three), SPEC)).toMatchObject({ bought: { runId: (await rowOf(three)).runId } });
    await payments.fail((await rowOf(one)).id, "never sent (test)");
  });

  it("settles, with its run, a failed payment whose public authorization someone submitted later (after a revert and a top-up)", async () => {
    const payer = chain.accounts.broke;
    await chain.mint(payer.address, SEARCH_PRICE);
    const decoded = await decodedPayment(payer);
    // loom's transfer reverts (the balance was spent meanwhile): 402, failed, not charged.
    onceBefore("eth_sendRawTransaction", () => transferTokens(chain, payer, chain.accounts.deployer.address, SEARCH_PRICE));
    expect(await checkoutWith().buy(verifiedOf(decoded), SPEC)).toHaveProperty("refused");
    expect(await rowOf(decoded)).toMatchObject({ status: "failed" });
    // The payer tops up; someone resubmits the authorization from the reverted transaction's calldata: charged.
    await chain.mint(payer.address, SEARCH_PRICE);
    const hash = await submitAuthorization(chain, chain.accounts.deployer, decoded);
    await pause(150);
    const logged: string[] = [];
    expect(await checkoutWith({ settlementTimeoutMs: 50, chainCheckMs: 5000, log: (line) => logged.push(line) }).reconcile(1000)).toBeGreaterThanOrEqual(1);
    const row = await rowOf(decoded);
    expect(row).toMatchObject({ status: "settled", transaction: hash.toLowerCase() });
    expect(await runs.get(row.runId)).toMatchObject({ status: "queued", spec: SPEC });
    expect(logged).toContain(`payments: reconciled payment ${row.id} (payer ${payer.address.toLowerCase()}, nonce ${decoded.authorization.nonce}): settled after it had failed (the authorization was used on chain in ${hash}), run ${row.runId} created`);
    // The client's retry of the request gets the run.
    expect(await checkoutWith().previous(decoded, SPEC)).toMatchObject({ bought: { runId: row.runId } });
  });

  it("leaves a failed payment failed when its authorization is still unused on chain", async () => {
    const decoded = await decodedPayment(chain.accounts.payers[2]!);
    hangNextSettlement();
    expect(await checkoutWith({ settlementTimeoutMs: 50, chainCheckMs: 5000 }).buy(verifiedOf(decoded), SPEC)).toHaveProperty("pending");
    await payments.fail((await rowOf(decoded)).id, "never sent (test)");
    await pause(150); // past the recheck's interval (the lease, 100 ms)
    const createdBefore = created;
    await checkoutWith({ settlementTimeoutMs: 50, chainCheckMs: 5000 }).reconcile(1000);
    expect(await rowOf(decoded)).toMatchObject({ status: "failed", error: "never sent (test)" });
    expect(created).toBe(createdBefore);
  });

  it("rechecks a failed payment of a payer with a settlement under way in this process only once that one is done", async () => {
    const payer = chain.accounts.payers[2]!;
    const [failedOne, busyOne] = [await decodedPayment(payer), await decodedPayment(payer)];
    hangNextSettlement();
    // Lease 2 s, bound 1.5 s (the defaults' proportions).
    const checkout = checkoutWith({ settlementTimeoutMs: 1000, chainCheckMs: 5000 });
    expect(await checkout.buy(verifiedOf(failedOne), SPEC)).toHaveProperty("pending");
    const { id } = await rowOf(failedOne);
    await payments.fail(id, "never sent (test)");
    // Someone submits the public authorization after all: charged, so the recheck would settle it.
    const hash = await submitAuthorization(chain, chain.accounts.deployer, failedOne);
    // Last looked at long ago: due for a recheck (instead of waiting out the recheck's interval, the lease).
    const dueForRecheck = () => test.database.query("UPDATE payments SET updated_at = now() - interval '1 hour' WHERE id = $1", [id]);
    await dueForRecheck();
    hangNextSettlement();
    const busy = checkout.buy(verifiedOf(busyOne), SPEC); // holds the payer's queue for its 1.5 s bound
    await pause(200);
    await checkout.reconcile(1000);
    expect(await rowOf(failedOne)).toMatchObject({ status: "failed" });
    expect(await busy).toHaveProperty("pending");
    await dueForRecheck();
    await checkout.reconcile(1000);
    expect(await rowOf(failedOne)).toMatchObject({ status: "settled", transaction: hash.toLowerCase() });
    await payments.fail((await rowOf(busyOne)).id, "never sent (test)");
  });
});

describe("ChainState: what checkout asks the chain", () => {
  it("reads a payer's balance, and says a transaction reverted only when its receipt says so", async () => {
    const state = new ChainState(chain.rpcUrl, chain.token);
    const payer = chain.accounts.payers[0]!;
    expect(await state.balance(payer.address)).toBe(await chain.balanceOf(payer.address));
    expect(await state.balance(chain.accounts.relayer.address)).toBe(0n);
    const settled = await gate.settle(verifiedOf(await decodedPayment(payer)));
    if (settled.settled !== true) throw new Error(JSON.stringify(settled));
    expect(await state.receipt(settled.transaction)).toEqual({ reverted: false, blockNumber: expect.any(BigInt) });
    // Not mined (no receipt), or an endpoint that cannot be read: no receipt.
    expect(await state.receipt(`0x${"ab".repeat(32)}`)).toBeUndefined();
    expect(await new ChainState("http://127.0.0.1:9", chain.token, 1000).receipt(settled.transaction)).toBeUndefined();
  });

  it("calls an authorization whose transfer did not pay this payment's payee its amount cancelled, not paid", async () => {
    const payer = chain.accounts.payers[1]!;
    const decoded = await decodedPayment(payer);
    const settled = await gate.settle(verifiedOf(decoded));
    if (settled.settled !== true) throw new Error(JSON.stringify(settled));
    const state = new ChainState(chain.rpcUrl, chain.token);
    const query = { payer: payer.address, nonce: decoded.authorization.nonce, payTo: decoded.authorization.to, amount: BigInt(decoded.authorization.value) };
    expect(await state.authorization(query)).toEqual({ state: "used", transaction: settled.transaction });
    // A journal row naming another payee, or another amount, for the same nonce: the transfer on chain is not its payment.
    const why = `the authorization's nonce was used by transaction ${settled.transaction}, which did not pay this payment's payee its amount`;
    expect(await state.authorization({ ...query, payTo: chain.accounts.deployer.address })).toEqual({ state: "canceled", why });
    expect(await state.authorization({ ...query, amount: query.amount + 1n })).toEqual({ state: "canceled", why });
  });

  it("takes only the payer's own cancellation of that nonce as one: a used authorization whose events cannot be found stays unproven", async () => {
    const [payer, other] = [chain.accounts.payers[0]!, chain.accounts.payers[3]!];
    const decoded = await decodedPayment(payer);
    const settled = await gate.settle(verifiedOf(decoded));
    if (settled.settled !== true) throw new Error(JSON.stringify(settled));
    // Another payer cancels an authorization of its own: an AuthorizationCanceled event in the same blocks.
    await cancelAuthorization(chain, other, (await decodedPayment(other)).authorization.nonce);
    const state = new ChainState(chain.rpcUrl, chain.token);
    // An endpoint that misses the AuthorizationUsed event (the first log search of each read).
    let searches = 0;
    chain.setIntercept(async (call, forward) => (call.method === "eth_getLogs" && ++searches === 1 ? [] : forward()));
    try {
      const query = { payer: payer.address, nonce: decoded.authorization.nonce, payTo: decoded.authorization.to, amount: BigInt(decoded.authorization.value) };
      expect(await state.authorization(query)).toMatchObject({ state: "unproven" });
      expect(searches).toBe(2); // the cancellation search ran, and found nothing of this payer's nonce
    } finally {
      chain.setIntercept(undefined);
    }
  });

  it("searches the events up to the block it is asked at when the endpoint's latest block lags behind it", async () => {
    const payer = chain.accounts.payers[0]!;
    const decoded = await decodedPayment(payer);
    const settled = await gate.settle(verifiedOf(decoded));
    if (settled.settled !== true) throw new Error(JSON.stringify(settled));
    const state = new ChainState(chain.rpcUrl, chain.token);
    const { blockNumber } = (await state.receipt(settled.transaction))!;
    // A lagging node behind a load balancer: its latest block is one before the receipt's, which it has all the same.
    chain.setIntercept(async (call, forward) => (call.method === "eth_blockNumber" ? `0x${(blockNumber - 1n).toString(16)}` : forward()));
    try {
      const query = { payer: payer.address, nonce: decoded.authorization.nonce, payTo: decoded.authorization.to, amount: BigInt(decoded.authorization.value), atBlock: blockNumber };
      expect(await state.authorization(query)).toEqual({ state: "used", transaction: settled.transaction });
    } finally {
      chain.setIntercept(undefined);
    }
  });
});
