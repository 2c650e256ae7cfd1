// The machine endpoints' failures behind secret-bearing URLs: an RPC endpoint with its API key in the path (as Alchemy,
// Infura and QuickNode put it) and a facilitator with one. Anyone can provoke these without paying (three
// authorizations from a payer whose balance covers one, a slow or rate-limiting chain, a facilitator that fails), so
// every 402, 503 and header they answer is checked for the keys and the endpoints' host:port, and the log for the
// keys; the details go to the log, redacted.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { TEST_BACKENDS } from "../platform/testing/test-databases.js";
import { fixedTools as tools } from "../runs/testing/fixed-tools.js";
import { type RunsServer, startRunsServer } from "../runs/testing/runs-server.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { type ReadResponse, readResponse, secretsShown } from "../testing/secrets.js";
import { resolvePaymentsConfig } from "./payments-config.js";
import { type FacilitatorServer, startFacilitatorServer } from "./testing/facilitator-server.js";
import { type ChainAccount, type LocalChain, startLocalChain } from "./testing/local-chain.js";
import { type LocalSettlement, localChainPayments } from "./testing/local-payments.js";
import { handSignedPayment, offerOf, paymentHeader } from "./testing/paying-clients.js";

const PGLITE = TEST_BACKENDS.find((backend) => backend.name === "PGlite")!;
const RPC_KEY = "SECRET-RPC-KEY";
const FACILITATOR_KEY = "SECRET-FACILITATOR-KEY";
const SEARCH_PRICE = 100_000n;
const SEARCH_BODY = { instructions: "How does loom keep its KV cache?" };

let chain: LocalChain;
/** The chain's RPC endpoint with the key in its path, as a hosted one is configured. */
let secretRpcUrl: string;
/** What no response may show: the keys, and the host:port of every endpoint behind loom. */
const secrets: string[] = [RPC_KEY, FACILITATOR_KEY];
/** Everything written to stderr in this file (the log). */
const logged: string[] = [];

beforeAll(async () => {
  // Each payer holds exactly one search's price: the second authorization of a payer cannot be paid.
  chain = await startLocalChain({ payers: 16, payerUsdc: SEARCH_PRICE });
  secretRpcUrl = `${chain.rpcUrl}/v2/${RPC_KEY}`;
  secrets.push(new URL(chain.rpcUrl).host);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    logged.push(String(chunk));
    return true;
  });
}, 60_000);
afterAll(async () => {
  vi.restoreAllMocks();
  await chain?.close();
});
afterEach(() => {
  chain.setIntercept(undefined);
});

let nextPayer = 0;
/** A payer no other test has used (each holds one search's price). */
function freshPayer(): ChainAccount {
  return chain.accounts.payers[nextPayer++]!;
}

function settingsFor(settlement: LocalSettlement, rpcUrl: string, timeoutSeconds: number) {
  return resolvePaymentsConfig(localChainPayments({ ...chain, rpcUrl }, settlement, timeoutSeconds));
}

function post(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(SEARCH_BODY) });
}

/** Reads a response whole and fails if its body or a header (base64 ones decoded) shows a secret. */
async function checked(response: Response): Promise<ReadResponse> {
  const read = await readResponse(response);
  expect(secretsShown(read, secrets), `${response.status} ${read.text}`).toEqual([]);
  return read;
}

/** The x402 v1 X-PAYMENT header of a hand-signed payment (same authorization, v1's envelope). */
function v1Header(payment: PaymentPayload): string {
  return Buffer.from(JSON.stringify({ x402Version: 1, scheme: "exact", network: "base", payload: payment.payload })).toString("base64");
}

/** Three authorizations from one payer whose balance covers one, in both x402 generations, at once. */
async function overdraw(url: string, offer: PaymentRequired, version: 1 | 2): Promise<ReadResponse[]> {
  const payer = freshPayer();
  const payments = await Promise.all([0, 1, 2].map(() => handSignedPayment(chain, payer, offer.accepts[0]!)));
  const headers = payments.map((payment) => (version === 2 ? { "payment-signature": paymentHeader(payment) } : { "x-payment": v1Header(payment) }));
  return Promise.all(headers.map(async (header) => checked(await post(url, header))));
}

describe("direct settlement through an RPC endpoint with its key in the path", () => {
  let server: RunsServer;
  let searchUrl: string;
  let offer: PaymentRequired;
  beforeAll(async () => {
    server = await startRunsServer(PGLITE, { runs: { tools }, payments: settingsFor({ mode: "direct" }, secretRpcUrl, 2), machines: { reconcileEveryMs: 200 } });
    searchUrl = `${server.url}/v1/machines/searches`;
    offer = offerOf(await post(searchUrl));
  }, 60_000);
  afterAll(async () => server?.close());

  it("a chain slower than the settlement timeout: 503 with the run id, without the key", async () => {
    let landed: Promise<unknown> | undefined;
    chain.setIntercept(async (call, forward) => {
      if (call.method !== "eth_sendRawTransaction") return forward();
      landed = new Promise((resolve) => setTimeout(resolve, 3000)).then(() => forward());
      return landed;
    });
    const payment = await handSignedPayment(chain, freshPayer(), offer.accepts[0]!);
    const answer = await checked(await post(searchUrl, { "payment-signature": paymentHeader(payment) }));
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ error: expect.stringMatching(/not known yet/), runId: expect.stringMatching(/^run_/) });
    await landed;
  }, 30_000);

  // Last: the transfers refused in the burst leave the relayer's nonces with a gap, so later settlements of this server stall.
  it("three authorizations from a payer whose balance covers one, in turn and at once: none of the refusals shows the key", async () => {
    // In turn: the later ones are refused at verification, before any settlement.
    for (const version of [2, 1] as const) {
      const payer = freshPayer();
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const payment = await handSignedPayment(chain, payer, offer.accepts[0]!);
        statuses.push((await checked(await post(searchUrl, version === 2 ? { "payment-signature": paymentHeader(payment) } : { "x-payment": v1Header(payment) }))).status);
      }
      expect(statuses, `x402 v${version}`).toEqual([202, 402, 402]);
    }
    // At once, as a hosted endpoint sees them: it takes the first transfer and rate-limits the burst behind it.
    let sendsLeft = 0;
    chain.setIntercept(async (call, forward) => {
      if (call.method === "eth_sendRawTransaction" && sendsLeft-- <= 0) throw Object.assign(new Error("Your app has exceeded its compute units per second capacity"), { code: 429 });
      return forward();
    });
    for (const version of [2, 1] as const) {
      sendsLeft = 1;
      const answers = await overdraw(searchUrl, offer, version);
      // At most one is paid (the one taken, when its nonce was the relayer's next); the rest are refused or pending.
      expect(answers.filter((answer) => answer.status === 202).length, `x402 v${version}`).toBeLessThanOrEqual(1);
      for (const answer of answers) expect([202, 402, 503]).toContain(answer.status);
    }
    chain.setIntercept(undefined);
  }, 60_000);
});

/** A facilitator in front of the test one that fails the calls `failing` names with a 500 quoting its RPC endpoint. */
async function startFailingFacilitator(real: FacilitatorServer): Promise<{ url: string; failing: Set<string>; close(): Promise<void> }> {
  const failing = new Set<string>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const path = (req.url ?? "").replace(`/${FACILITATOR_KEY}`, "");
      if (failing.has(path)) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: `HTTP request failed.\n\nURL: ${secretRpcUrl}\nRequest body: {"method":"eth_call"}` }));
        return;
      }
      const forwarded = await fetch(`${real.url}${path}`, { method: req.method ?? "GET", headers: { "content-type": "application/json" }, ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {}) });
      res.writeHead(forwarded.status, { "content-type": "application/json" });
      res.end(await forwarded.text());
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${FACILITATOR_KEY}`;
  return { url, failing, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

describe("facilitator settlement through a facilitator with its key in the path", () => {
  let facilitator: FacilitatorServer;
  let failing: Awaited<ReturnType<typeof startFailingFacilitator>>;
  let server: RunsServer;
  let searchUrl: string;
  let offer: PaymentRequired;
  beforeAll(async () => {
    // The facilitator settles through the keyed RPC endpoint too: its errors quote it.
    facilitator = await startFacilitatorServer({ ...chain, rpcUrl: secretRpcUrl });
    failing = await startFailingFacilitator(facilitator);
    secrets.push(new URL(failing.url).host, new URL(facilitator.url).host);
    server = await startRunsServer(PGLITE, { runs: { tools }, payments: settingsFor({ mode: "facilitator", url: failing.url }, secretRpcUrl, 5), machines: { reconcileEveryMs: 200 } });
    searchUrl = `${server.url}/v1/machines/searches`;
    offer = offerOf(await post(searchUrl));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await failing?.close();
    await facilitator?.close();
  });

  it("three authorizations from a payer whose balance covers one: one run, the others refused without the key", async () => {
    for (const version of [2, 1] as const) {
      const answers = await overdraw(searchUrl, offer, version);
      expect(answers.filter((answer) => answer.status === 202), `x402 v${version}`).toHaveLength(1);
      for (const other of answers.filter((answer) => answer.status !== 202)) expect([402, 503]).toContain(other.status);
    }
  }, 60_000);

  it("a facilitator that fails verification or settlement with its RPC endpoint in the error: 402 or 503 without it", async () => {
    for (const path of ["/verify", "/settle"]) {
      failing.failing.clear();
      failing.failing.add(path);
      for (const version of [2, 1] as const) {
        const payment = await handSignedPayment(chain, freshPayer(), offer.accepts[0]!);
        const answer = await checked(await post(searchUrl, version === 2 ? { "payment-signature": paymentHeader(payment) } : { "x-payment": v1Header(payment) }));
        expect([402, 503], `${path}, x402 v${version}: ${answer.text}`).toContain(answer.status);
      }
    }
    failing.failing.clear();
  }, 60_000);
});

describe("a facilitator that cannot answer what it supports", () => {
  it("answers 503 without its key, its address or what it said", async () => {
    const port = await closedLoopbackPort();
    secrets.push(`127.0.0.1:${port}`);
    const facilitator = await startFacilitatorServer({ ...chain, rpcUrl: secretRpcUrl });
    const failing = await startFailingFacilitator(facilitator);
    failing.failing.add("/supported");
    secrets.push(new URL(failing.url).host);
    try {
      // The failing one first: the log writes a kind of failure once in 10 s, and the test below reads its line.
      for (const url of [failing.url, `http://127.0.0.1:${port}/${FACILITATOR_KEY}`]) {
        const server = await startRunsServer(PGLITE, { runs: { tools }, payments: settingsFor({ mode: "facilitator", url }, secretRpcUrl, 5) });
        try {
          const payment = await handSignedPayment(chain, freshPayer(), { scheme: "exact", network: "eip155:8453", amount: String(SEARCH_PRICE), asset: chain.token, payTo: chain.accounts.payTo.address, maxTimeoutSeconds: 300, extra: {} });
          for (const headers of [{}, { "payment-signature": paymentHeader(payment) }]) {
            const answer = await checked(await post(`${server.url}/v1/machines/searches`, headers));
            expect(answer.status).toBe(503);
            expect(answer.body.error).toMatch(/facilitator/);
          }
        } finally {
          await server.close();
        }
      }
    } finally {
      await failing.close();
      await facilitator.close();
    }
  }, 60_000);
});

describe("the log", () => {
  it("has the details of those failures, with the keys redacted", () => {
    const log = logged.join("");
    expect(log).not.toContain(RPC_KEY);
    expect(log).not.toContain(FACILITATOR_KEY);
    // The endpoint is named (scheme, host and port), its path is not; what the facilitator said is there.
    expect(log).toContain(`${new URL(chain.rpcUrl).origin}/***`);
    expect(log).toMatch(/payments: a payment's settlement failed \(invalid_exact_evm_transaction_failed\): The request took too long/);
    expect(log).toMatch(/payments: the facilitator did not say what it supports \(answered 503\): .*caused by: Facilitator getSupported failed \(500\)/);
    expect(log).toMatch(/payments: a payment could not be verified \(answered 503\): Facilitator verify failed \(500\)/);
  });
});
