// Proves the local chain fixture with real parts: EIP-3009 signatures from viem, the token's checks, and the
// official x402 facilitator verifying and settling on it.
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import type { Network, PaymentPayload, PaymentRequirements, PaymentRequirementsV1 } from "@x402/core/types";
import { authorizationTypes, toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme as ExactEvmClientScheme } from "@x402/evm/exact/client";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmSchemeV1 as ExactEvmClientSchemeV1 } from "@x402/evm/exact/v1/client";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/facilitator";
import { createWalletClient, http, parseSignature, publicActions, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalChain, TOKEN_NAME, TOKEN_VERSION, type ChainAccount, type LocalChain, type RpcCall } from "./local-chain.js";

const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

let chain: LocalChain;

beforeAll(async () => {
  chain = await startLocalChain();
});

afterAll(async () => {
  await chain?.close();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

function relayerClient() {
  const account = privateKeyToAccount(chain.accounts.relayer.privateKey);
  return createWalletClient({ chain: chain.chain, transport: http(chain.rpcUrl), account, pollingInterval: 50 }).extend(publicActions);
}

interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

function authorization(from: ChainAccount, value: bigint, overrides: Partial<Authorization> = {}): Authorization {
  return {
    from: from.address,
    to: chain.accounts.payTo.address,
    value,
    validAfter: 0n,
    validBefore: BigInt(nowSeconds() + 3600),
    nonce: generatePrivateKey(), // 32 random bytes
    ...overrides,
  };
}

function signAuthorization(signer: ChainAccount, message: Authorization): Promise<Hex> {
  return privateKeyToAccount(signer.privateKey).signTypedData({
    domain: { name: TOKEN_NAME, version: TOKEN_VERSION, chainId: chain.chainId, verifyingContract: chain.token },
    // The EIP-3009 typed data, as the x402 EVM scheme signs it.
    types: authorizationTypes,
    primaryType: "TransferWithAuthorization",
    message,
  });
}

const authorizationArgs = (a: Authorization) => [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;

function splitSignature(signature: Hex) {
  const { r, s, v } = parseSignature(signature);
  return [Number(v), r, s] as const;
}

/** Simulates the packed-signature overload as the relayer; resolves when it would succeed. */
function simulatePacked(a: Authorization, signature: Hex) {
  return chain.publicClient.simulateContract({
    account: chain.accounts.relayer.address,
    address: chain.token,
    abi: chain.tokenAbi,
    functionName: "transferWithAuthorization",
    args: [...authorizationArgs(a), signature],
  });
}

describe("local chain: EIP-3009 token", () => {
  it("moves exactly the authorized amount with either overload, once", async () => {
    const relayer = relayerClient();
    const [payer] = chain.accounts.payers;
    const payTo = chain.accounts.payTo.address;
    const payerBefore = await chain.balanceOf(payer.address);
    const payToBefore = await chain.balanceOf(payTo);

    const split = authorization(payer, 1_250_000n);
    const splitSigned = await signAuthorization(payer, split);
    const splitHash = await relayer.writeContract({
      address: chain.token,
      abi: chain.tokenAbi,
      functionName: "transferWithAuthorization",
      args: [...authorizationArgs(split), ...splitSignature(splitSigned)],
    });
    expect((await relayer.waitForTransactionReceipt({ hash: splitHash })).status).toBe("success");

    const packed = authorization(payer, 750_000n);
    const packedSigned = await signAuthorization(payer, packed);
    const packedHash = await relayer.writeContract({
      address: chain.token,
      abi: chain.tokenAbi,
      functionName: "transferWithAuthorization",
      args: [...authorizationArgs(packed), packedSigned],
    });
    expect((await relayer.waitForTransactionReceipt({ hash: packedHash })).status).toBe("success");

    expect(await chain.balanceOf(payer.address)).toBe(payerBefore - 2_000_000n);
    expect(await chain.balanceOf(payTo)).toBe(payToBefore + 2_000_000n);
    for (const used of [split, packed]) {
      const state = await chain.publicClient.readContract({
        address: chain.token,
        abi: chain.tokenAbi,
        functionName: "authorizationState",
        args: [payer.address, used.nonce],
      });
      expect(state).toBe(true);
    }
    await expect(simulatePacked(packed, packedSigned)).rejects.toThrow(/authorization is used or canceled/);
  });

  it("refuses expired, not-yet-valid, wrongly signed and malleable authorizations", async () => {
    const [payer, other] = chain.accounts.payers;
    const expired = authorization(payer, 1n, { validBefore: BigInt(nowSeconds() - 60) });
    await expect(simulatePacked(expired, await signAuthorization(payer, expired))).rejects.toThrow(/authorization is expired/);

    const early = authorization(payer, 1n, { validAfter: BigInt(nowSeconds() + 3600) });
    await expect(simulatePacked(early, await signAuthorization(payer, early))).rejects.toThrow(/authorization is not yet valid/);

    const forged = authorization(payer, 1n);
    await expect(simulatePacked(forged, await signAuthorization(other, forged))).rejects.toThrow(/FiatTokenV2: invalid signature/);

    // The same signature with s flipped to the high half recovers the same signer; the token must refuse it.
    const valid = authorization(payer, 1n);
    const { r, s, v } = parseSignature(await signAuthorization(payer, valid));
    const highS = toHex(SECP256K1_ORDER - BigInt(s), { size: 32 });
    const flippedV = v === 27n ? 28 : 27;
    const malleable = `${r}${highS.slice(2)}${flippedV.toString(16)}` as Hex;
    await expect(simulatePacked(valid, malleable)).rejects.toThrow(/FiatTokenV2: invalid signature/);

    const tooBig = authorization(chain.accounts.broke, 1n);
    await expect(simulatePacked(tooBig, await signAuthorization(chain.accounts.broke, tooBig))).rejects.toThrow(
      /transfer amount exceeds balance/,
    );
  });
});

describe("local chain: the official x402 facilitator", () => {
  const amount = "10000"; // 0.01 USDC

  function facilitator() {
    const client = relayerClient();
    // The viem client has every method the signer needs; its verifyTypedData overloads are just stricter than x402's type.
    const signerClient = Object.assign(client, { address: client.account.address });
    const signer = toFacilitatorEvmSigner(signerClient as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]);
    return new x402Facilitator()
      .register("eip155:8453", new ExactEvmScheme(signer))
      // v1 names networks without a CAIP-2 namespace; the Network type only describes v2's names.
      .registerV1("base" as Network, new ExactEvmSchemeV1(signer));
  }

  function requirementsV2(): PaymentRequirements {
    return {
      scheme: "exact",
      network: "eip155:8453",
      asset: chain.token,
      amount,
      payTo: chain.accounts.payTo.address,
      maxTimeoutSeconds: 60,
      extra: { name: TOKEN_NAME, version: TOKEN_VERSION },
    };
  }

  async function paymentV2(payer: ChainAccount): Promise<PaymentPayload> {
    // Spend controls off: by default the client pays only assets it knows (Base's real USDC), not this token.
    const client = new x402Client()
      .register("eip155:8453", new ExactEvmClientScheme(privateKeyToAccount(payer.privateKey)))
      .setSpendControls(false);
    return client.createPaymentPayload({
      x402Version: 2,
      resource: { url: "http://127.0.0.1/v1/runs", description: "a run", mimeType: "application/json" },
      accepts: [requirementsV2()],
    });
  }

  it("verifies and settles a v2 payment made by the official client", async () => {
    const payer = chain.accounts.payers[1];
    const payToBefore = await chain.balanceOf(chain.accounts.payTo.address);
    const payload = await paymentV2(payer);
    const x402 = facilitator();

    const verified = await x402.verify(payload, requirementsV2());
    expect(verified).toMatchObject({ isValid: true, payer: payer.address });

    const settled = await x402.settle(payload, requirementsV2());
    expect(settled).toMatchObject({ success: true, network: "eip155:8453", payer: payer.address });
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: settled.transaction as Hex });
    expect(receipt.status).toBe("success");
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payToBefore + BigInt(amount));
  });

  it("verifies and settles a v1 payment on network \"base\"", async () => {
    const payer = chain.accounts.payers[2];
    const payToBefore = await chain.balanceOf(chain.accounts.payTo.address);
    const requirements: PaymentRequirementsV1 = {
      scheme: "exact",
      network: "base" as Network,
      maxAmountRequired: amount,
      resource: "http://127.0.0.1/v1/runs",
      description: "a run",
      mimeType: "application/json",
      outputSchema: {},
      payTo: chain.accounts.payTo.address,
      maxTimeoutSeconds: 60,
      asset: chain.token,
      extra: { name: TOKEN_NAME, version: TOKEN_VERSION },
    };
    // The scheme and facilitator methods are typed with v2 shapes; v1 objects pass through them all the same.
    const requirementsAsTyped = requirements as unknown as PaymentRequirements;
    const payment = await new ExactEvmClientSchemeV1(privateKeyToAccount(payer.privateKey)).createPaymentPayload(1, requirementsAsTyped);
    const paymentAsTyped = payment as unknown as PaymentPayload;
    const x402 = facilitator();

    expect(await x402.verify(paymentAsTyped, requirementsAsTyped)).toMatchObject({ isValid: true });
    const settled = await x402.settle(paymentAsTyped, requirementsAsTyped);
    expect(settled).toMatchObject({ success: true, network: "base" });
    expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payToBefore + BigInt(amount));
  });

  it("diagnoses a payer without USDC as insufficient balance (through Multicall3)", async () => {
    const payload = await paymentV2(chain.accounts.broke);
    const verified = await facilitator().verify(payload, requirementsV2());
    expect(verified).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_insufficient_balance" });
  });
});

describe("local chain: the RPC bridge", () => {
  it("lets a test see eth_sendRawTransaction before it reaches the chain", async () => {
    const seen: RpcCall[] = [];
    chain.setIntercept(async (call, forward) => {
      seen.push(call);
      return forward();
    });
    try {
      const payer = chain.accounts.payers[3];
      const transfer = authorization(payer, 1n);
      const hash = await relayerClient().writeContract({
        address: chain.token,
        abi: chain.tokenAbi,
        functionName: "transferWithAuthorization",
        args: [...authorizationArgs(transfer), await signAuthorization(payer, transfer)],
      });
      const raw = seen.filter((call) => call.method === "eth_sendRawTransaction");
      expect(raw).toHaveLength(1);
      expect((await chain.publicClient.getTransactionReceipt({ hash })).status).toBe("success");
    } finally {
      chain.setIntercept(undefined);
    }
  });

  it("answers batches, unknown methods and malformed bodies as JSON-RPC", async () => {
    const post = async (body: string) => (await fetch(chain.rpcUrl, { method: "POST", body, headers: { "content-type": "application/json" } })).json();
    const batch = await post(JSON.stringify([
      { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: 2, method: "no_such_method", params: [] },
    ]));
    expect(batch).toEqual([
      { jsonrpc: "2.0", id: 1, result: "0x2105" },
      { jsonrpc: "2.0", id: 2, error: expect.objectContaining({ code: -32601 }) },
    ]);
    expect(await post("{not json")).toMatchObject({ error: { code: -32700 } });
    const tooLarge = await fetch(chain.rpcUrl, { method: "POST", body: "x".repeat((1 << 20) + 1) });
    expect(tooLarge.status).toBe(413);
  });
});
