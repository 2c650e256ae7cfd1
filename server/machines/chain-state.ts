// What the chain says about one EIP-3009 authorization: the truth the reconciler finishes a payment from when the
// process that settled it died. An authorization's nonce is used at most once on the token, and its signature binds
// payer, recipient and amount, so "used" means the payment to us happened (or the payer cancelled it, which the
// token's AuthorizationCanceled event tells apart).
import { createPublicClient, http, parseAbi, parseAbiItem, type PublicClient } from "viem";

const EIP3009_ABI = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function balanceOf(address account) view returns (uint256)",
]);
const AUTHORIZATION_USED = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");
const AUTHORIZATION_CANCELED = parseAbiItem("event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)");

/**
 * How far back the events of an authorization are looked for (Base makes a block every 2 s: about 5.5 hours; a crashed
 * settlement is reconciled within minutes). Public RPC endpoints refuse much wider log ranges.
 */
const LOG_LOOKBACK_BLOCKS = 10_000n;

/** An authorization's state on chain. */
export type AuthorizationState =
  | { state: "unused" }
  /** Used: transferred to the payee in `transaction` (undefined when its event was not found in the lookback). */
  | { state: "used"; transaction?: string }
  | { state: "canceled" };

/** Reads authorizations' states from the token through an RPC endpoint. */
export class ChainState {
  private readonly client: PublicClient;

  constructor(rpcUrl: string, private readonly token: `0x${string}`, timeoutMs = 10_000) {
    this.client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs }) });
  }

  /** Whether `payer`'s authorization `nonce` was used, and in which transaction. @throws when the RPC fails. */
  async authorization(payer: `0x${string}`, nonce: `0x${string}`): Promise<AuthorizationState> {
    const used = await this.client.readContract({ address: this.token, abi: EIP3009_ABI, functionName: "authorizationState", args: [payer, nonce] });
    if (!used) return { state: "unused" };
    try {
      const latest = await this.client.getBlockNumber();
      const fromBlock = latest > LOG_LOOKBACK_BLOCKS ? latest - LOG_LOOKBACK_BLOCKS : 0n;
      const args = { authorizer: payer, nonce };
      const [transfer] = await this.client.getLogs({ address: this.token, event: AUTHORIZATION_USED, args, fromBlock, toBlock: latest });
      if (transfer) return { state: "used", transaction: transfer.transactionHash };
      const [canceled] = await this.client.getLogs({ address: this.token, event: AUTHORIZATION_CANCELED, args, fromBlock, toBlock: latest });
      return canceled ? { state: "canceled" } : { state: "used" };
    } catch {
      // An endpoint that will not search logs still said "used": the payment happened, its hash is unknown.
      return { state: "used" };
    }
  }

  /** How many of the token's smallest units `payer` holds. @throws when the RPC fails. */
  async balance(payer: `0x${string}`): Promise<bigint> {
    return this.client.readContract({ address: this.token, abi: EIP3009_ABI, functionName: "balanceOf", args: [payer] });
  }

  /**
   * Whether `transaction` was mined and reverted: the chain's own word that a transfer failed, which no later block
   * changes. False when it succeeded, is not mined (yet), or the endpoint cannot say.
   */
  async reverted(transaction: string): Promise<boolean> {
    try {
      const receipt = await this.client.getTransactionReceipt({ hash: transaction as `0x${string}` });
      return receipt.status === "reverted";
    } catch {
      return false;
    }
  }
}
