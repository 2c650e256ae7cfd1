// The config file's `payments` for the local chain (tests and the payments benchmark): its token as the asset, its
// payTo account as the payee, and settlement in either mode through its RPC bridge.
import type { LocalChain } from "./local-chain.js";
import { TOKEN_NAME, TOKEN_VERSION } from "./local-chain.js";

/** How the local chain's payments settle: loom's relayer (the chain's `relayer` account), or a facilitator at `url`. */
export type LocalSettlement = { mode: "direct" } | { mode: "facilitator"; url: string };

/**
 * A raw `payments` object (as written in loom.json) on `chain`, settling as `settlement` within `timeoutSeconds`.
 * resolvePaymentsConfig turns it into the server's settings.
 */
export function localChainPayments(chain: Pick<LocalChain, "rpcUrl" | "token" | "accounts">, settlement: LocalSettlement, timeoutSeconds: number): Record<string, unknown> {
  return {
    payTo: chain.accounts.payTo.address,
    network: "base",
    asset: { address: chain.token, name: TOKEN_NAME, version: TOKEN_VERSION, decimals: 6 },
    settlement: settlement.mode === "direct"
      ? { mode: "direct", rpcUrl: chain.rpcUrl, relayerKey: chain.accounts.relayer.privateKey, timeoutSeconds }
      : { mode: "facilitator", url: settlement.url, rpcUrl: chain.rpcUrl, timeoutSeconds },
  };
}
