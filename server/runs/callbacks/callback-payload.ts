// The body POSTed to a run's callbackUrl when the run ends: what polling the run answers once it has ended.

/** What the run used, as its poll response reports it. */
export interface RunCallbackUsage {
  inputTokens: number;
  outputTokens: number;
  durationMs: number;
}

/** The callback body: `{runId, status, result | error, usage}`. */
export type RunCallbackPayload =
  | { runId: string; status: "succeeded"; result: unknown; usage: RunCallbackUsage }
  | { runId: string; status: "failed"; error: unknown; usage: RunCallbackUsage };

/**
 * The payload as the bytes every attempt sends (and signs): fields in a fixed order, nothing else.
 * @throws TypeError naming the field when the payload is malformed (a status other than succeeded or failed, a
 * succeeded run without `result`, a failed one without `error`, usage counts that are not integers >= 0).
 */
export function serializeCallbackPayload(payload: RunCallbackPayload): string {
  if (typeof payload.runId !== "string" || payload.runId === "") throw new TypeError(`payload.runId must be a run id, got ${JSON.stringify(payload.runId)}`);
  for (const field of ["inputTokens", "outputTokens", "durationMs"] as const) {
    const value = payload.usage?.[field];
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`payload.usage.${field} must be an integer >= 0, got ${JSON.stringify(value)}`);
  }
  const usage = { inputTokens: payload.usage.inputTokens, outputTokens: payload.usage.outputTokens, durationMs: payload.usage.durationMs };
  switch (payload.status) {
    case "succeeded":
      if (payload.result === undefined) throw new TypeError("payload.result is required when status is succeeded");
      return JSON.stringify({ runId: payload.runId, status: payload.status, result: payload.result, usage });
    case "failed":
      if (payload.error === undefined) throw new TypeError("payload.error is required when status is failed");
      return JSON.stringify({ runId: payload.runId, status: payload.status, error: payload.error, usage });
    default:
      throw new TypeError(`payload.status must be succeeded or failed, got ${JSON.stringify((payload as { status: unknown }).status)}`);
  }
}
