// Numbers through Intl.NumberFormat, times in the reader's locale (and UTC where a UTC day or reset matters).

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const dollars = new Intl.NumberFormat(undefined, { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 });
const localTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const utcTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });
const utcDay = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });
const utcShortDay = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" });

export const formatInteger = (value: number): string => integer.format(value);
export const formatNumber = (value: number): string => decimal.format(value);
export const formatDollars = (value: number): string => dollars.format(value);
export const formatPercent = (value: number): string => `${decimal.format(value)}%`;

/** A moment in the reader's time zone; "never" / a dash for none. */
export function formatTime(iso: string | null | undefined, none = "—"): string {
  if (!iso) return none;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : localTime.format(date);
}

/** A moment in the reader's time zone, followed by UTC. */
export function formatTimeWithUtc(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${localTime.format(date)} (${utcTime.format(date)} UTC)`;
}

/** A UTC day (YYYY-MM-DD) as the reader writes dates. */
export function formatDay(day: string, short = false): string {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return day;
  return (short ? utcShortDay : utcDay).format(date);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${integer.format(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${decimal.format(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${integer.format(minutes)} min ${integer.format(Math.round(seconds - minutes * 60))} s`;
}

/** USDC token contracts (the x402 packages' defaults, lowercased): their amounts are millionths of a dollar. */
const USDC = new Set([
  "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", // Base
  "0x036cbd53842c5426634e7929541ec2318f3dcf7e", // Base Sepolia
  "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", // Ethereum
  "0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e", // Avalanche
  "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359", // Polygon
  "0xaf88d065e77c8cc2239327c5edb3a432268e5831", // Arbitrum
  "0x75faf114eafb1bdbe2f0316df893fd58ce46aa4d", // Arbitrum Sepolia
  "0x754704bc059f8c67012fed69bc8a327a5aafb603",
  "0xfa2958cb79b0491cc627c1557f441ef849ca8eb1",
  "0xb5ab69f7bbada22b28e79c8ffaece55ef1c771d4",
  "0xa5b8bf902b2844da17d4506cc827f7f1681735e7",
  "0xceba9300f2b948710d2653dd7b07f33a8b32118c",
  "0x01c5c0122039549ad1493b8220cabedd739bc44e",
  "0xe15fc38f6d8c56af07bbcbe3baf5708a2bf42392",
  "0x4fcf1784b31630811181f670aea7a7bef803eaed",
]);

export function isUsdc(asset: string): boolean {
  return USDC.has(asset.toLowerCase());
}

/**
 * A payment amount: a decimal string in the asset's smallest unit. USDC (6 decimals) as dollars, exactly (string
 * arithmetic, no float rounding); any other asset as the raw amount.
 */
export function formatPaymentAmount(amount: string, asset: string): string {
  if (!/^\d+$/.test(amount)) return amount;
  if (!isUsdc(asset)) return `${integer.format(Number(amount))} units`;
  const padded = amount.padStart(7, "0");
  const whole = padded.slice(0, -6).replace(/^0+(?=\d)/, "");
  let fraction = padded.slice(-6).replace(/0+$/, "");
  if (fraction.length < 2) fraction = fraction.padEnd(2, "0");
  const wholeText = whole.length <= 15 ? integer.format(Number(whole)) : whole;
  const point = (1.5).toLocaleString().charAt(1);
  return `$${wholeText}${point}${fraction} USDC`;
}

/** JSON pretty-printed; strings as they are. */
export function pretty(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export function shortId(id: string, keep = 10): string {
  return id.length > keep + 3 ? `${id.slice(0, keep)}…` : id;
}
