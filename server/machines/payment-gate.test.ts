// The payment gate on its own, against a local EVM chain and the official facilitator classes in this process: each
// check of a payment header that needs no facilitator (the header, its JSON, every authorization field, the offer's
// scheme, chain, asset, recipient, amount and time window, the payment identifier), what passes them, the 402 it
// answers, verification and settlement outcomes, and the settlement headers of both x402 versions.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { decodeXPaymentResponse } from "x402-fetch";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFacilitator } from "./facilitator.js";
import { type CapturedRequest, type DecodedPayment, PaymentGate, type VerifiedPayment } from "./payment-gate.js";
import { type PaymentsSettings, resolvePaymentsConfig } from "./payments-config.js";
import { type LocalChain, startLocalChain } from "./testing/local-chain.js";
import { type FacilitatorServer, startFacilitatorServer } from "./testing/facilitator-server.js";
import { localChainPayments } from "./testing/local-payments.js";
import { cancelAuthorization, handSignedPayment, paymentHeader } from "./testing/paying-clients.js";

const SEARCH_PRICE = 100_000n;
const URL_OF_SEARCH = "http://127.0.0.1:9/v1/machines/searches";

let chain: LocalChain;
let settings: PaymentsSettings;
let gate: PaymentGate;
let requirements: PaymentRequirements;

beforeAll(async () => {
  chain = await startLocalChain({ payers: 3 });
  settings = resolvePaymentsConfig(localChainPayments(chain, { mode: "direct" }, 20));
  gate = new PaymentGate(settings, openFacilitator(settings.settlement, settings.network));
  await gate.initialize();
  const challenge = await gate.challenge("search", request({}), "payment required");
  requirements = decodePaymentRequiredHeader(challenge.headers["PAYMENT-REQUIRED"]!).accepts[0]!;
}, 60_000);
afterAll(async () => chain?.close());

/** Settles `payment` with `paymentGate` while its payer cancels it just before the transfer arrives: it reverts. */
async function settledThroughCancel(paymentGate: PaymentGate, payment: VerifiedPayment) {
  const authorization = (payment.payload.payload as { authorization: { nonce: `0x${string}` } }).authorization;
  let cancelled = false;
  chain.setIntercept(async (call, forward) => {
    if (!cancelled && call.method === "eth_sendRawTransaction") {
      cancelled = true;
      await cancelAuthorization(chain, chain.accounts.payers[1]!, authorization.nonce);
    }
    return forward();
  });
  try {
    return await paymentGate.settle(payment);
  } finally {
    chain.setIntercept(undefined);
  }
}

/** A search request with these headers, as the route captured it. */
function request(headers: Record<string, string>): CapturedRequest {
  return { headers, url: URL_OF_SEARCH, body: { instructions: "What is loom?" } };
}

/** The base64 JSON of any value: a payment header, well formed or not. */
const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

/** A hand-signed v2 payment of the search's requirements, with fields changed, as its decoded JSON. */
async function signedPayload(change: Parameters<typeof handSignedPayment>[3] = {}, accepted: Partial<PaymentRequirements> = {}): Promise<Record<string, any>> {
  return JSON.parse(JSON.stringify(await handSignedPayment(chain, chain.accounts.payers[0]!, requirements, change, accepted)));
}

/** The same authorization in x402 v1's shape. */
const asV1 = (payload: Record<string, any>, patch: Record<string, unknown> = {}) => ({ x402Version: 1, scheme: "exact", network: "base", payload: payload.payload, ...patch });

/** Decodes a search payment: the decoded payment, or the 402's error (asserting its shape). */
async function decodeWith(headers: Record<string, string>): Promise<DecodedPayment | string> {
  const result = await gate.decode("search", request(headers));
  if ("decoded" in result) return result.decoded;
  expect(result.answer.status).toBe(402);
  expect(decodePaymentRequiredHeader(result.answer.headers["PAYMENT-REQUIRED"]!).error).toBe(result.answer.body.error);
  return result.answer.body.error as string;
}

describe("PaymentGate.decode: what the header must be", () => {
  it("asks for a payment when neither header is sent, in v1's body and v2's PAYMENT-REQUIRED header", async () => {
    const result = await gate.decode("search", request({}));
    if (!("answer" in result)) throw new Error("expected a 402");
    expect(result.answer.status).toBe(402);
    expect(result.answer.body).toEqual({ x402Version: 1, error: expect.stringMatching(/^payment required: send an X-PAYMENT \(x402 v1\) or PAYMENT-SIGNATURE \(x402 v2\) header/), accepts: [expect.objectContaining({ scheme: "exact", network: "base", maxAmountRequired: String(SEARCH_PRICE), resource: URL_OF_SEARCH })] });
    expect(Object.keys(result.answer.headers).map((name) => name.toLowerCase())).not.toContain("content-type");
    expect(decodePaymentRequiredHeader(result.answer.headers["PAYMENT-REQUIRED"]!)).toMatchObject({ x402Version: 2, error: result.answer.body.error, accepts: [{ amount: String(SEARCH_PRICE), network: "eip155:8453" }] });
  });

  it("reads PAYMENT-SIGNATURE before X-PAYMENT, and either with spaces around it", async () => {
    const payload = await signedPayload();
    const both = await decodeWith({ "payment-signature": ` ${encoded(payload)} `, "x-payment": "%%%" });
    expect(both).toMatchObject({ x402Version: 2, endpoint: "search", header: ` ${encoded(payload)} ` });
    const v1 = await decodeWith({ "x-payment": `${encoded(asV1(payload))}\n` });
    expect(v1).toMatchObject({ x402Version: 1 });
  });

  it("refuses a header that is not the base64 of a JSON object of x402 version 1 or 2, naming the header", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ "payment-signature": "not base64!" }, "malformed PAYMENT-SIGNATURE header: it must be the base64 of a JSON payment payload"],
      [{ "x-payment": Buffer.from("{nope").toString("base64") }, "malformed X-PAYMENT header: it must be the base64 of a JSON payment payload"],
      [{ "x-payment": encoded([1, 2]) }, "malformed X-PAYMENT header: its JSON is not an object"],
      [{ "payment-signature": encoded(5) }, "malformed PAYMENT-SIGNATURE header: its JSON is not an object"],
      [{ "payment-signature": encoded(null) }, "malformed PAYMENT-SIGNATURE header: its JSON is not an object"],
      [{ "payment-signature": encoded({ x402Version: 3 }) }, "malformed PAYMENT-SIGNATURE header: x402Version must be 1 or 2, got 3"],
      [{ "x-payment": encoded({ x402Version: "2" }) }, "malformed X-PAYMENT header: x402Version must be 1 or 2, got \"2\""],
    ];
    for (const [headers, error] of cases) expect(await decodeWith(headers), JSON.stringify(headers)).toBe(error);
  });

  it("checks every field of the authorization, naming it", async () => {
    const payload = await signedPayload();
    const auth = payload.payload.authorization as Record<string, unknown>;
    const withPayload = (inner: unknown) => ({ "payment-signature": encoded({ ...payload, payload: inner }) });
    const withAuth = (patch: Record<string, unknown>) => withPayload({ ...payload.payload, authorization: { ...auth, ...patch } });
    const prefix = "malformed PAYMENT-SIGNATURE header: payload.";
    const cases: Array<[Record<string, string>, string]> = [
      [withPayload(undefined), `${prefix} must be an object with signature and authorization`],
      [withPayload(null), `${prefix} must be an object with signature and authorization`],
      [withPayload({ ...payload.payload, signature: [payload.payload.signature] }), `${prefix}signature must be a 0x-prefixed hex string`],
      [withPayload({ ...payload.payload, signature: `zz${payload.payload.signature}` }), `${prefix}signature must be a 0x-prefixed hex string`],
      [withPayload({ ...payload.payload, authorization: null }), `${prefix}authorization must be an object (EIP-3009 transferWithAuthorization)`],
      [withAuth({ from: [auth.from] }), `${prefix}authorization.from must be an address`],
      [withAuth({ to: `zz${auth.to}` }), `${prefix}authorization.to must be an address`],
      [withAuth({ nonce: [auth.nonce] }), `${prefix}authorization.nonce must be 32 bytes of hex`],
      [withAuth({ nonce: `zz${auth.nonce}` }), `${prefix}authorization.nonce must be 32 bytes of hex`],
      [withPayload("0x12"), `${prefix} must be an object with signature and authorization`],
      [withPayload({ ...payload.payload, signature: 12 }), `${prefix}signature must be a 0x-prefixed hex string`],
      [withPayload({ ...payload.payload, signature: "12ab" }), `${prefix}signature must be a 0x-prefixed hex string`],
      [withPayload({ ...payload.payload, signature: "0x12zz" }), `${prefix}signature must be a 0x-prefixed hex string`],
      [withPayload({ signature: payload.payload.signature }), `${prefix}authorization must be an object (EIP-3009 transferWithAuthorization)`],
      [withAuth({ from: "0x1234" }), `${prefix}authorization.from must be an address`],
      [withAuth({ from: `${auth.from}00` }), `${prefix}authorization.from must be an address`],
      [withAuth({ to: 7 }), `${prefix}authorization.to must be an address`],
      [withAuth({ to: `x${String(auth.to).slice(1)}` }), `${prefix}authorization.to must be an address`],
      [withAuth({ value: 100000 }), `${prefix}authorization.value must be a decimal integer string`],
      [withAuth({ value: "1e5" }), `${prefix}authorization.value must be a decimal integer string`],
      [withAuth({ value: "-100000" }), `${prefix}authorization.value must be a decimal integer string`],
      [withAuth({ value: " 100000" }), `${prefix}authorization.value must be a decimal integer string`],
      [withAuth({ value: "1".repeat(79) }), `${prefix}authorization.value must be a decimal integer string`],
      [withAuth({ validAfter: "soon" }), `${prefix}authorization.validAfter must be a decimal integer string`],
      [withAuth({ validBefore: "" }), `${prefix}authorization.validBefore must be a decimal integer string`],
      [withAuth({ nonce: 5 }), `${prefix}authorization.nonce must be 32 bytes of hex`],
      [withAuth({ nonce: `${auth.nonce}0` }), `${prefix}authorization.nonce must be 32 bytes of hex`],
      [withAuth({ nonce: String(auth.nonce).slice(2) }), `${prefix}authorization.nonce must be 32 bytes of hex`],
    ];
    for (const [headers, error] of cases) expect(await decodeWith(headers), error).toBe(error);
  });

  it("decodes a good payment into its authorization, nonce lower-cased, with the digest of what was sent", async () => {
    const payload = await signedPayload();
    const nonce = String(payload.payload.authorization.nonce);
    payload.payload.authorization.nonce = `0x${nonce.slice(2).toUpperCase()}`;
    const decoded = await decodeWith({ "payment-signature": encoded(payload) }) as DecodedPayment;
    expect(decoded).toMatchObject({
      endpoint: "search", x402Version: 2, payload,
      authorization: { from: chain.accounts.payers[0]!.address, to: chain.accounts.payTo.address, value: SEARCH_PRICE, nonce: nonce.toLowerCase() },
    });
    expect(decoded.paymentIdentifier).toBeUndefined();
    expect(decoded).not.toHaveProperty("paymentIdentifier");
    expect(decoded.digest).toMatch(/^[0-9a-f]{64}$/);
    // The same payment has the same digest; another (another nonce) another.
    expect((await decodeWith({ "payment-signature": encoded(payload) }) as DecodedPayment).digest).toBe(decoded.digest);
    expect((await decodeWith({ "payment-signature": encoded(await signedPayload()) }) as DecodedPayment).digest).not.toBe(decoded.digest);
  });

  it("reads times as Unix seconds, a validBefore past 2^53 as never expiring", async () => {
    const far = await signedPayload({ validBefore: 2n ** 64n, validAfter: 0n });
    expect(await decodeWith({ "payment-signature": encoded(far) })).toMatchObject({ authorization: { validBefore: Number.MAX_SAFE_INTEGER, validAfter: 0 } });
    const exact = await signedPayload({ validBefore: BigInt(Number.MAX_SAFE_INTEGER), validAfter: 12n });
    expect(await decodeWith({ "payment-signature": encoded(exact) })).toMatchObject({ authorization: { validBefore: Number.MAX_SAFE_INTEGER, validAfter: 12 } });
  });
});

describe("PaymentGate.decode: the payment against the offer", () => {
  it("refuses another scheme, chain, asset or recipient, in v2's accepted requirements and in v1's fields", async () => {
    const payload = await signedPayload();
    const v2 = (accepted: unknown) => ({ "payment-signature": encoded({ ...payload, accepted }) });
    const v1 = (patch: Record<string, unknown>) => ({ "x-payment": encoded(asV1(payload, patch)) });
    const cases: Array<[Record<string, string>, string]> = [
      [v2(undefined), "malformed payment: accepted (the requirements paid for) is missing"],
      [v2(null), "malformed payment: accepted (the requirements paid for) is missing"],
      [v2("exact"), "malformed payment: accepted (the requirements paid for) is missing"],
      [v2({ ...requirements, scheme: "upto" }), "wrong scheme: \"upto\"; only \"exact\" is accepted"],
      [v2({ ...requirements, network: "eip155:1" }), "wrong chain: \"eip155:1\"; pay on eip155:8453"],
      [v2({ ...requirements, network: 8453 }), "wrong chain: 8453; pay on eip155:8453"],
      [v2({ ...requirements, asset: chain.accounts.deployer.address }), `wrong asset: "${chain.accounts.deployer.address}"; pay in ${chain.token}`],
      [v2({ ...requirements, payTo: chain.accounts.relayer.address }), `wrong recipient: "${chain.accounts.relayer.address}"; pay to ${chain.accounts.payTo.address}`],
      [v1({ scheme: "upto" }), "wrong scheme: \"upto\"; only \"exact\" is accepted"],
      [v1({ network: "base-sepolia" }), "wrong chain: \"base-sepolia\"; pay on base"],
      [v1({ network: "eip155:8453" }), "wrong chain: \"eip155:8453\"; pay on base"],
      // A value is quoted whole up to 100 characters of JSON, and cut to 97 and "..." past that.
      [v2({ ...requirements, scheme: "u".repeat(98) }), `wrong scheme: "${"u".repeat(98)}"; only "exact" is accepted`],
      [v2({ ...requirements, scheme: "u".repeat(99) }), `wrong scheme: "${"u".repeat(96)}...; only "exact" is accepted`],
    ];
    for (const [headers, error] of cases) expect(await decodeWith(headers), error).toBe(error);
  });

  it("compares addresses and chain names without regard to case", async () => {
    const payload = await signedPayload();
    const lower = { ...requirements, network: "EIP155:8453", asset: requirements.asset.toLowerCase(), payTo: requirements.payTo.toUpperCase().replace("0X", "0x") };
    expect(await decodeWith({ "payment-signature": encoded({ ...payload, accepted: lower }) })).toMatchObject({ x402Version: 2 });
    expect(await decodeWith({ "x-payment": encoded(asV1(payload, { network: "Base" })) })).toMatchObject({ x402Version: 1 });
    const lowerTo = await signedPayload({ to: chain.accounts.payTo.address.toLowerCase() as `0x${string}` });
    expect(await decodeWith({ "payment-signature": encoded(lowerTo) })).toMatchObject({ authorization: { value: SEARCH_PRICE } });
  });

  it("refuses an authorization to another recipient, for another amount, expired or not yet valid, at the boundaries", async () => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const cases: Array<[Parameters<typeof handSignedPayment>[3], RegExp]> = [
      [{ to: chain.accounts.relayer.address }, new RegExp(`^wrong recipient: the authorization pays ${chain.accounts.relayer.address}; pay to ${chain.accounts.payTo.address}$`)],
      [{ value: SEARCH_PRICE - 1n }, new RegExp(`^amount too low: the authorization pays 99999; the price is 100000 \\(smallest units of ${chain.token}\\)$`)],
      [{ value: 0n }, /^amount too low: the authorization pays 0; the price is 100000/],
      [{ value: SEARCH_PRICE + 1n }, /^amount does not match the price: the authorization pays 100001; the price is 100000$/],
      // validBefore now: already past (a payment must still be valid after this second).
      [{ validBefore: now }, /^authorization expired: validBefore \d+ is past \(now \d+\)$/],
      [{ validBefore: now - 3600n }, /^authorization expired/],
      [{ validAfter: now + 3600n }, /^authorization not yet valid: validAfter \d+ is in the future \(now \d+\)$/],
    ];
    for (const [change, error] of cases) expect(await decodeWith({ "payment-signature": encoded(await signedPayload(change)) }), String(error)).toMatch(error);
    // Valid from this second on, and until a few seconds from now: accepted.
    expect(await decodeWith({ "payment-signature": encoded(await signedPayload({ validAfter: now, validBefore: now + 30n })) })).toMatchObject({ x402Version: 2 });
  });

  it("takes a payment identifier when the client filled one in, and refuses a malformed one", async () => {
    const payload = await signedPayload();
    const withId = (info: unknown) => ({ "payment-signature": encoded({ ...payload, extensions: { [PAYMENT_IDENTIFIER]: { info } } }) });
    expect(await decodeWith(withId({ id: "loomtest_0123456789abcdef" }))).toMatchObject({ paymentIdentifier: "loomtest_0123456789abcdef" });
    // The offer's declaration echoed back without an id, or the extension without even its info: no identifier.
    const echoed = await decodeWith(withId({ required: false })) as DecodedPayment;
    expect(echoed).not.toHaveProperty("paymentIdentifier");
    const bare = await decodeWith({ "payment-signature": encoded({ ...payload, extensions: { [PAYMENT_IDENTIFIER]: {} } }) }) as DecodedPayment;
    expect(bare).toMatchObject({ x402Version: 2 });
    expect(bare).not.toHaveProperty("paymentIdentifier");
    for (const id of ["short", "x".repeat(129), "has spaces in it, sixteen+"]) {
      expect(await decodeWith(withId({ id }))).toBe("malformed payment-identifier extension: info.id must be 16 to 128 characters of letters, digits, _ and -");
    }
  });
});

describe("PaymentGate.verify and settle with the official facilitator", () => {
  it("verifies a v2 and a v1 payment against the requirements of their own version", async () => {
    const v2 = await gate.decode("search", request({ "payment-signature": paymentHeader(await handSignedPayment(chain, chain.accounts.payers[1]!, requirements)) }));
    if (!("decoded" in v2)) throw new Error(JSON.stringify(v2.answer.body));
    const verifiedV2 = await gate.verify(request({}), v2.decoded);
    expect(verifiedV2).toMatchObject({ verified: { x402Version: 2, requirements: { amount: String(SEARCH_PRICE), network: "eip155:8453" } } });
    // The offer's extensions go on to settlement with the payment.
    expect(Object.keys((verifiedV2 as { verified: VerifiedPayment }).verified.declaredExtensions ?? {})).toEqual(expect.arrayContaining(["bazaar", PAYMENT_IDENTIFIER]));
    expect(verifiedV2).not.toHaveProperty("verified.header");

    const v1 = await gate.decode("search", request({ "x-payment": encoded(asV1(await signedPayload())) }));
    if (!("decoded" in v1)) throw new Error(JSON.stringify(v1.answer.body));
    expect(await gate.verify(request({}), v1.decoded)).toMatchObject({ verified: { x402Version: 1, requirements: { maxAmountRequired: String(SEARCH_PRICE), network: "base", resource: URL_OF_SEARCH } } });
  });

  it("answers a refusal by the facilitator with 402 and its reason, in either version", async () => {
    const stranger = chain.accounts.payers[2]!;
    for (const header of [
      { "payment-signature": encoded(await signedPayload({ signer: stranger })) },
      { "x-payment": encoded(asV1(await signedPayload({ signer: stranger }))) },
    ]) {
      const decoded = await gate.decode("search", request(header));
      if (!("decoded" in decoded)) throw new Error(JSON.stringify(decoded.answer.body));
      const result = await gate.verify(request({}), decoded.decoded);
      if (!("answer" in result)) throw new Error("expected a refusal");
      expect(result.answer.status).toBe(402);
      expect(result.answer.body.error).toMatch(/^wrong signature/);
    }
  });

  it("answers 503 (nothing charged, retry) when the facilitator cannot be asked", async () => {
    const unreachable = new PaymentGate(settings, new HTTPFacilitatorClient({ url: "http://127.0.0.1:9", timeoutMs: 2000 }));
    for (const header of [{ "x-payment": encoded(asV1(await signedPayload())) }, { "payment-signature": encoded(await signedPayload()) }]) {
      const decoded = await gate.decode("search", request(header));
      if (!("decoded" in decoded)) throw new Error(JSON.stringify(decoded.answer.body));
      const result = await unreachable.verify(request({}), decoded.decoded);
      expect(result, Object.keys(header)[0]).toEqual({ answer: { status: 503, headers: { "retry-after": "5" }, body: { error: expect.stringMatching(/^the payment could not be verified now\b.*nothing was charged: retry$/) } } });
      // Settling through it has no outcome (and says nothing of why: that is the log's).
      expect(await unreachable.settle({ x402Version: decoded.decoded.x402Version, payload: decoded.decoded.payload, requirements: requirements as unknown as Record<string, unknown> })).toEqual({ settled: "unknown" });
    }
  });

  it("settles once: the transfer's transaction, then the facilitator's refusal for the used nonce", async () => {
    const payer = chain.accounts.payers[1]!;
    const decoded = await gate.decode("search", request({ "payment-signature": paymentHeader(await handSignedPayment(chain, payer, requirements)) }));
    if (!("decoded" in decoded)) throw new Error(JSON.stringify(decoded.answer.body));
    const verified = await gate.verify(request({}), decoded.decoded);
    if (!("verified" in verified)) throw new Error(JSON.stringify(verified.answer.body));
    const before = await chain.balanceOf(payer.address);
    expect(await gate.settle(verified.verified)).toEqual({ settled: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), payer: payer.address });
    expect(await chain.balanceOf(payer.address)).toBe(before - SEARCH_PRICE);
    const again = await gate.settle(verified.verified);
    expect(again).toMatchObject({ settled: false, code: expect.stringMatching(/^invalid_exact_evm_/), reason: expect.stringMatching(/\(invalid_exact_evm_\w+\)$/) });
    expect(await chain.balanceOf(payer.address)).toBe(before - SEARCH_PRICE);
  });
});

describe("PaymentGate: more of verification and settlement", () => {
  /** Decodes and verifies a payment with `paymentGate`; the verified payment, or the answer. */
  async function verifiedWith(paymentGate: PaymentGate, header: Record<string, string>) {
    const decoded = await gate.decode("search", request(header));
    if (!("decoded" in decoded)) throw new Error(JSON.stringify(decoded.answer.body));
    return paymentGate.verify(request({}), decoded.decoded);
  }

  it("settles a v1 payment through the facilitator's v1 scheme, once", async () => {
    const payer = chain.accounts.payers[2]!;
    const verified = await verifiedWith(gate, { "x-payment": encoded(asV1(JSON.parse(JSON.stringify(await handSignedPayment(chain, payer, requirements))))) });
    if (!("verified" in verified)) throw new Error(JSON.stringify(verified.answer.body));
    const before = await chain.balanceOf(payer.address);
    expect(await gate.settle(verified.verified)).toEqual({ settled: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), payer: payer.address });
    expect(await chain.balanceOf(payer.address)).toBe(before - SEARCH_PRICE);
    // Refused: the v1 scheme passes on the chain's revert as its reason (text, not a code), so loom's words say only that.
    expect(await gate.settle(verified.verified)).toEqual({ settled: false, code: expect.any(String), reason: expect.stringMatching(/^payment refused \(unknown_reason\)$|\(invalid_exact_evm_\w+\)$/) });
  });

  it("refuses a v2 payment whose accepted requirements match none offered, though each field loom checks is right", async () => {
    // The authorization pays the price; the requirements it says it accepted name another amount.
    const payload = await signedPayload({}, { amount: "1" });
    const result = await verifiedWith(gate, { "payment-signature": encoded(payload) });
    expect(result).toMatchObject({ answer: { status: 402, body: { error: "the payment's accepted requirements match none offered (compare scheme, network, asset, amount, payTo, maxTimeoutSeconds and extra with the 402)" } } });
  });

  describe("through a facilitator over HTTP", () => {
    let facilitator: FacilitatorServer;
    let httpGate: PaymentGate;
    beforeAll(async () => {
      facilitator = await startFacilitatorServer(chain);
      httpGate = new PaymentGate(settings, new HTTPFacilitatorClient({ url: facilitator.url, timeoutMs: 20_000 }));
      await httpGate.initialize();
    });
    afterAll(async () => facilitator?.close());

    it("takes a refusal answered with 400 (as hosted facilitators answer) as a refusal: 402, or a settlement refused", async () => {
      facilitator.refusalStatus = 400;
      const stranger = chain.accounts.payers[2]!;
      for (const header of [
        { "x-payment": encoded(asV1(await signedPayload({ signer: stranger }))) },
        { "payment-signature": encoded(await signedPayload({ signer: stranger })) },
      ]) {
        const result = await verifiedWith(httpGate, header);
        expect(result, Object.keys(header)[0]).toMatchObject({ answer: { status: 402, body: { error: expect.stringMatching(/^wrong signature.*\(invalid_exact_evm_signature\)$/) } } });
      }
      const payer = chain.accounts.payers[0]!;
      for (const header of [
        { "x-payment": encoded(asV1(JSON.parse(JSON.stringify(await handSignedPayment(chain, payer, requirements))))) },
        { "payment-signature": paymentHeader(await handSignedPayment(chain, payer, requirements)) },
      ]) {
        const verified = await verifiedWith(httpGate, header);
        if (!("verified" in verified)) throw new Error(JSON.stringify(verified.answer.body));
        expect(await httpGate.settle(verified.verified), Object.keys(header)[0]).toMatchObject({ settled: true });
        // Settled once: the second settlement is refused with 400, a definite refusal with its reason code.
        expect(await httpGate.settle(verified.verified), Object.keys(header)[0]).toEqual({ settled: false, code: expect.any(String), reason: expect.stringMatching(/^payment refused \(unknown_reason\)$|\(invalid_exact_evm_\w+\)$/) });
      }
      facilitator.refusalStatus = 200;
    });

    it("answers 503 when the facilitator fails verification (a 500), and has no outcome when it fails settlement", async () => {
      const payer = chain.accounts.payers[1]!;
      const headers = [
        { "x-payment": encoded(asV1(JSON.parse(JSON.stringify(await handSignedPayment(chain, payer, requirements))))) },
        { "payment-signature": paymentHeader(await handSignedPayment(chain, payer, requirements)) },
      ];
      facilitator.failing.add("/verify");
      for (const header of headers) {
        expect(await verifiedWith(httpGate, header), Object.keys(header)[0]).toMatchObject({ answer: { status: 503, headers: { "retry-after": "5" } } });
      }
      facilitator.failing.clear();
      facilitator.failing.add("/settle");
      for (const header of headers) {
        const verified = await verifiedWith(httpGate, header);
        if (!("verified" in verified)) throw new Error(JSON.stringify(verified.answer.body));
        expect(await httpGate.settle(verified.verified), Object.keys(header)[0]).toEqual({ settled: "unknown" });
      }
      facilitator.failing.clear();
    });
  });

  it("names the transaction of a transfer that was sent and reverted, whether the facilitator answers 200 or 400", async () => {
    const payer = chain.accounts.payers[1]!;
    const reverted = { settled: false, code: "invalid_exact_evm_transaction_failed", reason: "settlement failed: the transfer did not go through on chain (invalid_exact_evm_transaction_failed)", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) };
    const facilitator = await startFacilitatorServer(chain);
    try {
      const httpGate = new PaymentGate(settings, new HTTPFacilitatorClient({ url: facilitator.url, timeoutMs: 20_000 }));
      await httpGate.initialize();
      for (const [name, paymentGate, refusalStatus] of [["direct", gate, 200], ["facilitator 200", httpGate, 200], ["facilitator 400", httpGate, 400]] as const) {
        facilitator.refusalStatus = refusalStatus;
        const verified = await verifiedWith(paymentGate, { "payment-signature": paymentHeader(await handSignedPayment(chain, payer, requirements)) });
        if (!("verified" in verified)) throw new Error(JSON.stringify(verified.answer.body));
        const outcome = await settledThroughCancel(paymentGate, verified.verified);
        expect(outcome, name).toEqual(reverted);
        const receipt = await chain.publicClient.getTransactionReceipt({ hash: (outcome as { transaction: `0x${string}` }).transaction });
        expect(receipt.status, name).toBe("reverted");
      }
    } finally {
      await facilitator.close();
    }
  });

  it("offers no v1 requirements on a network x402 v1 has no name for, only v2's", async () => {
    const unnamed = resolvePaymentsConfig({ ...localChainPayments(chain, { mode: "direct" }, 20), network: "eip155:424242" });
    expect(unnamed.network.v1Name).toBeUndefined();
    const unnamedGate = new PaymentGate(unnamed, openFacilitator(unnamed.settlement, unnamed.network));
    await unnamedGate.initialize();
    const answer = await unnamedGate.challenge("search", request({}), "payment required");
    expect(answer.body).toEqual({ x402Version: 1, error: "payment required", accepts: [] });
    expect(decodePaymentRequiredHeader(answer.headers["PAYMENT-REQUIRED"]!).accepts).toEqual([expect.objectContaining({ network: "eip155:424242", amount: String(SEARCH_PRICE) })]);
  });
});

describe("PaymentGate.settlementHeaders", () => {
  it("says in each version's header that the payment settled, on which chain, by whom (checksummed)", () => {
    const payer = chain.accounts.payers[0]!.address.toLowerCase();
    const transaction = `0x${"ab".repeat(32)}`;
    const v2 = gate.settlementHeaders(2, transaction, payer);
    expect(Object.keys(v2)).toContain("PAYMENT-RESPONSE");
    expect(decodePaymentResponseHeader(v2["PAYMENT-RESPONSE"]!)).toMatchObject({ success: true, transaction, network: "eip155:8453", payer: getAddress(payer) });
    // A payment reconciled without its transaction's hash (its event past the lookback): an empty transaction.
    expect(decodePaymentResponseHeader(gate.settlementHeaders(2, undefined, payer)["PAYMENT-RESPONSE"]!)).toMatchObject({ success: true, transaction: "" });
    const v1 = gate.settlementHeaders(1, undefined, payer);
    expect(Object.keys(v1)).toEqual(["X-PAYMENT-RESPONSE"]);
    expect(decodeXPaymentResponse(v1["X-PAYMENT-RESPONSE"]!)).toMatchObject({ success: true, transaction: "", network: "base", payer: getAddress(payer) });
  });
});
