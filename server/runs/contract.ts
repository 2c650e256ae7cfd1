// Agent runs as the rest of the server sees them: what a caller asks for, what a run is at each state, and its step
// log. Plain data; the store (run-store.ts) keeps them in the platform database.

/** Spec section 3: a run starts queued, a worker takes it, and it ends succeeded or failed. */
export type RunStatus = "queued" | "processing" | "succeeded" | "failed";

/** legacy: POST /v1/runs with a platform key; machine_*: paid per run over x402 (issue 17). */
export type RunKind = "legacy" | "machine_search" | "machine_run";

/** The tools a run may call. */
export const TOOL_NAMES = ["web_search", "read_page"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** One tool a run may use, with its options (legacy items `{id, options}`; machine runs name tools only). */
export interface RunToolChoice {
  id: ToolName;
  options: Record<string, unknown>;
}

/** A validated run request: what the worker runs. */
export interface RunSpec {
  engine: string;
  instructions?: string;
  /** `input.content[].text`. */
  content: string[];
  resources: string[];
  skills: string[];
  agentId?: string;
  tools: RunToolChoice[];
  /** JSON Schema of the final answer: `result.answer` is then an object that validates. */
  answerFormat?: Record<string, unknown>;
  /** JSON Schema of the reasoning: `result.reasoning` is then an object that validates. */
  reasoningFormat?: Record<string, unknown>;
  callbackUrl?: string;
  /** Seconds of processing before the run fails with `timeout`. */
  timeoutSeconds: number;
  /** Most tokens one model turn may generate (`options.max_step_tokens`); absent: the engine's setting. */
  maxStepTokens?: number;
}

/** Error codes of failed runs. */
export type RunErrorCode =
  | "cancelled"
  | "timeout"
  | "step_budget"
  | "worker_lost"
  | "model_error"
  | "no_model"
  /** A turn was refused by a limit of its organization or key: requests or tokens per minute, tokens per day, the daily allowance. */
  | "rate_limit"
  /** A turn was refused: the prepaid balance cannot pay for it. */
  | "insufficient_quota"
  /** A turn was refused: its key was revoked, may not use the model, or the model has no price for a prepaid organization. */
  | "permission"
  | "internal";

export interface RunError {
  code: RunErrorCode;
  message: string;
}

export interface RunResult {
  /** The final text, or with answerFormat an object that validates against it. */
  answer: unknown;
  /** The model's reasoning (thinking text) over the run, or with reasoningFormat an object shaped by it. */
  reasoning: unknown;
}

export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  /** Processing time (from the worker's first take to the end); 0 while queued. */
  durationMs: number;
}

/** A run as stored. */
export interface RunRecord {
  id: string;
  kind: RunKind;
  organizationId?: string;
  keyId?: string;
  engine: string;
  spec: RunSpec;
  status: RunStatus;
  attempts: number;
  cancelRequested: boolean;
  result?: RunResult;
  error?: RunError;
  usage: RunUsage;
  createdAt: Date;
  startedAt?: Date;
  finishedAt?: Date;
}

/** One entry of a run's step log: a model turn, a tool call, or a note (a retry after a lost worker). */
export interface RunStep {
  index: number;
  /** The take of the run that wrote it. */
  attempt: number;
  kind: "model" | "tool" | "note";
  /** A tool step is written `started` before the tool runs, then `finished` or `failed`. */
  status: "started" | "finished" | "failed";
  detail: Record<string, unknown>;
  inputTokens: number;
  outputTokens: number;
  startedAt: Date;
  durationMs?: number;
}
