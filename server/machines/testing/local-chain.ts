// An offline EVM chain for payment tests: ganache in-process, our own HTTP JSON-RPC bridge in front of it, a
// USDC-like EIP-3009 token, funded accounts, and Multicall3 where the x402 facilitator looks for it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import ganache from "ganache";
import {
  createPublicClient,
  createWalletClient,
  custom,
  defineChain,
  http,
  keccak256,
  stringToHex,
  type Abi,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { compileContracts } from "./compile-contracts.js";

/** Multicall3's canonical address, where @x402/evm's facilitator sends its diagnostic batch reads. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";
/** The token's EIP-712 domain name and version: USDC's on Base. */
export const TOKEN_NAME = "USD Coin";
export const TOKEN_VERSION = "2";
/** x402 v1's network name "base" maps to this chain id, so the chain must have it. */
export const BASE_CHAIN_ID = 8453;

/** A key pair the chain knows: ganache funds it with ETH at start. */
export interface ChainAccount {
  privateKey: Hex;
  address: Address;
}

export interface LocalChainAccounts {
  /** Deployed the token; the only account allowed to mint. */
  deployer: ChainAccount;
  /** Receives payments. Starts with no USDC. */
  payTo: ChainAccount;
  /** Submits transactions for others (the facilitator's key). */
  relayer: ChainAccount;
  /** Each holds `payerUsdc` token units. */
  payers: ChainAccount[];
  /** Has ETH but no USDC. */
  broke: ChainAccount;
}

/** One JSON-RPC call as the bridge received it. */
export interface RpcCall {
  method: string;
  params?: unknown;
}

/**
 * Sees each call that reaches the HTTP bridge. Return the result to answer with; call `forward` (optionally with a
 * changed call) to pass it on to the chain; throw to answer with an error (a numeric `code` on the error is kept).
 */
export type RpcIntercept = (call: RpcCall, forward: (call?: RpcCall) => Promise<unknown>) => Promise<unknown>;

export interface LocalChainOptions {
  /** Defaults to 8453 (Base). */
  chainId?: number;
  /** How many funded payers to create. Defaults to 4. */
  payers?: number;
  /** Token units minted to each payer (6 decimals). Defaults to 100 USDC = 100_000_000. */
  payerUsdc?: bigint;
  /** Largest request body the bridge accepts. Defaults to 1 MiB. */
  maxBodyBytes?: number;
}

export interface LocalChain {
  /** http://127.0.0.1:<port>, the bridge. */
  rpcUrl: string;
  chainId: number;
  /** A viem chain for this chain id and rpcUrl, with Multicall3 configured. */
  chain: Chain;
  /** The Eip3009Token ("USD Coin", version "2", 6 decimals). */
  token: Address;
  tokenAbi: Abi;
  accounts: LocalChainAccounts;
  /** A viem client over rpcUrl: it goes through the bridge and its intercept, as the code under test does. */
  publicClient: PublicClient;
  /** The token balance of `address`. Reads the chain directly, bypassing the bridge and its intercept. */
  balanceOf(address: Address): Promise<bigint>;
  /** Mints `amount` token units to `to` from the deployer and waits for the block. Bypasses the intercept. */
  mint(to: Address, amount: bigint): Promise<void>;
  /** Installs (or with undefined, removes) the hook that sees calls arriving over HTTP. */
  setIntercept(intercept: RpcIntercept | undefined): void;
  /** Stops the HTTP server and the ganache provider. Safe to call twice. */
  close(): Promise<void>;
}

interface GanacheProvider {
  request(call: { method: string; params?: unknown }): Promise<unknown>;
  disconnect(): Promise<void>;
}

const ETH_PER_ACCOUNT = 1000n * 10n ** 18n;

/**
 * Starts a fresh chain: ganache (instamine, chain id 8453 by default), the token deployed and minted to the payers,
 * Multicall3's runtime code at its canonical address, and an HTTP JSON-RPC bridge on 127.0.0.1. Call `close()`.
 */
export async function startLocalChain(options: LocalChainOptions = {}): Promise<LocalChain> {
  const chainId = options.chainId ?? BASE_CHAIN_ID;
  const accounts = makeAccounts(options.payers ?? 4);
  const everyone = [accounts.deployer, accounts.payTo, accounts.relayer, ...accounts.payers, accounts.broke];
  const contracts = await compileContracts();

  const provider = ganache.provider({
    chain: { chainId },
    wallet: { accounts: everyone.map((a) => ({ secretKey: a.privateKey, balance: `0x${ETH_PER_ACCOUNT.toString(16)}` })) },
    logging: { quiet: true },
    // Eager: a transaction is mined before eth_sendRawTransaction answers, so receipts exist at once.
    miner: { instamine: "eager" },
  }) as unknown as GanacheProvider;

  let bridge: RpcBridge | undefined;
  try {
    await provider.request({ method: "evm_setAccountCode", params: [MULTICALL3_ADDRESS, contracts.Multicall3.deployedBytecode] });
    bridge = await startRpcBridge(provider, options.maxBodyBytes ?? 1 << 20);
    const chain = localChainDefinition(chainId, bridge.url);
    // Fixture-internal traffic goes straight to ganache so that tests' intercepts see only their own calls.
    const direct = custom({ request: ({ method, params }) => requestGanache(provider, { method, params }) });
    const directPublic = createPublicClient({ chain, transport: direct, pollingInterval: 50 });
    const deployer = createWalletClient({ chain, transport: direct, account: privateKeyToAccount(accounts.deployer.privateKey) });
    const tokenAbi = contracts.Eip3009Token.abi;

    const deployHash = await deployer.deployContract({
      abi: tokenAbi,
      bytecode: contracts.Eip3009Token.bytecode,
      args: [TOKEN_NAME, "USDC", TOKEN_VERSION],
    });
    const deployed = await directPublic.getTransactionReceipt({ hash: deployHash });
    if (deployed.status !== "success" || !deployed.contractAddress) throw new Error("local-chain: token deployment failed");
    const token = deployed.contractAddress;

    // One deployer nonce at a time: concurrent mints would read the same pending nonce.
    let mintQueue: Promise<unknown> = Promise.resolve();
    const mint = (to: Address, amount: bigint): Promise<void> => {
      const next = mintQueue.then(async () => {
        const hash = await deployer.writeContract({ address: token, abi: tokenAbi, functionName: "mint", args: [to, amount] });
        const receipt = await directPublic.getTransactionReceipt({ hash });
        if (receipt.status !== "success") throw new Error(`local-chain: mint to ${to} reverted`);
      });
      mintQueue = next.catch(() => undefined);
      return next;
    };
    for (const payer of accounts.payers) await mint(payer.address, options.payerUsdc ?? 100_000_000n);

    const openBridge = bridge;
    let closed: Promise<void> | undefined;
    return {
      rpcUrl: bridge.url,
      chainId,
      chain,
      token,
      tokenAbi,
      accounts,
      publicClient: createPublicClient({ chain, transport: http(bridge.url), pollingInterval: 50 }),
      balanceOf: async (address) =>
        (await directPublic.readContract({ address: token, abi: tokenAbi, functionName: "balanceOf", args: [address] })) as bigint,
      mint,
      setIntercept: (intercept) => openBridge.setIntercept(intercept),
      close: () => (closed ??= Promise.all([openBridge.close(), provider.disconnect()]).then(() => undefined)),
    };
  } catch (error) {
    await Promise.allSettled([bridge?.close(), provider.disconnect()]);
    throw error;
  }
}

// Fixed keys derived from labels: the same addresses every run, and no key shared with ganache's well-known mnemonic.
function makeAccounts(payerCount: number): LocalChainAccounts {
  const account = (label: string): ChainAccount => {
    const privateKey = keccak256(stringToHex(`loom local-chain ${label}`));
    return { privateKey, address: privateKeyToAccount(privateKey).address };
  };
  return {
    deployer: account("deployer"),
    payTo: account("payTo"),
    relayer: account("relayer"),
    payers: Array.from({ length: payerCount }, (_, i) => account(`payer ${i}`)),
    broke: account("broke"),
  };
}

function localChainDefinition(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: `loom local chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  });
}

// ---- HTTP JSON-RPC bridge ----

interface RpcBridge {
  url: string;
  setIntercept(intercept: RpcIntercept | undefined): void;
  close(): Promise<void>;
}

interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

type JsonRpcResponse = { jsonrpc: "2.0"; id: unknown } & ({ result: unknown } | { error: JsonRpcError });

// ganache.server is not used: its bundled uWebSockets build may not load on newer Node versions. node:http always does.
async function startRpcBridge(provider: GanacheProvider, maxBodyBytes: number): Promise<RpcBridge> {
  let intercept: RpcIntercept | undefined;
  const forward = (call: RpcCall) => requestGanache(provider, call);

  const answerOne = async (message: unknown): Promise<JsonRpcResponse> => {
    const id = isRecord(message) && "id" in message ? message.id : null;
    if (!isRecord(message) || typeof message.method !== "string") {
      return { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid Request" } };
    }
    const call: RpcCall = { method: message.method, params: message.params };
    try {
      const result = intercept ? await intercept(call, (changed) => forward(changed ?? call)) : await forward(call);
      return { jsonrpc: "2.0", id, result: result ?? null };
    } catch (error) {
      return { jsonrpc: "2.0", id, error: toJsonRpcError(error) };
    }
  };

  const server: Server = createServer((request, response) => {
    void handleHttp(request, response, maxBodyBytes, async (body) => {
      if (Array.isArray(body)) {
        if (body.length === 0) return { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: empty batch" } };
        return Promise.all(body.map(answerOne));
      }
      return answerOne(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setIntercept: (next) => {
      intercept = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // viem keeps connections alive; without this close() would wait for them to idle out.
        server.closeAllConnections();
      }),
  };
}

async function handleHttp(
  request: IncomingMessage,
  response: ServerResponse,
  maxBodyBytes: number,
  answer: (body: unknown) => Promise<unknown>,
): Promise<void> {
  const send = (status: number, payload: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(payload));
  };
  if (request.method !== "POST") {
    send(405, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "JSON-RPC takes POST" } });
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBodyBytes) {
        response.setHeader("connection", "close");
        send(413, { jsonrpc: "2.0", id: null, error: { code: -32600, message: `request body over ${maxBodyBytes} bytes` } });
        request.destroy();
        return;
      }
      chunks.push(chunk);
    }
  } catch {
    return; // the client went away
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    send(200, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    return;
  }
  send(200, await answer(body));
}

/** An error shaped as JSON-RPC's: viem maps it by `code` (and reads revert data from `data`) as it would over HTTP. */
class JsonRpcFailure extends Error implements JsonRpcError {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

// Ganache throws codeless errors for unknown methods; viem retries those with backoff (a second lost per transaction
// on eth_fillTransaction) unless they carry -32601, after which it stops asking.
async function requestGanache(provider: GanacheProvider, call: RpcCall): Promise<unknown> {
  try {
    return await provider.request({ method: call.method, params: call.params ?? [] });
  } catch (error) {
    const { code, message, data } = toJsonRpcError(error);
    throw new JsonRpcFailure(code, message, data);
  }
}

/**
 * Ganache's errors carry revert data in two shapes: a hex string (eth_call) or an object whose `result` is the hex
 * (eth_estimateGas). viem decodes revert reasons only from a hex `data`, so both become that.
 */
function toJsonRpcError(error: unknown): JsonRpcError {
  const record = isRecord(error) ? error : {};
  const message = typeof record.message === "string" ? record.message : String(error);
  const code = typeof record.code === "number" ? record.code : /does not exist\/is not available/.test(message) ? -32601 : -32603;
  const rawData = record.data;
  const data = typeof rawData === "string" ? rawData : isRecord(rawData) && typeof rawData.result === "string" ? rawData.result : undefined;
  return data === undefined ? { code, message } : { code, message, data };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
