// The config file's `payments` object (issue 17), checked field by field and resolved to what the machine endpoints
// run on: the network in both protocol generations' names, the asset with its EIP-712 domain, prices in the asset's
// smallest unit, and how payments are settled. Without it the machine endpoints are off (503), never free.
import { getDefaultAsset } from "@x402/evm";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { type Hex, isAddress, isHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ENGINE_NAMES, type EngineName } from "../runs/engines.js";

/** A config field's error: the field as written in the file (`payments.settlement.url`) and the rule it breaks. */
export class PaymentsConfigError extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field} ${message}`);
  }
}

/** The spec's prices (section 8): USD per run. */
export const DEFAULT_PRICES_USD = { search: "0.10", run: "0.50" } as const;

/** Seconds a client's authorization must stay valid for (x402 `maxTimeoutSeconds`). */
const DEFAULT_MAX_TIMEOUT_SECONDS = 300;
/** How long one settlement may take before the reconciler finishes it from the chain's state. */
const DEFAULT_SETTLEMENT_TIMEOUT_SECONDS = 120;

/** Public RPC endpoints of the default networks (direct settlement, and reconciliation in facilitator mode). */
const DEFAULT_RPC_URLS: Record<number, string> = { 8453: "https://mainnet.base.org", 84532: "https://sepolia.base.org" };

/** The network, in the names of both protocol generations. */
export interface PaymentNetwork {
  /** CAIP-2, as x402 v2 names it: `eip155:8453`. */
  caip2: `eip155:${number}`;
  chainId: number;
  /** x402 v1's name (`base`); undefined for chains v1 has no name for (then only v2 clients can pay). */
  v1Name?: string;
}

/** The token paid in, with the EIP-712 domain its authorizations are signed under. */
export interface PaymentAsset {
  address: `0x${string}`;
  name: string;
  version: string;
  decimals: number;
}

/** How a verified payment is settled. */
export type SettlementSettings =
  | { mode: "facilitator"; url: string; rpcUrl: string; timeoutMs: number }
  | { mode: "direct"; rpcUrl: string; relayerKey: Hex; timeoutMs: number };

/** The machine endpoints' payment settings, resolved. */
export interface PaymentsSettings {
  payTo: `0x${string}`;
  network: PaymentNetwork;
  asset: PaymentAsset;
  /** Per endpoint: the price in the asset's smallest unit, and in USD as configured (for descriptions). */
  prices: { search: { atomic: bigint; usd: string }; run: { atomic: bigint; usd: string } };
  maxTimeoutSeconds: number;
  /** The agent configuration search runs use (with web_search and read_page). */
  searchEngine: EngineName;
  settlement: SettlementSettings;
}

const FIELDS = ["payTo", "network", "asset", "prices", "maxTimeoutSeconds", "searchEngine", "settlement"];

/**
 * Checks the config file's `payments` and resolves its defaults. `env` supplies LOOM_RELAYER_KEY (direct mode's
 * relayer key, kept out of the file).
 * @throws PaymentsConfigError naming the first bad field.
 */
export function resolvePaymentsConfig(raw: unknown, env: Record<string, string | undefined> = process.env): PaymentsSettings {
  const top = object("payments", raw, FIELDS);
  if (top.payTo === undefined) throw new PaymentsConfigError("payments.payTo", "is required: the address that receives payments");
  const payTo = address("payments.payTo", top.payTo);
  const network = resolveNetwork(top.network ?? "base");
  const asset = top.asset === undefined ? defaultAsset(network) : resolveAsset(top.asset);
  const prices = object("payments.prices", top.prices ?? {}, ["search", "run"]);
  const settlement = resolveSettlement(top.settlement, network, env);
  const searchEngine = top.searchEngine ?? "tim";
  if (typeof searchEngine !== "string" || !(ENGINE_NAMES as readonly string[]).includes(searchEngine)) {
    throw new PaymentsConfigError("payments.searchEngine", `must be one of ${ENGINE_NAMES.join(", ")}, got ${show(searchEngine)}`);
  }
  return {
    payTo,
    network,
    asset,
    prices: {
      search: price("payments.prices.search", prices.search ?? DEFAULT_PRICES_USD.search, asset.decimals),
      run: price("payments.prices.run", prices.run ?? DEFAULT_PRICES_USD.run, asset.decimals),
    },
    maxTimeoutSeconds: integer("payments.maxTimeoutSeconds", top.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS, 10, 86_400),
    searchEngine: searchEngine as EngineName,
    settlement,
  };
}

/** `base`, `base-sepolia` (or another x402 v1 name), or a CAIP-2 id `eip155:<chain id>`. */
export function resolveNetwork(value: unknown): PaymentNetwork {
  const field = "payments.network";
  if (typeof value !== "string") throw new PaymentsConfigError(field, `must be a string such as "base", "base-sepolia" or "eip155:8453", got ${show(value)}`);
  const v1Names = EVM_NETWORK_CHAIN_ID_MAP as Readonly<Record<string, number>>;
  const caip = /^eip155:([1-9][0-9]{0,15})$/.exec(value);
  const chainId = caip ? Number(caip[1]) : Object.hasOwn(v1Names, value) ? v1Names[value] : undefined;
  if (chainId === undefined) {
    throw new PaymentsConfigError(field, `must be an EVM network: "base", "base-sepolia", another x402 v1 name (${Object.keys(v1Names).join(", ")}) or "eip155:<chain id>"; got ${show(value)}`);
  }
  const v1Name = Object.keys(v1Names).find((name) => v1Names[name] === chainId);
  return { caip2: `eip155:${chainId}`, chainId, ...(v1Name !== undefined ? { v1Name } : {}) };
}

function defaultAsset(network: PaymentNetwork): PaymentAsset {
  try {
    const known = getDefaultAsset(network.caip2);
    return { address: known.asset as `0x${string}`, name: known.name, version: known.version, decimals: known.decimals };
  } catch {
    throw new PaymentsConfigError("payments.asset", `is required on ${network.caip2}: no default stablecoin is known there; give {address, name, version, decimals}`);
  }
}

function resolveAsset(value: unknown): PaymentAsset {
  const asset = object("payments.asset", value, ["address", "name", "version", "decimals"]);
  for (const field of ["address", "name", "version"]) {
    if (asset[field] === undefined) throw new PaymentsConfigError(`payments.asset.${field}`, "is required (name and version are the token's EIP-712 domain)");
  }
  return {
    address: address("payments.asset.address", asset.address),
    name: text("payments.asset.name", asset.name),
    version: text("payments.asset.version", asset.version),
    decimals: integer("payments.asset.decimals", asset.decimals ?? 6, 0, 36),
  };
}

function resolveSettlement(value: unknown, network: PaymentNetwork, env: Record<string, string | undefined>): SettlementSettings {
  if (value === undefined) throw new PaymentsConfigError("payments.settlement", `is required: {"mode": "facilitator", "url": ...} or {"mode": "direct", "rpcUrl": ...}`);
  const base = object("payments.settlement", value);
  const timeoutMs = 1000 * integer("payments.settlement.timeoutSeconds", base.timeoutSeconds ?? DEFAULT_SETTLEMENT_TIMEOUT_SECONDS, 1, 3600);
  const defaultRpc = DEFAULT_RPC_URLS[network.chainId];
  const rpcUrlOf = (settings: Record<string, unknown>) => {
    if (settings.rpcUrl === undefined && defaultRpc === undefined) throw new PaymentsConfigError("payments.settlement.rpcUrl", `is required on ${network.caip2} (no default RPC endpoint is known)`);
    return httpUrl("payments.settlement.rpcUrl", settings.rpcUrl ?? defaultRpc);
  };
  if (base.mode === "facilitator") {
    const settings = object("payments.settlement", value, ["mode", "url", "rpcUrl", "timeoutSeconds"]);
    if (settings.url === undefined) throw new PaymentsConfigError("payments.settlement.url", "is required in facilitator mode: the facilitator's base URL (it serves POST /verify, POST /settle, GET /supported)");
    return { mode: "facilitator", url: httpUrl("payments.settlement.url", settings.url).replace(/\/+$/, ""), rpcUrl: rpcUrlOf(settings), timeoutMs };
  }
  if (base.mode === "direct") {
    const settings = object("payments.settlement", value, ["mode", "rpcUrl", "relayerKey", "timeoutSeconds"]);
    const key = settings.relayerKey ?? env.LOOM_RELAYER_KEY;
    const field = settings.relayerKey !== undefined ? "payments.settlement.relayerKey" : "LOOM_RELAYER_KEY";
    if (key === undefined) throw new PaymentsConfigError("payments.settlement.relayerKey", "is required in direct mode: the relayer's private key (0x + 64 hex digits), or set LOOM_RELAYER_KEY to keep it out of the file");
    if (typeof key !== "string" || !isHex(key) || key.length !== 66) throw new PaymentsConfigError(field, "must be a private key: 0x and 64 hex digits");
    try {
      privateKeyToAccount(key);
    } catch {
      throw new PaymentsConfigError(field, "is not a valid secp256k1 private key");
    }
    return { mode: "direct", rpcUrl: rpcUrlOf(settings), relayerKey: key, timeoutMs };
  }
  throw new PaymentsConfigError("payments.settlement.mode", `must be "facilitator" or "direct", got ${show(base.mode)}`);
}

/**
 * A USD price as the asset's smallest unit, exactly (decimal digits, no floating point): 0.10 with 6 decimals is
 * 100000. A number or a decimal string; more fraction digits than the asset has is an error, not a rounding.
 */
export function price(field: string, value: unknown, decimals: number): { atomic: bigint; usd: string } {
  const textValue = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  const match = typeof textValue === "string" ? /^([0-9]{1,12})(?:\.([0-9]+))?$/.exec(textValue) : null;
  if (!match) throw new PaymentsConfigError(field, `must be a price in USD such as 0.10, got ${show(value)}`);
  const fraction = match[2] ?? "";
  if (fraction.replace(/0+$/, "").length > decimals) throw new PaymentsConfigError(field, `has more decimals than the asset's ${decimals}: ${show(value)}`);
  const atomic = BigInt(match[1]!) * 10n ** BigInt(decimals) + BigInt((fraction + "0".repeat(decimals)).slice(0, decimals) || "0");
  if (atomic === 0n) throw new PaymentsConfigError(field, "must be more than 0: a free run is not configured by price (leave payments out to turn the endpoints off)");
  return { atomic, usd: textValue as string };
}

function object(field: string, value: unknown, fields?: readonly string[]): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new PaymentsConfigError(field, `must be an object, got ${show(value)}`);
  const unknown = fields ? Object.keys(value).find((name) => !fields.includes(name)) : undefined;
  if (unknown !== undefined) throw new PaymentsConfigError(`${field}.${unknown}`, `is not a config field (known: ${fields!.join(", ")})`);
  return value as Record<string, unknown>;
}

function address(field: string, value: unknown): `0x${string}` {
  if (typeof value !== "string" || !isAddress(value, { strict: false })) throw new PaymentsConfigError(field, `must be an address (0x and 40 hex digits), got ${show(value)}`);
  return value as `0x${string}`;
}

function text(field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 100) throw new PaymentsConfigError(field, `must be a non-empty string, got ${show(value)}`);
  return value;
}

function integer(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) throw new PaymentsConfigError(field, `must be an integer from ${min} to ${max}, got ${show(value)}`);
  return value;
}

function httpUrl(field: string, value: unknown): string {
  try {
    if (typeof value === "string" && /^https?:$/.test(new URL(value).protocol)) return value;
  } catch {
    // answered below
  }
  throw new PaymentsConfigError(field, `must be an http:// or https:// URL, got ${show(value)}`);
}

function show(value: unknown): string {
  const shown = JSON.stringify(value) ?? String(value);
  return shown.length > 80 ? `${shown.slice(0, 77)}...` : shown;
}
