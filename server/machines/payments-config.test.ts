// The config file's `payments`: every field checked with its name, the defaults (Base mainnet USDC, 0.10 / 0.50 USD),
// networks in both x402 generations' names, and prices converted to the asset's smallest unit exactly.
import { describe, expect, it } from "vitest";
import { price, resolveNetwork, resolvePaymentsConfig } from "./payments-config.js";

const PAY_TO = "0x1111111111111111111111111111111111111111";
const RELAYER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const FACILITATOR = { mode: "facilitator", url: "https://facilitator.example/x402/" };

describe("resolvePaymentsConfig", () => {
  it("defaults to Base mainnet USDC at 0.10 / 0.50 USD", () => {
    const settings = resolvePaymentsConfig({ payTo: PAY_TO, settlement: FACILITATOR });
    expect(settings).toEqual({
      payTo: PAY_TO,
      network: { caip2: "eip155:8453", chainId: 8453, v1Name: "base" },
      asset: { address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", name: "USD Coin", version: "2", decimals: 6 },
      prices: { search: { atomic: 100_000n, usd: "0.10" }, run: { atomic: 500_000n, usd: "0.50" } },
      maxTimeoutSeconds: 300,
      searchEngine: "tim",
      settlement: { mode: "facilitator", url: "https://facilitator.example/x402", rpcUrl: "https://mainnet.base.org", timeoutMs: 120_000 },
    });
  });

  it("takes Base Sepolia by either name, with its USDC (EIP-712 name \"USDC\")", () => {
    for (const network of ["base-sepolia", "eip155:84532"]) {
      const settings = resolvePaymentsConfig({ payTo: PAY_TO, network, settlement: FACILITATOR });
      expect(settings.network).toEqual({ caip2: "eip155:84532", chainId: 84532, v1Name: "base-sepolia" });
      expect(settings.asset).toMatchObject({ address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", name: "USDC", version: "2" });
    }
  });

  it("direct mode takes the relayer key from the file or LOOM_RELAYER_KEY", () => {
    const direct = { mode: "direct", rpcUrl: "http://127.0.0.1:8545" };
    expect(resolvePaymentsConfig({ payTo: PAY_TO, settlement: { ...direct, relayerKey: RELAYER_KEY } }).settlement).toMatchObject({ mode: "direct", relayerKey: RELAYER_KEY });
    expect(resolvePaymentsConfig({ payTo: PAY_TO, settlement: direct }, { LOOM_RELAYER_KEY: RELAYER_KEY }).settlement).toMatchObject({ relayerKey: RELAYER_KEY });
    expect(() => resolvePaymentsConfig({ payTo: PAY_TO, settlement: direct }, {})).toThrow(/payments.settlement.relayerKey is required in direct mode/);
    expect(() => resolvePaymentsConfig({ payTo: PAY_TO, settlement: direct }, { LOOM_RELAYER_KEY: "0x12" })).toThrow(/LOOM_RELAYER_KEY must be a private key/);
  });

  it.each([
    [{ settlement: FACILITATOR }, /payments.payTo is required/],
    [{ payTo: "0x123", settlement: FACILITATOR }, /payments.payTo must be an address/],
    [{ payTo: PAY_TO }, /payments.settlement is required/],
    [{ payTo: PAY_TO, settlement: { mode: "free" } }, /payments.settlement.mode must be "facilitator" or "direct", got "free"/],
    [{ payTo: PAY_TO, settlement: { mode: "facilitator" } }, /payments.settlement.url is required in facilitator mode/],
    [{ payTo: PAY_TO, settlement: { ...FACILITATOR, url: "ftp://x" } }, /payments.settlement.url must be an http/],
    [{ payTo: PAY_TO, settlement: { ...FACILITATOR, relayerKey: RELAYER_KEY } }, /payments.settlement.relayerKey is not a config field/],
    [{ payTo: PAY_TO, settlement: { ...FACILITATOR, timeoutSeconds: 0 } }, /payments.settlement.timeoutSeconds must be an integer from 1 to 3600/],
    [{ payTo: PAY_TO, network: "solana", settlement: FACILITATOR }, /payments.network must be an EVM network/],
    [{ payTo: PAY_TO, network: "eip155:999999", settlement: FACILITATOR }, /payments.asset is required on eip155:999999/],
    [{ payTo: PAY_TO, asset: { address: PAY_TO, name: "X" }, settlement: FACILITATOR }, /payments.asset.version is required/],
    [{ payTo: PAY_TO, prices: { search: "ten cents" }, settlement: FACILITATOR }, /payments.prices.search must be a price in USD/],
    [{ payTo: PAY_TO, prices: { run: 0.0000001 }, settlement: FACILITATOR }, /payments.prices.run/],
    [{ payTo: PAY_TO, prices: { run: 0 }, settlement: FACILITATOR }, /payments.prices.run must be more than 0/],
    [{ payTo: PAY_TO, prices: { all: 1 }, settlement: FACILITATOR }, /payments.prices.all is not a config field/],
    [{ payTo: PAY_TO, searchEngine: "tim-9", settlement: FACILITATOR }, /payments.searchEngine must be one of tim/],
    [{ payTo: PAY_TO, maxTimeoutSeconds: 5, settlement: FACILITATOR }, /payments.maxTimeoutSeconds must be an integer from 10/],
    [{ payTo: PAY_TO, settlement: FACILITATOR, free: true }, /payments.free is not a config field/],
  ])("refuses %j naming the field", (raw, message) => {
    expect(() => resolvePaymentsConfig(raw, {})).toThrow(message);
  });
});

describe("price", () => {
  it.each([
    ["0.10", 6, 100_000n],
    [0.5, 6, 500_000n],
    ["1", 6, 1_000_000n],
    ["12.345678", 6, 12_345_678n],
    ["0.1000000", 6, 100_000n],
    ["0.5", 18, 500_000_000_000_000_000n],
  ])("%j with %i decimals is %s smallest units, with no floating point", (value, decimals, atomic) => {
    expect(price("p", value, decimals).atomic).toBe(atomic);
  });

  it("refuses more decimals than the asset has, negative and non-numeric prices", () => {
    expect(() => price("p", "0.1234567", 6)).toThrow(/more decimals than the asset's 6/);
    expect(() => price("p", -1, 6)).toThrow(/must be a price in USD/);
    expect(() => price("p", "1e3", 6)).toThrow(/must be a price in USD/);
  });
});

describe("resolveNetwork", () => {
  it("names chains v1 has no name for by CAIP-2 only", () => {
    expect(resolveNetwork("eip155:31337")).toEqual({ caip2: "eip155:31337", chainId: 31337 });
    expect(resolveNetwork("polygon")).toEqual({ caip2: "eip155:137", chainId: 137, v1Name: "polygon" });
  });
});
