// What the chain says about one EIP-3009 authorization: the truth the reconciler finishes a payment from when the
// process that settled it died. An authorization's nonce is used at most once on the token, and its signature binds
// payer, recipient and amount, so "used" means the payment to us happened (or the payer cancelled it, which the
// token's AuthorizationCanceled event tells apart). "Used" alone proves nothing: a cancelled authorization reads
// "used" too, and the payer may have signed another authorization under the same nonce; only the AuthorizationUsed
// event, in a transaction that transferred the amount from the payer to the payee, is proof of payment.
import { createPublicClient, http, parseAbi, parseAbiItem, parseEventLogs, type PublicClient } from "viem";

const EIP3009_ABI = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function balanceOf(address account) view returns (uint256)",
]);
const AUTHORIZATION_USED = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");
const AUTHORIZATION_CANCELED = parseAbiItem("event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)");
const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

/**
 * How far back the events of an authorization are looked for (Base makes a block every 2 s: about 5.5 hours; a crashed
 * settlement is reconciled within minutes). Public RPC endpoints refuse much wider log ranges.
 */
const LOG_LOOKBACK_BLOCKS = 10_000n;

/** An authorization's state on chain. */
export type AuthorizationState =
  | { state: "unused" }
  /** Used, and proven paid: `transaction` emitted its AuthorizationUsed event and transferred the amount to the payee. */
  | { state: "used"; transaction: string }
  /** Cancelled by its payer, or used by a transaction that paid someone else (the nonce signed twice): never paid. */
  | { state: "canceled"; why: string }
  /**
   * Used, without proof of payment: no event in the lookback, or an endpoint that refused the log search. Never
   * treated as paid: a cancelled authorization reads the same.
   */
  | { state: "unproven"; why: string };

/** Which authorization to read, and what paying it means. */
export interface AuthorizationQuery {
  payer: `0x${string}`;
  nonce: `0x${string}`;
  /** The payee and amount a transfer must carry to count as this payment. */
  payTo: string;
  amount: bigint;
  /** Reads the state at this block or later (a receipt's block): a lagging endpoint then fails instead of saying "unused". */
  atBlock?: bigint;
}

/** What a transaction's receipt says, when it has one. */
export interface ReceiptState {
  reverted: boolean;
  blockNumber: bigint;
}

/** Reads authorizations' states from the token through an RPC endpoint. */
export class ChainState {
  private readonly client: PublicClient;

  constructor(rpcUrl: string, private readonly token: `0x${string}`, timeoutMs = 10_000) {
    this.client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs }) });
  }

  /** Whether the authorization was used, and whether that paid the payee (with the proof). @throws when the RPC fails. */
  async authorization(query: AuthorizationQuery): Promise<AuthorizationState> {
    const { payer, nonce, atBlock } = query;
    const used = await this.client.readContract({
      address: this.token, abi: EIP3009_ABI, functionName: "authorizationState", args: [payer, nonce], ...(atBlock === undefined ? {} : { blockNumber: atBlock }),
    });
    if (!used) return { state: "unused" };
    try {
      const latest = await this.client.getBlockNumber();
      const toBlock = atBlock !== undefined && atBlock > latest ? atBlock : latest;
      const fromBlock = toBlock > LOG_LOOKBACK_BLOCKS ? toBlock - LOG_LOOKBACK_BLOCKS : 0n;
      const args = { authorizer: payer, nonce };
      const [transfer] = await this.client.getLogs({ address: this.token, event: AUTHORIZATION_USED, args, fromBlock, toBlock });
      if (transfer) return this.paid(query, transfer.transactionHash);
      const [canceled] = await this.client.getLogs({ address: this.token, event: AUTHORIZATION_CANCELED, args, fromBlock, toBlock });
      if (canceled) return { state: "canceled", why: "the payer cancelled the authorization" };
      return { state: "unproven", why: `used on chain, but no AuthorizationUsed event in the last ${LOG_LOOKBACK_BLOCKS} blocks` };
    } catch (error) {
      return { state: "unproven", why: `used on chain, but its events could not be read (${error instanceof Error ? error.message.split("\n")[0] : String(error)})` };
    }
  }

  /** Whether `transaction`, which used the authorization, transferred the amount from the payer to the payee. */
  private async paid(query: AuthorizationQuery, transaction: `0x${string}`): Promise<AuthorizationState> {
    const receipt = await this.client.getTransactionReceipt({ hash: transaction });
    const transfers = parseEventLogs({ abi: [TRANSFER], logs: receipt.logs.filter((log) => log.address.toLowerCase() === this.token.toLowerCase()) });
    const toPayee = transfers.some(({ args }) => args.from.toLowerCase() === query.payer.toLowerCase() && args.to.toLowerCase() === query.payTo.toLowerCase() && args.value === query.amount);
    return toPayee ? { state: "used", transaction } : { state: "canceled", why: `the authorization's nonce was used by transaction ${transaction}, which did not pay this payment's payee its amount` };
  }

  /** How many of the token's smallest units `payer` holds. @throws when the RPC fails. */
  async balance(payer: `0x${string}`): Promise<bigint> {
    return this.client.readContract({ address: this.token, abi: EIP3009_ABI, functionName: "balanceOf", args: [payer] });
  }

  /**
   * The receipt of `transaction`: whether it was mined and reverted (the chain's own word that a transfer failed,
   * which no later block changes), and its block. Undefined when it is not mined (yet) or the endpoint cannot say.
   */
  async receipt(transaction: string): Promise<ReceiptState | undefined> {
    try {
      const receipt = await this.client.getTransactionReceipt({ hash: transaction as `0x${string}` });
      return { reverted: receipt.status === "reverted", blockNumber: receipt.blockNumber };
    } catch {
      return undefined;
    }
  }
}
