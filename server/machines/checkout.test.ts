// Checkout on its own, with real parts: the payment gate and the official facilitator on a local EVM chain, the chain's
// state read over RPC, and the payments journal in PGlite. A payment buys its run once; a replay, a conflicting
// payment identifier and a refusal charge nothing; a settlement with no outcome waits for the chain; and the reconciler
// finishes what is left from the chain's state: settled again, used, cancelled, expired, or unreadable.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { createWalletClient, http, parseSignature, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
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
import { type ChainAccount, type LocalChain, TOKEN_NAME, TOKEN_VERSION, startLocalChain } from "./testing/local-chain.js";
import { localChainPayments } from "./testing/local-payments.js";
import { type AuthorizationFields, handSignedPayment, paymentHeader } from "./testing/paying-clients.js";

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

/** The payer cancels an authorization on the token (EIP-3009 cancelAuthorization), sent by the relayer. */
async function cancelOnChain(payer: ChainAccount, nonce: Hex): Promise<void> {
  const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
    domain: { name: TOKEN_NAME, version: TOKEN_VERSION, chainId: chain.chainId, verifyingContract: chain.token },
    types: { CancelAuthorization: [{ name: "authorizer", type: "address" }, { name: "nonce", type: "bytes32" }] },
    primaryType: "CancelAuthorization",
    message: { authorizer: payer.address, nonce },
  });
  const { v, r, s } = parseSignature(signature);
  const relayer = createWalletClient({ account: privateKeyToAccount(chain.accounts.relayer.privateKey), chain: chain.chain, transport: http(chain.rpcUrl) });
  const hash = await relayer.writeContract({ address: chain.token, abi: chain.tokenAbi, functionName: "cancelAuthorization", args: [payer.address, nonce, Number(v), r, s] });
  await chain.publicClient.waitForTransactionReceipt({ hash });
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

  it("refuses the same authorization again, without charging or creating anything", async () => {
    const checkout = checkoutWith();
    const payer = chain.accounts.payers[0]!;
    const decoded = await decodedPayment(payer);
    expect(await checkout.buy(verifiedOf(decoded), SPEC)).toHaveProperty("bought");
    const [createdBefore, balanceBefore] = [created, await chain.balanceOf(payer.address)];
    expect(await checkout.buy(verifiedOf(decoded), SPEC)).toEqual({ refused: "payment already used: this authorization (payer and nonce) was already submitted" });
    expect([created, await chain.balanceOf(payer.address)]).toEqual([createdBefore, balanceBefore]);
  });

  it("refuses, not charged, a settlement that failed before anything was sent, and settles the same authorization once it can", async () => {
    const checkout = checkoutWith();
    // A payer without balance: the facilitator refuses to send (insufficient balance is final: nothing was sent).
    const decoded = await decodedPayment(chain.accounts.broke);
    const createdBefore = created;
    const purchase = await checkout.buy(verifiedOf(decoded), SPEC);
    expect(purchase).toEqual({ refused: expect.stringMatching(/^payer without balance.*\(invalid_exact_evm_insufficient_balance\)$/) });
    expect(await rowOf(decoded)).toMatchObject({ status: "failed", error: (purchase as { refused: string }).refused });
    expect(created).toBe(createdBefore);
    // Funded now, the same authorization is tried again (a failed payment was never charged) and buys its run.
    await chain.mint(chain.accounts.broke.address, SEARCH_PRICE);
    const again = await checkout.buy(verifiedOf(decoded), SPEC);
    expect(again).toMatchObject({ bought: { runId: (await rowOf(decoded)).runId } });
    expect(await rowOf(decoded)).toMatchObject({ status: "settled" });
    expect(await chain.balanceOf(chain.accounts.broke.address)).toBe(0n);
  });

  it("answers with what the journal says when another process failed the payment while it settled (no run announced)", async () => {
    const decoded = await decodedPayment(chain.accounts.payers[3]!);
    // While the transfer is being sent, someone else (a reconciler) records the payment as failed.
    onceBefore("eth_sendRawTransaction", async () => payments.fail((await rowOf(decoded)).id, "failed by another process (test)"));
    const createdBefore = created;
    expect(await checkoutWith().buy(verifiedOf(decoded), SPEC)).toEqual({ refused: "failed by another process (test)" });
    expect(created).toBe(createdBefore);
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
    const purchase = await checkout.buy(verifiedOf(decoded), SPEC);
    expect(purchase).toMatchObject({ pending: expect.stringContaining("not known yet"), runId: (await rowOf(decoded)).runId });
    expect(await rowOf(decoded)).toMatchObject({ status: "settling" });
  });
});

describe("Checkout.previous: retries under a payment identifier", () => {
  it("returns the run of the same payment, a conflict for another payment, and nothing without an identifier or a record", async () => {
    const checkout = checkoutWith();
    const payer = chain.accounts.payers[2]!;
    const id = `checkout_${Date.now()}_same`;
    const first = await decodedPayment(payer, {}, id);
    expect(await checkout.previous(first)).toBeUndefined();
    const bought = await checkout.buy(verifiedOf(first), SPEC);
    if (!("bought" in bought)) throw new Error(JSON.stringify(bought));
    const createdBefore = created;
    // Settled already: answered at once, whatever the wait for a settling one would be.
    expect(await checkoutWith({ duplicateWaitMs: 60_000 }).previous(first)).toEqual(bought);
    expect(created).toBe(createdBefore + 1); // the run is announced again (it may not have been picked up)
    expect(await checkout.previous(first)).toEqual(bought);
    const other = await decodedPayment(payer, {}, id);
    expect(await checkout.previous(other)).toEqual({ conflict: `payment-identifier ${id} was used with a different payment; use a new identifier for a new payment` });
    // The other payment submitted under the same identifier is refused as a conflict too, not charged.
    expect(await checkout.buy(verifiedOf(other), SPEC)).toEqual({ conflict: expect.stringContaining(`payment-identifier ${id} was used with a different payment`) });
    expect(await checkout.previous(await decodedPayment(payer))).toBeUndefined();
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
    expect(await checkoutWith({ duplicateWaitMs: 300 }).previous(decoded)).toEqual({ conflict: `payment-identifier ${id} is still being settled; retry shortly`, retryAfterSeconds: 1 });
    // Settled by someone else after the 300 ms this checkout waits: not seen. By default it waits up to 10 s: seen.
    const later = await decodedPayment(payer, {}, `${id}_later`);
    expect(await checkoutWith({ paymentGate: silentGate }).buy(verifiedOf(later), SPEC)).toHaveProperty("pending");
    const laterRow = await rowOf(later);
    setTimeout(() => void payments.settle(laterRow.id, `0x${"cd".repeat(32)}`), 1000);
    expect(await checkoutWith({ duplicateWaitMs: 300 }).previous(later)).toMatchObject({ conflict: expect.stringContaining("still being settled") });
    expect(await checkoutWith({ duplicateWaitMs: undefined }).previous(later)).toMatchObject({ bought: { runId: laterRow.runId } });
    // Failed meanwhile by someone else: the waiting retry reports what it came to.
    const row = await rowOf(decoded);
    const waiting = checkoutWith({ duplicateWaitMs: 5000 }).previous(decoded);
    await pause(150);
    await payments.fail(row.id, "expired before it was settled (test)");
    expect(await waiting).toEqual({ refused: "expired before it was settled (test)" });
  });
});

describe("Checkout.reconcile", () => {
  /** A payment left settling by a settlement with no outcome, its lease already over (settlement timeout 50 ms). */
  async function leftSettling(payer: ChainAccount, change: Partial<AuthorizationFields> = {}): Promise<DecodedPayment> {
    const decoded = await decodedPayment(payer, change);
    expect(await checkoutWith({ paymentGate: silentGate, settlementTimeoutMs: 50 }).buy(verifiedOf(decoded), SPEC)).toHaveProperty("pending");
    await pause(150);
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
    expect(await checkoutWith().reconcile()).toBe(1);
    const row = await rowOf(decoded);
    expect(row).toMatchObject({ status: "settled", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
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
    await cancelOnChain(payer, cancelled.authorization.nonce);
    const validBefore = BigInt(Math.floor(Date.now() / 1000)) + 2n;
    const expiring = await leftSettling(payer, { validBefore });
    await untilSecond(validBefore);
    const [createdBefore, balanceBefore] = [created, await chain.balanceOf(payer.address)];
    expect(await checkoutWith().reconcile()).toBe(2);
    expect(await rowOf(cancelled)).toMatchObject({ status: "failed", error: "the payer cancelled the authorization (not charged); reconciled" });
    expect(await rowOf(expiring)).toMatchObject({ status: "failed", error: "authorization expired before it was settled (not charged)" });
    expect([created, await chain.balanceOf(payer.address)]).toEqual([createdBefore, balanceBefore]);
  });

  it("keeps a payment settling while the chain cannot be read, and finishes it once it can", async () => {
    const decoded = await leftSettling(chain.accounts.payers[3]!);
    const blind = checkoutWith({ chainState: new ChainState("http://127.0.0.1:9", chain.token, 1000), settlementTimeoutMs: 50 });
    const logged: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => logged.push(String(chunk)) > 0);
    expect(await blind.reconcile()).toBe(0);
    const { id } = await rowOf(decoded);
    expect(await rowOf(decoded)).toMatchObject({ status: "settling" });
    // The operator is told why, in the log.
    expect(logged.join("")).toContain(`loom: payments: the chain could not be read for payment ${id} (it stays unfinished): `);
    vi.restoreAllMocks();
    await pause(150);
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
