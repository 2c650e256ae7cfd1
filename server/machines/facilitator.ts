// Who verifies and settles payments: a facilitator over its standard HTTP API (POST /verify, POST /settle, GET
// /supported), or, in direct mode, the official facilitator classes in this process, submitting
// `transferWithAuthorization` through the configured RPC endpoint with the relayer's key and waiting for the receipt.
import type { FacilitatorClient } from "@x402/core/server";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/facilitator";
import { type Chain, createWalletClient, defineChain, http, type HttpTransport, nonceManager, type PrivateKeyAccount, type PublicActions, publicActions, type WalletClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { PaymentNetwork, SettlementSettings } from "./payments-config.js";

/** A wallet client that can also read the chain (send, then wait for the receipt). */
export type RelayerClient = WalletClient<HttpTransport, Chain, PrivateKeyAccount> & PublicActions<HttpTransport, Chain, PrivateKeyAccount>;

/**
 * Direct mode's relayer: a viem wallet client (with public actions) that sends from `relayerKey` through `rpcUrl`.
 * Concurrent settlements share the relayer, so its nonces are handed out here, not read from the chain per
 * transaction; receipts are looked for every 250 ms (viem's default is 4 s; Base makes a block every 2 s).
 */
export function relayerClient(settlement: Extract<SettlementSettings, { mode: "direct" }>, network: PaymentNetwork): RelayerClient {
  const account = privateKeyToAccount(settlement.relayerKey, { nonceManager });
  const chain = defineChain({
    id: network.chainId,
    name: network.v1Name ?? network.caip2,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [settlement.rpcUrl] } },
  });
  return createWalletClient({ account, chain, pollingInterval: 250, transport: http(settlement.rpcUrl, { timeout: settlement.timeoutMs }) }).extend(publicActions);
}

/** The facilitator of the configured settlement mode, as the x402 resource server drives it. */
export function openFacilitator(settlement: SettlementSettings, network: PaymentNetwork): FacilitatorClient {
  if (settlement.mode === "facilitator") return new HTTPFacilitatorClient({ url: settlement.url, timeoutMs: settlement.timeoutMs });
  const client = relayerClient(settlement, network);
  // The signer reads the relayer's address from `address` (a viem wallet client keeps it under `account`).
  const signer = toFacilitatorEvmSigner(Object.assign(client, { address: client.account.address }) as unknown as Parameters<typeof toFacilitatorEvmSigner>[0], { confirmationTimeoutMs: settlement.timeoutMs });
  const facilitator = new x402Facilitator().register(network.caip2, new ExactEvmScheme(signer));
  if (network.v1Name !== undefined) facilitator.registerV1(network.v1Name as never, new ExactEvmSchemeV1(signer));
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as Awaited<ReturnType<FacilitatorClient["getSupported"]>>,
  };
}
