// The shapes of the dashboard API's answers (server/dashboard/README.md), as far as the pages read them.

export type Session =
  | { kind: "organization"; organization: { id: string; name: string }; expiresAt: string }
  | { kind: "operator"; expiresAt: string };

export interface SessionAnswer {
  session: Session;
  csrfToken: string;
}

export type BillingMode = "subscription" | "prepaid";

export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
}

export interface Organization {
  id: string;
  name: string;
  billingMode: BillingMode | null;
  plan: { label: string | null; status: string | null; isUnlimitedComp: boolean };
  dailyAllowance: { basis: "credit" | "tokens"; amount: number; hardCap: boolean } | null;
  creditBalanceDollars: number;
  closedBeta: boolean;
  limits: { requestsPerMinute?: number; tokensPerMinute?: number; tokensPerDay?: number };
  prices: Record<string, ModelPrice>;
  pool: string | null;
  createdAt: string;
}

export interface Key {
  id: string;
  kind?: "inference" | "management";
  name: string;
  keyPrefix: string;
  isActive: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface NewKey extends Key {
  secret: string;
}

export interface UsageSnapshot {
  billingMode: string | null;
  plan: {
    label: string | null;
    status: string | null;
    isUnlimitedComp: boolean;
    dailyAllowance: { basis: "credit" | "tokens"; percent: number; resetAt: string } | { basis: "unavailable"; resetAt: string } | null;
  };
  credits: { balanceDollars: number | null; overageThisPeriodDollars: number };
  models: Array<{ slug: string; consumedToday: number }>;
}

export interface UsageDay {
  day: string;
  model: string;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Dollars at the organization's prices (0 where none applied). */
  spendDollars: number;
}

/** One key's use over the days asked for, summed over models. */
export interface UsageKey {
  keyId: string;
  name: string;
  keyPrefix: string;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  spendDollars: number;
}

export interface UsageAnswer {
  today: UsageSnapshot;
  series: UsageDay[];
  from: string;
  to: string;
}

/** GET /api/v1/dashboard/usage/keys. */
export interface UsageKeysAnswer {
  /** The keys that used the most tokens (at most 100). */
  keys: UsageKey[];
  /** How many keys had use in these days (more than `keys` holds when some were left out). */
  keysWithUse: number;
  from: string;
  to: string;
}

/** The wire formats: "openai" (/v1/chat/completions, /v1/responses) and "anthropic" (/v1/messages). */
export type ApiFormat = "openai" | "anthropic";

/** A name a request may give as `model`, and the APIs that take it. */
export interface ModelName {
  id: string;
  formats: ApiFormat[];
  /** The first model's name in some format: what that format's snippets use. */
  default: boolean;
}

export type RunStatus = "queued" | "processing" | "succeeded" | "failed";

export interface Run {
  runId: string;
  status: RunStatus;
  engine: string;
  result?: { answer: unknown; reasoning: unknown };
  error?: { code: string; message: string };
  usage: { inputTokens: number; outputTokens: number; durationMs: number };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  question?: string;
  instructions?: string;
}

export interface RunStep {
  index: number;
  attempt: number;
  kind: "model" | "tool" | "note";
  status: "started" | "finished" | "failed";
  inputTokens: number;
  outputTokens: number;
  startedAt: string;
  durationMs: number | null;
  // The step's detail, spread in: model turns {turn, toolChoice, thinking, text, toolCalls, finish} or
  // {purpose: "reasoning", text, finish}; tool calls {callId, tool, arguments, result | error, reexecuted?, notRun?};
  // notes {event, action, ...}.
  [field: string]: unknown;
}

export interface Callback {
  url: string;
  webhookId?: string;
  status: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  gaveUpAt: string | null;
  attempts: Array<{ attempt: number; at: string | null; statusCode: number | null; error: string | null; durationMs: number | null }>;
}

export interface RunAnswer {
  run: Run;
  steps: RunStep[];
  callback?: Callback;
}

export interface WorkerLoad {
  id: string;
  address: string;
  running: number;
  waiting: number;
  kvBlocksUsed: number;
  kvBlocksFree: number;
}

export interface ModelLoad {
  model: string;
  running: number;
  waiting: number;
  kvBlocksUsed: number;
  kvBlocksCached: number;
  kvBlocksFree: number;
  tokensPerSecond: number;
  workers: WorkerLoad[];
}

export type PaymentStatus = "settling" | "settled" | "failed";

export interface Payment {
  id: string;
  kind: string;
  status: PaymentStatus;
  x402Version: number;
  payer: string;
  payTo: string;
  amount: string;
  asset: string;
  network: string;
  transaction: string | null;
  runId: string;
  error: string | null;
  createdAt: string;
  settledAt: string | null;
}
