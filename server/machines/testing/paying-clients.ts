// Payers for tests of the machine endpoints: the official clients of both x402 generations (@x402/fetch for v2,
// x402-fetch for v1) over a payer's key on the local chain, and hand-signed EIP-3009 payments that tests can bend
// one field at a time (another recipient, a short amount, an expired window, someone else's signature).
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { authorizationTypes } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment as wrapFetchV2 } from "@x402/fetch";
import { wrapFetchWithPayment as wrapFetchV1 } from "x402-fetch";
import { createWalletClient, http, parseSignature, publicActions, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type ChainAccount, type LocalChain, TOKEN_NAME, TOKEN_VERSION } from "./local-chain.js";

/** `fetch` that pays 402s with the official v2 client (any asset: the test token is not one it knows). */
export function v2PayingFetch(payer: ChainAccount): typeof fetch {
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))).setSpendControls(false);
  return wrapFetchV2(fetch, client) as typeof fetch;
}

/** `fetch` that pays 402s with the official v1 client, up to `maxAtomic` (its default cap is 0.10 USD). */
export function v1PayingFetch(chain: LocalChain, payer: ChainAccount, maxAtomic: bigint): typeof fetch {
  const wallet = createWalletClient({ account: privateKeyToAccount(payer.privateKey), chain: chain.chain, transport: http(chain.rpcUrl) }).extend(publicActions);
  return wrapFetchV1(fetch, wallet as never, maxAtomic) as unknown as typeof fetch;
}

/** The v2 offer of a 402 (its PAYMENT-REQUIRED header). */
export function offerOf(response: Response): PaymentRequired {
  const header = response.headers.get("payment-required");
  if (!header) throw new Error(`no PAYMENT-REQUIRED header on a ${response.status}`);
  return decodePaymentRequiredHeader(header);
}

/** A payment made by the official v2 client for `offer`, with `extensions` added. */
export async function officialPayment(payer: ChainAccount, offer: PaymentRequired, extensions?: Record<string, unknown>): Promise<PaymentPayload> {
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(payer.privateKey))).setSpendControls(false);
  const payload = await client.createPaymentPayload(offer);
  return extensions ? { ...payload, extensions: { ...payload.extensions, ...extensions } } : payload;
}

/** The fields of a hand-signed authorization a test may change. */
export interface AuthorizationFields {
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  /** Who signs (default: the payer): another key makes a wrong signature. */
  signer: ChainAccount;
  /** The token whose domain is signed (default: the chain's). */
  token: Address;
}

/** A v2 payment for `requirements`, signed by hand, with any field changed. */
export async function handSignedPayment(chain: LocalChain, payer: ChainAccount, requirements: PaymentRequirements, change: Partial<AuthorizationFields> = {}, accepted: Partial<PaymentRequirements> = {}): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const fields: AuthorizationFields = {
    to: requirements.payTo as Address,
    value: BigInt(requirements.amount),
    validAfter: now - 60n,
    validBefore: now + 600n,
    nonce: generatePrivateKey(),
    signer: payer,
    token: chain.token,
    ...change,
  };
  const authorization = { from: payer.address, to: fields.to, value: fields.value, validAfter: fields.validAfter, validBefore: fields.validBefore, nonce: fields.nonce };
  const signature = await privateKeyToAccount(fields.signer.privateKey).signTypedData({
    domain: { name: TOKEN_NAME, version: TOKEN_VERSION, chainId: chain.chainId, verifyingContract: fields.token },
    // The EIP-3009 typed data, as the x402 EVM scheme signs it.
    types: authorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  const asText = Object.fromEntries(Object.entries(authorization).map(([key, value]) => [key, typeof value === "bigint" ? value.toString() : value]));
  return { x402Version: 2, accepted: { ...requirements, ...accepted }, payload: { signature, authorization: asText } };
}

/** The PAYMENT-SIGNATURE header of a payment. */
export function paymentHeader(payment: PaymentPayload): string {
  return encodePaymentSignatureHeader(payment);
}

/**
 * The payer cancels one of its authorizations on the token (EIP-3009 cancelAuthorization), sending the transaction
 * itself through the chain's bridge (so an intercept sees it), and waits for it to be mined.
 */
export async function cancelAuthorization(chain: LocalChain, payer: ChainAccount, nonce: Hex): Promise<void> {
  const account = privateKeyToAccount(payer.privateKey);
  const signature = await account.signTypedData({
    domain: { name: TOKEN_NAME, version: TOKEN_VERSION, chainId: chain.chainId, verifyingContract: chain.token },
    types: { CancelAuthorization: [{ name: "authorizer", type: "address" }, { name: "nonce", type: "bytes32" }] },
    primaryType: "CancelAuthorization",
    message: { authorizer: payer.address, nonce },
  });
  const { v, r, s } = parseSignature(signature);
  const wallet = createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) });
  const hash = await wallet.writeContract({ address: chain.token, abi: chain.tokenAbi, functionName: "cancelAuthorization", args: [payer.address, nonce, Number(v), r, s] });
  await chain.publicClient.waitForTransactionReceipt({ hash });
}

/** The payer moves `amount` of its tokens to `to` (an ERC-20 transfer it sends itself, through the bridge). */
export async function transferTokens(chain: LocalChain, payer: ChainAccount, to: Address, amount: bigint): Promise<void> {
  const wallet = createWalletClient({ account: privateKeyToAccount(payer.privateKey), chain: chain.chain, transport: http(chain.rpcUrl) });
  const hash = await wallet.writeContract({ address: chain.token, abi: chain.tokenAbi, functionName: "transfer", args: [to, amount] });
  await chain.publicClient.waitForTransactionReceipt({ hash });
}

/**
 * Someone (`sender`, not loom's relayer) submits a signed payment's authorization on the token themselves, as anyone
 * may once it is public, and waits for it to be mined. With `gas` given nothing is estimated first, so a transfer
 * bound to revert (its nonce already used) is mined, reverted. @returns the transaction's hash.
 */
export async function submitAuthorization(chain: LocalChain, sender: ChainAccount, payment: { payload: Record<string, unknown> }, gas?: bigint): Promise<Hex> {
  const { authorization: a, signature } = (payment.payload as { payload: { authorization: Record<string, string>; signature: Hex } }).payload;
  const wallet = createWalletClient({ account: privateKeyToAccount(sender.privateKey), chain: chain.chain, transport: http(chain.rpcUrl) });
  const hash = await wallet.writeContract({
    address: chain.token, abi: chain.tokenAbi, functionName: "transferWithAuthorization",
    args: [a.from as Address, a.to as Address, BigInt(a.value!), BigInt(a.validAfter!), BigInt(a.validBefore!), a.nonce as Hex, signature],
    ...(gas === undefined ? {} : { gas }),
  });
  await chain.publicClient.waitForTransactionReceipt({ hash });
  return hash;
}
