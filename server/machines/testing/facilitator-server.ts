// A facilitator for tests of facilitator mode: the standard facilitator HTTP API (POST /verify, POST /settle, GET
// /supported) on loopback, built from the official @x402/core facilitator and @x402/evm exact schemes (v2 and v1)
// settling on the local chain with its own relayer. A hook after each settlement lets a test act between the
// chain's transfer and the answer (kill the server that asked). Refusals are answered with 200 by default; hosted
// facilitators answer them with 400, which `refusalStatus` sets; `failing` names paths answered with a bare 500.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SettleResponse } from "@x402/core/types";
import { openFacilitator } from "../facilitator.js";
import { resolveNetwork } from "../payments-config.js";
import type { LocalChain } from "./local-chain.js";

/** A running test facilitator. */
export interface FacilitatorServer {
  url: string;
  /** Runs after each settlement, before it is answered. */
  afterSettle: ((result: SettleResponse) => Promise<void>) | undefined;
  /** Settlements asked for, and verifications. */
  counts: { verify: number; settle: number };
  /** The status of an answer that refuses (`isValid` or `success` false): 200 by default, 400 as hosted ones answer. */
  refusalStatus: number;
  /** Paths ("/verify", "/settle", "/supported") answered with a 500 and no facilitator answer, as a failing one does. */
  failing: Set<string>;
  close(): Promise<void>;
}

/** Starts a facilitator on `chain`, relaying with the chain's deployer account (the server under test has its own). */
export async function startFacilitatorServer(chain: LocalChain): Promise<FacilitatorServer> {
  const facilitator = openFacilitator({ mode: "direct", rpcUrl: chain.rpcUrl, relayerKey: chain.accounts.deployer.privateKey, timeoutMs: 30_000 }, resolveNetwork(`eip155:${chain.chainId}`));
  const state: FacilitatorServer = { url: "", afterSettle: undefined, counts: { verify: 0, settle: 0 }, refusalStatus: 200, failing: new Set(), close: async () => {} };
  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => json(res, 500, { error: (error as Error).message }));
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (state.failing.has(req.url ?? "")) return json(res, 500, { error: "the facilitator failed" });
    if (req.method === "GET" && req.url === "/supported") return json(res, 200, await facilitator.getSupported());
    if (req.method !== "POST" || (req.url !== "/verify" && req.url !== "/settle")) return json(res, 404, { error: "not found" });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { paymentPayload: never; paymentRequirements: never };
    if (req.url === "/verify") {
      state.counts.verify += 1;
      const verified = await facilitator.verify(body.paymentPayload, body.paymentRequirements);
      return json(res, verified.isValid ? 200 : state.refusalStatus, verified);
    }
    state.counts.settle += 1;
    const result = await facilitator.settle(body.paymentPayload, body.paymentRequirements);
    await state.afterSettle?.(result);
    return json(res, result.success ? 200 : state.refusalStatus, result);
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return state;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value)));
}
