// The machine endpoints over HTTP against a local EVM chain in this process: the 402 offer in both x402 generations,
// the official v2 (@x402/fetch) and v1 (x402-fetch) clients paying and getting their run in both settlement modes, the
// payee's and payer's balances moving by exactly the price, every refusal naming its check with nothing charged (an
// amount over the price as well as under it), 20 concurrent submissions of one payment making one run that all of them
// get, a retry of a paid request getting its run with or without a payment identifier, two payments of a payer who can
// afford one making one transfer and one 402 in both modes, and a facilitator that cannot be reached answered 503.
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { decodeXPaymentResponse } from "x402-fetch";
import { toFunctionSelector } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { type FreshPlatform, TEST_BACKENDS, freshPlatform } from "../platform/testing/test-databases.js";
import { serviceWebhookSecret } from "../platform/store/webhook-secret-store.js";
import { startWebhookReceiver } from "../runs/callbacks/testing/webhook-receiver.js";
import { fixedTools as tools } from "../runs/testing/fixed-tools.js";
import { type RunsServer, startRunsServer } from "../runs/testing/runs-server.js";
import { EngineError } from "../../engine/request.js";
import { ScriptedEngine } from "../testing/scripted-engine.js";
import { resolvePaymentsConfig } from "./payments-config.js";
import { type FacilitatorServer, startFacilitatorServer } from "./testing/facilitator-server.js";
import { type ChainAccount, type LocalChain, startLocalChain } from "./testing/local-chain.js";
import { localChainPayments } from "./testing/local-payments.js";
import { handSignedPayment, officialPayment, offerOf, paymentHeader, v1PayingFetch, v2PayingFetch } from "./testing/paying-clients.js";

const PGLITE = TEST_BACKENDS.find((backend) => backend.name === "PGlite")!;
const POSTGRES = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!;
const SEARCH_PRICE = 100_000n;
const RUN_PRICE = 500_000n;

let chain: LocalChain;
let facilitator: FacilitatorServer;

beforeAll(async () => {
  chain = await startLocalChain({ payers: 6 });
  facilitator = await startFacilitatorServer(chain);
}, 60_000);
afterAll(async () => {
  await facilitator?.close();
  await chain?.close();
});

function settingsFor(mode: "direct" | "facilitator", timeoutSeconds = 20) {
  return resolvePaymentsConfig(localChainPayments(chain, mode === "direct" ? { mode } : { mode, url: facilitator.url }, timeoutSeconds));
}

async function startPaidServer(mode: "direct" | "facilitator", backend = PGLITE, database?: FreshPlatform): Promise<{ server: RunsServer; engine: ScriptedEngine }> {
  const engine = new ScriptedEngine();
  engine.script = { deltas: ["Loom pages its KV cache."] };
  const server = await startRunsServer(backend, { engine, runs: { tools }, payments: settingsFor(mode), ...(database ? { database } : {}) });
  return { server, engine };
}

/** POST a JSON body with optional headers; the response is returned unread. */
function post(url: string, body: unknown, headers: Record<string, string> = {}, fetcher: typeof fetch = fetch): Promise<Response> {
  return fetcher(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
}

async function pollUntilDone(server: RunsServer, path: string): Promise<any> {
  const until = Date.now() + 15_000;
  for (;;) {
    const response = await fetch(`${server.url}${path}`);
    const body = await response.json() as any;
    expect(response.status).toBe(200);
    if (body.status === "succeeded" || body.status === "failed") return body;
    if (Date.now() > until) throw new Error(`${path} still ${body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until `check` holds (15 s at most). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Two payments of a payer whose balance covers one, the second verified while the first transfer is held back (so
 * both are valid at verification): one 202, one 402 saying the payer lacks the balance, one transfer broadcast.
 */
async function twoPaymentsForOne(server: RunsServer, payer: ChainAccount): Promise<void> {
  const searchUrl = `${server.url}/v1/machines/searches`;
  await chain.mint(payer.address, SEARCH_PRICE);
  const requirements = offerOf(await post(searchUrl, SEARCH_BODY)).accepts[0]!;
  const [one, two] = [await handSignedPayment(chain, payer, requirements), await handSignedPayment(chain, payer, requirements)];
  const [payeeBefore, paymentsBefore] = [await chain.balanceOf(chain.accounts.payTo.address), (await server.platform.stores.payments.list({ limit: 1000 })).length];
  let broadcasts = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const firstArrived = new Promise<void>((resolve) => (arrived = resolve));
  let estimated!: () => void;
  const secondEstimated = new Promise<void>((resolve) => (estimated = resolve));
  chain.setIntercept(async (call, forward) => {
    if (call.method === "eth_estimateGas" && broadcasts === 1) {
      const estimate = await forward();
      estimated();
      return estimate;
    }
    if (call.method !== "eth_sendRawTransaction") return forward();
    broadcasts += 1;
    if (broadcasts === 1) {
      arrived();
      await released;
    }
    return forward();
  });
  try {
    const first = post(searchUrl, SEARCH_BODY, { "payment-signature": paymentHeader(one) });
    await firstArrived;
    const second = post(searchUrl, SEARCH_BODY, { "payment-signature": paymentHeader(two) });
    // Verified and recorded (the balance still covered it), and about to be settled. A transfer of it would be
    // estimated now (as the first one is still unsent); loom waits for the first instead. Then the first lands.
    await until("both payments are settling", async () => (await server.platform.stores.payments.list({ limit: 1000 })).length === paymentsBefore + 2);
    await Promise.race([secondEstimated, new Promise((resolve) => setTimeout(resolve, 1000))]);
    release();
    const [firstAnswer, secondAnswer] = await Promise.all([first, second]);
    expect(firstAnswer.status).toBe(202);
    expect(secondAnswer.status).toBe(402);
    expect((await secondAnswer.json() as any).error).toBe("payer without balance: the payer holds less than the price (invalid_exact_evm_insufficient_balance)");
    expect(broadcasts).toBe(1);
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE);
    expect(await chain.balanceOf(payer.address)).toBe(0n);
    const recorded = (await server.platform.stores.payments.list({ limit: 1000 })).slice(0, 2).map((payment) => payment.status).sort();
    expect(recorded).toEqual(["failed", "settled"]);
  } finally {
    release();
    chain.setIntercept(undefined);
  }
}

const SEARCH_BODY = { instructions: "How does loom keep its KV cache?" };
const RUN_BODY = { engine: "tim", input: { instructions: "Summarise loom's KV cache.", tools: ["web_search"] } };

describe("machine endpoints, direct settlement (PGlite, local chain)", () => {
  let server: RunsServer;
  let engine: ScriptedEngine;
  let searchUrl: string;
  let runUrl: string;
  let offer: PaymentRequired;

  beforeAll(async () => {
    ({ server, engine } = await startPaidServer("direct"));
    searchUrl = `${server.url}/v1/machines/searches`;
    runUrl = `${server.url}/v1/machines/runs`;
    offer = offerOf(await post(searchUrl, SEARCH_BODY));
  }, 60_000);
  afterAll(async () => server?.close());

  it("asks for payment with the v1 body and the v2 PAYMENT-REQUIRED header, at 0.10 and 0.50 USD", async () => {
    for (const [url, body, price, path] of [[searchUrl, SEARCH_BODY, SEARCH_PRICE, "/v1/machines/searches"], [runUrl, RUN_BODY, RUN_PRICE, "/v1/machines/runs"]] as const) {
      const response = await post(url, body);
      expect(response.status).toBe(402);
      expect(response.statusText).toBe("Payment Required");
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(await response.json()).toEqual({
        x402Version: 1,
        error: expect.stringContaining("payment required"),
        accepts: [{
          scheme: "exact", network: "base", maxAmountRequired: String(price), resource: `${server.url}${path}`, description: expect.any(String),
          mimeType: "application/json", payTo: chain.accounts.payTo.address, maxTimeoutSeconds: 300, asset: chain.token,
          outputSchema: expect.any(Object), extra: { name: "USD Coin", version: "2" },
        }],
      });
      const v2 = offerOf(response);
      expect(v2).toMatchObject({ x402Version: 2, resource: { url: `${server.url}${path}`, mimeType: "application/json" } });
      expect(v2.accepts).toEqual([expect.objectContaining({ scheme: "exact", network: "eip155:8453", amount: String(price), asset: chain.token, payTo: chain.accounts.payTo.address, extra: expect.objectContaining({ name: "USD Coin", version: "2" }) })]);
      // Bazaar discovery and idempotent retries are declared.
      expect(Object.keys(v2.extensions ?? {})).toEqual(expect.arrayContaining(["bazaar", "payment-identifier"]));
      expect((v2.resource.description ?? "").length).toBeLessThanOrEqual(80);
    }
  });

  it("checks the body before asking for payment: a bad body is a 400 naming the field, even with a payment", async () => {
    const header = { "payment-signature": paymentHeader(await officialPayment(chain.accounts.payers[0]!, offer)) };
    const cases: Array<[string, unknown, string]> = [
      [searchUrl, {}, "instructions"],
      [searchUrl, { instructions: "  " }, "instructions"],
      [searchUrl, { instructions: "x", engine: "tim" }, "engine"],
      [runUrl, { input: { instructions: "x" } }, "engine"],
      [runUrl, { engine: "tim-extA", input: { instructions: "x" } }, "engine"],
      [runUrl, { engine: "tim", input: {} }, "input.instructions"],
      [runUrl, { engine: "tim", input: { instructions: "x", tools: ["shell"] } }, "input.tools[0]"],
      [runUrl, { engine: "tim", input: { instructions: "x", answerFormat: { type: "nonsense" } } }, "input.answerFormat"],
      [runUrl, { engine: "tim", input: { instructions: "x" }, output: { callbackUrl: "ftp://x" } }, "output.callbackUrl"],
      [runUrl, "{not json", ""],
    ];
    const before = await chain.balanceOf(chain.accounts.payTo.address);
    for (const [url, body, field] of cases) {
      const response = await post(url, body, header);
      const answer = await response.json() as any;
      expect({ status: response.status, field: answer.field ?? "" }).toEqual({ status: 400, field });
    }
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(before);
  });

  it("the official v2 client (@x402/fetch) pays a search: 202 queued, PAYMENT-RESPONSE, exactly 0.10 moved, the run polls to succeeded", async () => {
    const payer = chain.accounts.payers[1]!;
    const [payeeBefore, payerBefore] = [await chain.balanceOf(chain.accounts.payTo.address), await chain.balanceOf(payer.address)];
    const response = await post(searchUrl, SEARCH_BODY, {}, v2PayingFetch(payer));
    expect(response.status).toBe(202);
    expect(response.statusText).toBe("Accepted");
    const created = await response.json() as any;
    expect(created).toEqual({ runId: expect.stringMatching(/^run_[0-9a-f]{32}$/), status: "queued" });
    const receipt = decodePaymentResponseHeader(response.headers.get("payment-response")!);
    expect(receipt).toMatchObject({ success: true, network: "eip155:8453", payer: payer.address, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE);
    expect(await chain.balanceOf(payer.address)).toBe(payerBefore - SEARCH_PRICE);

    const done = await pollUntilDone(server, `/v1/machines/searches/${created.runId}`);
    expect(done).toMatchObject({ runId: created.runId, status: "succeeded", result: { answer: "Loom pages its KV cache." }, usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), durationMs: expect.any(Number) } });
    // Another kind's path, and the legacy runs API, do not show it.
    expect((await fetch(`${server.url}/v1/machines/runs/${created.runId}`)).status).toBe(404);
    expect((await server.call("GET", `/v1/runs/${created.runId}`)).status).toBe(404);
    const [payment] = await server.platform.stores.payments.list({ limit: 1 });
    expect(payment).toMatchObject({ status: "settled", runId: created.runId, payer: payer.address.toLowerCase(), amount: String(SEARCH_PRICE), transaction: receipt.transaction.toLowerCase(), x402Version: 2 });
  });

  it("the official v1 client (x402-fetch, cap raised to 0.50) pays a full run: X-PAYMENT-RESPONSE, exactly 0.50 moved", async () => {
    const payer = chain.accounts.payers[2]!;
    const [payeeBefore, payerBefore] = [await chain.balanceOf(chain.accounts.payTo.address), await chain.balanceOf(payer.address)];
    // At its default cap (0.10 USD) the v1 client refuses to pay 0.50.
    await expect(post(runUrl, RUN_BODY, {}, v1PayingFetch(chain, payer, SEARCH_PRICE))).rejects.toThrow(/exceeds maximum allowed/i);
    const response = await post(runUrl, RUN_BODY, {}, v1PayingFetch(chain, payer, RUN_PRICE));
    expect(response.status).toBe(202);
    const created = await response.json() as any;
    expect(decodeXPaymentResponse(response.headers.get("x-payment-response")!)).toMatchObject({ success: true, network: "base", payer: payer.address });
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + RUN_PRICE);
    expect(await chain.balanceOf(payer.address)).toBe(payerBefore - RUN_PRICE);
    expect(await pollUntilDone(server, `/v1/machines/runs/${created.runId}`)).toMatchObject({ status: "succeeded" });
    expect((await fetch(`${server.url}/v1/machines/searches/${created.runId}`)).status).toBe(404);
  });

  it("a paid run that fails reports failed with its error; the payment stays settled (no refund, as the spec has it)", async () => {
    engine.queue.push({ deltas: [], failWith: new EngineError("internal", "the model step failed: device lost") });
    const response = await post(runUrl, { engine: "tim", input: { instructions: "Fail, please." } }, {}, v2PayingFetch(chain.accounts.payers[3]!));
    expect(response.status).toBe(202);
    const { runId } = await response.json() as any;
    const done = await pollUntilDone(server, `/v1/machines/runs/${runId}`);
    expect(done).toMatchObject({ runId, status: "failed", error: { code: "model_error", message: expect.stringContaining("device lost") } });
    expect(done.result).toBeUndefined();
    const [payment] = (await server.platform.stores.payments.list()).filter((listed) => listed.runId === runId);
    expect(payment).toMatchObject({ status: "settled", amount: String(RUN_PRICE) });
  });

  it("refuses with a 402 naming the failed check, and charges nothing", async () => {
    const payer = chain.accounts.payers[3]!;
    const requirements = offer.accepts[0]!;
    const now = BigInt(Math.floor(Date.now() / 1000));
    const sign = (change = {}, accepted = {}) => handSignedPayment(chain, payer, requirements, change, accepted).then((payment) => paymentHeader(payment));
    const used = await sign();
    expect((await post(searchUrl, SEARCH_BODY, { "payment-signature": used })).status).toBe(202);

    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ["malformed base64", { "payment-signature": "%%%not-base64%%%" }, /malformed PAYMENT-SIGNATURE header: it must be the base64/],
      ["malformed JSON", { "x-payment": Buffer.from("{nope").toString("base64") }, /malformed X-PAYMENT header/],
      ["no authorization", { "payment-signature": Buffer.from(JSON.stringify({ x402Version: 2, accepted: requirements, payload: {} })).toString("base64") }, /payload.signature must be/],
      ["wrong signature", { "payment-signature": await sign({ signer: chain.accounts.payers[4]! }) }, /wrong signature/],
      ["wrong recipient", { "payment-signature": await sign({ to: chain.accounts.relayer.address }) }, /wrong recipient/],
      ["amount too low", { "payment-signature": await sign({ value: SEARCH_PRICE - 1n }) }, /amount too low/],
      // The exact scheme: more than the price is refused too, not kept. The message is loom's own (the facilitator's
      // names no figures): what the authorization pays and the price.
      ["amount too high", { "payment-signature": await sign({ value: SEARCH_PRICE + 1n }) }, /amount[^]*100001[^]*100000/],
      ["wrong asset", { "payment-signature": await sign({}, { asset: chain.accounts.deployer.address }) }, /wrong asset/],
      ["wrong chain", { "payment-signature": await sign({}, { network: "eip155:84532" }) }, /wrong chain/],
      ["expired", { "payment-signature": await sign({ validBefore: now - 1n }) }, /authorization expired/],
      ["not yet valid", { "payment-signature": await sign({ validAfter: now + 3600n }) }, /authorization not yet valid/],
      ["payer without balance", { "payment-signature": paymentHeader(await handSignedPayment(chain, chain.accounts.broke, requirements)) }, /payer without balance/],
    ];
    const [payeeBefore, payerBefore] = [await chain.balanceOf(chain.accounts.payTo.address), await chain.balanceOf(payer.address)];
    const paymentsBefore = (await server.platform.stores.payments.list({ limit: 1000 })).length;
    for (const [name, headers, error] of cases) {
      const response = await post(searchUrl, SEARCH_BODY, headers);
      const body = await response.json() as any;
      expect({ name, status: response.status, error: body.error }).toEqual({ name, status: 402, error: expect.stringMatching(error) });
      expect(body.accepts).toHaveLength(1);
      expect(offerOf(response).error).toBe(body.error);
    }
    // The paid authorization for another request: refused, and it says how to get the run it paid for.
    const replay = await post(searchUrl, { instructions: "Something else entirely?" }, { "payment-signature": used });
    expect({ status: replay.status, error: (await replay.json() as any).error }).toEqual({ status: 402, error: "payment already used: this authorization paid for another request; to get that run, retry with the same body and payment header" });
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore);
    expect(await chain.balanceOf(payer.address)).toBe(payerBefore);
    expect((await server.platform.stores.payments.list({ limit: 1000 })).length).toBe(paymentsBefore);
  });

  it("a client that paid but lost the answer gets its run by sending the same request again (no payment identifier)", async () => {
    const payer = chain.accounts.payers[3]!;
    const header = { "payment-signature": paymentHeader(await officialPayment(payer, offer)) };
    const payeeBefore = await chain.balanceOf(chain.accounts.payTo.address);
    const first = await post(searchUrl, SEARCH_BODY, header);
    expect(first.status).toBe(202);
    const created = await first.json() as any;
    for (let retry = 0; retry < 2; retry++) {
      const again = await post(searchUrl, SEARCH_BODY, header);
      expect(again.status).toBe(202);
      expect(await again.json()).toEqual(created);
      expect(again.headers.get("payment-response")).toBe(first.headers.get("payment-response"));
    }
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE);
  });

  it("two payments valid at verification from a payer whose balance covers one: one run, one 402, one transfer broadcast", async () => {
    await twoPaymentsForOne(server, chain.accounts.broke);
  });

  it("20 concurrent submissions of one payment make exactly one run and one charge, and each gets that run", async () => {
    const payer = chain.accounts.payers[4]!;
    const header = paymentHeader(await officialPayment(payer, offer));
    const payeeBefore = await chain.balanceOf(chain.accounts.payTo.address);
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(searchUrl, SEARCH_BODY, { "payment-signature": header })));
    const bodies = await Promise.all(responses.map((response) => response.json() as Promise<any>));
    // The same payment for the same request: each submission is a retry of the one that settled it.
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(202));
    expect(new Set(bodies.map((body) => body.runId)).size).toBe(1);
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE);
  });

  it("a duplicate verified only after the first one's transfer landed (the chain says used) gets the first one's run", async () => {
    const header = { "payment-signature": paymentHeader(await officialPayment(chain.accounts.payers[0]!, offer)) };
    // The second verification's simulation of the transfer waits until the first request's transfer is sent.
    const simulation = toFunctionSelector("transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)");
    let simulations = 0;
    let sent!: () => void;
    const transferSent = new Promise<void>((resolve) => (sent = resolve));
    chain.setIntercept(async (call, forward) => {
      const data = (call.params as Array<{ data?: string }> | undefined)?.[0]?.data ?? "";
      if (call.method === "eth_call" && data.startsWith(simulation) && ++simulations === 2) await transferSent;
      if (call.method !== "eth_sendRawTransaction") return forward();
      const result = await forward();
      sent();
      return result;
    });
    try {
      const responses = await Promise.all([post(searchUrl, SEARCH_BODY, header), post(searchUrl, SEARCH_BODY, header)]);
      const bodies = await Promise.all(responses.map((response) => response.json() as Promise<any>));
      expect(responses.map((response) => response.status)).toEqual([202, 202]);
      expect(bodies[1].runId).toBe(bodies[0].runId);
      expect(simulations).toBeGreaterThanOrEqual(2);
    } finally {
      chain.setIntercept(undefined);
    }
  });

  it("honours payment-identifier: the same payment again returns the same run, a different payment under it is a 409", async () => {
    const payer = chain.accounts.payers[5]!;
    const id = generatePaymentId("loomtest_");
    // As a client using the extension does: the offer's declaration, with the id filled in.
    const withId = () => appendPaymentIdentifierToExtensions(structuredClone(offer.extensions ?? {}), id);
    const payment = await officialPayment(payer, offer, withId());
    const header = { "payment-signature": paymentHeader(payment) };
    const payeeBefore = await chain.balanceOf(chain.accounts.payTo.address);
    const first = await post(searchUrl, SEARCH_BODY, header);
    expect(first.status).toBe(202);
    const { runId } = await first.json() as any;
    const again = await post(searchUrl, SEARCH_BODY, header);
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual({ runId, status: "queued" });
    expect(again.headers.get("payment-response")).toBe(first.headers.get("payment-response"));
    const other = await officialPayment(payer, offer, withId());
    const conflict = await post(searchUrl, SEARCH_BODY, { "payment-signature": paymentHeader(other) });
    expect(conflict.status).toBe(409);
    expect((await conflict.json() as any).error).toMatch(/different payment/);
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE);
  });

  it("a paid run with output.callbackUrl is called back, signed with the service-wide webhook secret", async () => {
    const receiver = await startWebhookReceiver(() => serviceWebhookSecret(server.platform.database));
    try {
      const body = { ...RUN_BODY, output: { callbackUrl: receiver.url } };
      const response = await post(runUrl, body, {}, v2PayingFetch(chain.accounts.payers[0]!));
      expect(response.status).toBe(202);
      const { runId } = await response.json() as any;
      const done = await pollUntilDone(server, `/v1/machines/runs/${runId}`);
      const until = Date.now() + 10_000;
      while (receiver.received.length < 1 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]!.verifyError).toBeUndefined();
      expect(receiver.received[0]!.verified).toMatchObject({ runId, status: done.status });
    } finally {
      await receiver.close();
    }
  });

  it("polls are free and unknown ids are 404", async () => {
    for (const path of ["/v1/machines/runs/run_00000000000000000000000000000000", "/v1/machines/searches/nope"]) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(404);
    }
    // A malformed nonce is refused before anything else sees it.
    const bent = await handSignedPayment(chain, chain.accounts.payers[0]!, offer.accepts[0]!, { nonce: generatePrivateKey() });
    (bent.payload.authorization as Record<string, string>).nonce = "0x1234";
    const response = await post(searchUrl, SEARCH_BODY, { "payment-signature": paymentHeader(bent) });
    expect(response.status).toBe(402);
    expect((await response.json() as any).error).toMatch(/authorization.nonce must be 32 bytes/);
  });
});

describe("machine endpoints, facilitator settlement (PGlite, local chain, in-process facilitator)", () => {
  let server: RunsServer;
  beforeAll(async () => {
    ({ server } = await startPaidServer("facilitator"));
  }, 60_000);
  afterAll(async () => server?.close());

  it("both official clients pay through the facilitator; balances move by exactly the prices", async () => {
    const payeeBefore = await chain.balanceOf(chain.accounts.payTo.address);
    const settledBefore = facilitator.counts.settle;
    const search = await post(`${server.url}/v1/machines/searches`, SEARCH_BODY, {}, v2PayingFetch(chain.accounts.payers[0]!));
    expect(search.status).toBe(202);
    const run = await post(`${server.url}/v1/machines/runs`, RUN_BODY, {}, v1PayingFetch(chain, chain.accounts.payers[0]!, RUN_PRICE));
    expect(run.status).toBe(202);
    expect(decodeXPaymentResponse(run.headers.get("x-payment-response")!)).toMatchObject({ success: true, network: "base" });
    expect(facilitator.counts.settle - settledBefore).toBe(2);
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE + RUN_PRICE);
  });

  it("refuses an authorization for more or less than the price in both x402 versions, before asking the facilitator, and charges nothing", async () => {
    const searchUrl = `${server.url}/v1/machines/searches`;
    const requirements = offerOf(await post(searchUrl, SEARCH_BODY)).accepts[0]!;
    const payer = chain.accounts.payers[1]!;
    const v2 = async (value: bigint) => ({ "payment-signature": paymentHeader(await handSignedPayment(chain, payer, requirements, { value })) });
    // The same signed authorization in x402 v1's shape (scheme and network beside the payload, network by v1 name).
    const v1 = async (value: bigint) => {
      const { payload } = await handSignedPayment(chain, payer, requirements, { value });
      return { "x-payment": Buffer.from(JSON.stringify({ x402Version: 1, scheme: "exact", network: "base", payload })).toString("base64") };
    };
    const [payeeBefore, payerBefore] = [await chain.balanceOf(chain.accounts.payTo.address), await chain.balanceOf(payer.address)];
    const [verifiedBefore, settledBefore] = [facilitator.counts.verify, facilitator.counts.settle];
    const paymentsBefore = (await server.platform.stores.payments.list({ limit: 1000 })).length;
    // The price is 100,000 smallest units (0.10 USD): one unit over, twice the price, one unit under.
    for (const value of [SEARCH_PRICE + 1n, 2n * SEARCH_PRICE, SEARCH_PRICE - 1n]) {
      for (const [version, headers] of [["v2", await v2(value)], ["v1", await v1(value)]] as const) {
        const response = await post(searchUrl, SEARCH_BODY, headers);
        const body = await response.json() as any;
        // Each refusal names what the authorization pays and the price.
        expect({ version, value, status: response.status, error: body.error }).toEqual({ version, value, status: 402, error: expect.stringMatching(new RegExp(`amount[^]*${value}[^]*${SEARCH_PRICE}`)) });
      }
    }
    // Refused by loom's own check: the facilitator was never asked to verify, let alone settle.
    expect([facilitator.counts.verify, facilitator.counts.settle]).toEqual([verifiedBefore, settledBefore]);
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore);
    expect(await chain.balanceOf(payer.address)).toBe(payerBefore);
    expect((await server.platform.stores.payments.list({ limit: 1000 })).length).toBe(paymentsBefore);
  });

  it("two payments valid at verification from a payer whose balance covers one: one run, one 402, one transfer broadcast", async () => {
    const settledBefore = facilitator.counts.settle;
    await twoPaymentsForOne(server, chain.accounts.broke);
    // The facilitator was asked to settle only the payment that could go through.
    expect(facilitator.counts.settle - settledBefore).toBe(1);
  });

  it("a facilitator that cannot be reached is a 503 with Retry-After in both x402 versions: nothing charged, try again", async () => {
    const gone = await startFacilitatorServer(chain);
    const payments = resolvePaymentsConfig(localChainPayments(chain, { mode: "facilitator", url: gone.url }, 20));
    const unreachable = await startRunsServer(PGLITE, { runs: { tools }, payments });
    try {
      const searchUrl = `${unreachable.url}/v1/machines/searches`;
      const requirements = offerOf(await post(searchUrl, SEARCH_BODY)).accepts[0]!;
      await gone.close();
      const payer = chain.accounts.payers[1]!;
      const v2 = paymentHeader(await handSignedPayment(chain, payer, requirements));
      const { payload } = await handSignedPayment(chain, payer, requirements);
      const v1 = Buffer.from(JSON.stringify({ x402Version: 1, scheme: "exact", network: "base", payload })).toString("base64");
      for (const [version, headers] of [["v2", { "payment-signature": v2 }], ["v1", { "x-payment": v1 }]] as const) {
        const response = await post(searchUrl, SEARCH_BODY, headers);
        const answer = { version, status: response.status, retryAfter: response.headers.get("retry-after"), error: (await response.json() as any).error };
        expect(answer).toEqual({ version, status: 503, retryAfter: "5", error: expect.stringMatching(/could not be verified now.*retry$/) });
      }
    } finally {
      await unreachable.close();
    }
  });
});

describe("machine endpoints when settlement times out (direct, PGlite, local chain)", () => {
  let server: RunsServer;
  let searchUrl: string;
  beforeAll(async () => {
    // Settlement may take 2 s; the reconciler looks every 200 ms.
    server = await startRunsServer(PGLITE, { runs: { tools }, payments: settingsFor("direct", 2), machines: { reconcileEveryMs: 200 } });
    searchUrl = `${server.url}/v1/machines/searches`;
  }, 60_000);
  afterAll(async () => {
    chain.setIntercept(undefined);
    await server?.close();
  });

  it("a transfer mined before the timeout was noticed is a settled payment: 202 and the run", async () => {
    const offer = offerOf(await post(searchUrl, SEARCH_BODY));
    const payeeBefore = await chain.balanceOf(chain.accounts.payTo.address);
    // The transfer is mined at once; its answer comes after the settlement's timeout.
    chain.setIntercept(async (call, forward) => {
      const result = await forward();
      if (call.method === "eth_sendRawTransaction") await new Promise((resolve) => setTimeout(resolve, 3000));
      return result;
    });
    const response = await post(searchUrl, SEARCH_BODY, { "payment-signature": paymentHeader(await officialPayment(chain.accounts.payers[1]!, offer)) });
    chain.setIntercept(undefined);
    expect(response.status).toBe(202);
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE);
  }, 30_000);

  it("a transfer still in flight when settlement times out: 503 with the run's id, and the run once it lands", async () => {
    const offer = offerOf(await post(searchUrl, SEARCH_BODY));
    const payeeBefore = await chain.balanceOf(chain.accounts.payTo.address);
    // The transfer reaches the chain 4 s after it was sent: after loom gave up waiting, before it expires.
    let landed!: Promise<unknown>;
    chain.setIntercept(async (call, forward) => {
      if (call.method !== "eth_sendRawTransaction") return forward();
      landed = new Promise((resolve) => setTimeout(resolve, 4000)).then(() => forward());
      return landed;
    });
    const header = { "payment-signature": paymentHeader(await officialPayment(chain.accounts.payers[2]!, offer)) };
    const response = await post(searchUrl, SEARCH_BODY, header);
    const body = await response.json() as any;
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(body).toEqual({ error: expect.stringMatching(/not known yet/), runId: expect.stringMatching(/^run_/) });
    expect((await fetch(`${server.url}/v1/machines/searches/${body.runId}`)).status).toBe(404);
    // The client retries the same request while the payment is still settling: it waits for the outcome and gets
    // the run the 503 named (the transfer lands, and the reconciler records it).
    const retried = await post(searchUrl, SEARCH_BODY, header);
    expect(retried.status).toBe(202);
    expect(await retried.json()).toEqual({ runId: body.runId, status: "queued" });
    await landed;
    chain.setIntercept(undefined);
    const until = Date.now() + 15_000;
    while ((await fetch(`${server.url}/v1/machines/searches/${body.runId}`)).status === 404) {
      if (Date.now() > until) throw new Error("the landed payment's run was not created");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE);
    const [payment] = (await server.platform.stores.payments.list()).filter((listed) => listed.runId === body.runId);
    expect(payment).toMatchObject({ status: "settled", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  }, 40_000);

  it("a retry while the payment is still settling past the 10 s wait: 503 with Retry-After 1 and the run's id, then the run", async () => {
    const offer = offerOf(await post(searchUrl, SEARCH_BODY));
    // The transfer is held back, and from then on the chain cannot be read: nobody can tell the outcome.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let blind = false;
    let landed: Promise<unknown> | undefined;
    chain.setIntercept(async (call, forward) => {
      if (call.method === "eth_sendRawTransaction" && !landed) {
        blind = true;
        landed = released.then(() => forward());
        return landed;
      }
      if (blind && call.method === "eth_call") throw Object.assign(new Error("the endpoint is down (test)"), { code: -32603 });
      return forward();
    });
    try {
      const header = { "payment-signature": paymentHeader(await officialPayment(chain.accounts.payers[3]!, offer)) };
      const first = await post(searchUrl, SEARCH_BODY, header);
      expect(first.status).toBe(503);
      const { runId } = await first.json() as any;
      const retried = await post(searchUrl, SEARCH_BODY, header);
      expect({ status: retried.status, retryAfter: retried.headers.get("retry-after") }).toEqual({ status: 503, retryAfter: "1" });
      expect(await retried.json()).toEqual({ error: expect.stringMatching(/still being settled.*run_/), runId });
      release();
      await landed;
      blind = false;
      const after = await post(searchUrl, SEARCH_BODY, header);
      expect(after.status).toBe(202);
      expect(await after.json()).toEqual({ runId, status: "queued" });
    } finally {
      release();
      chain.setIntercept(undefined);
    }
  }, 60_000);
});

describe.skipIf(skipOutsideCi(POSTGRES.reason))(titled("machine endpoints, two loom servers on one PostgreSQL", POSTGRES.reason), () => {
  it("20 concurrent submissions of one payment, split across both servers, make exactly one run and one charge", async () => {
    failIfMissing(POSTGRES.reason);
    const database = await freshPlatform(POSTGRES);
    const servers: RunsServer[] = [];
    try {
      for (let i = 0; i < 2; i++) servers.push((await startPaidServer("facilitator", POSTGRES, database)).server);
      const url = (i: number) => `${servers[i % 2]!.url}/v1/machines/searches`;
      const offer = offerOf(await post(url(0), SEARCH_BODY));
      const header = { "payment-signature": paymentHeader(await officialPayment(chain.accounts.payers[0]!, offer)) };
      const payeeBefore = await chain.balanceOf(chain.accounts.payTo.address);
      const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => post(url(i), SEARCH_BODY, header)));
      expect(responses.map((response) => response.status)).toEqual(Array(20).fill(202));
      expect(new Set(await Promise.all(responses.map(async (response) => (await response.json() as any).runId))).size).toBe(1);
      expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + SEARCH_PRICE);
      const listed = await servers[0]!.platform.stores.payments.list();
      expect(listed.filter((payment) => payment.status === "settled")).toHaveLength(1);
    } finally {
      for (const server of servers) await server.close();
      await database.remove();
    }
  }, 60_000);
});

describe("machine endpoints without a payment configuration", () => {
  it("answer 503 saying they are off, never free", async () => {
    const server = await startRunsServer(PGLITE, { runs: { tools } });
    try {
      for (const path of ["/v1/machines/searches", "/v1/machines/runs"]) {
        const response = await post(`${server.url}${path}`, SEARCH_BODY);
        expect(response.status).toBe(503);
        expect((await response.json() as any).error).toMatch(/machine endpoints are off/);
      }
    } finally {
      await server.close();
    }
  });
});
