// The callback body: the fields in a fixed order and nothing else, and a malformed payload refused naming its field.
import { describe, expect, it } from "vitest";
import { type RunCallbackPayload, serializeCallbackPayload } from "./callback-payload.js";

const usage = { inputTokens: 12, outputTokens: 34, durationMs: 5678 };

describe("serializeCallbackPayload", () => {
  it("writes runId, status, result or error, and usage, in that order, dropping any other field", () => {
    const succeeded = { usage: { durationMs: 5678, outputTokens: 34, inputTokens: 12, extra: 1 }, result: { text: "hi" }, status: "succeeded", runId: "run_1", secret: "x" };
    expect(serializeCallbackPayload(succeeded as unknown as RunCallbackPayload)).toBe(
      '{"runId":"run_1","status":"succeeded","result":{"text":"hi"},"usage":{"inputTokens":12,"outputTokens":34,"durationMs":5678}}',
    );
    const failed = { runId: "run_2", status: "failed", error: { code: "timeout" }, result: "ignored", usage };
    expect(serializeCallbackPayload(failed as unknown as RunCallbackPayload)).toBe(
      '{"runId":"run_2","status":"failed","error":{"code":"timeout"},"usage":{"inputTokens":12,"outputTokens":34,"durationMs":5678}}',
    );
    // null is a result (and an error); only a missing one is refused.
    expect(serializeCallbackPayload({ runId: "run_3", status: "succeeded", result: null, usage })).toContain('"result":null');
    expect(serializeCallbackPayload({ runId: "run_4", status: "failed", error: null, usage: { inputTokens: 0, outputTokens: 0, durationMs: 0 } })).toContain('"error":null');
  });

  it("refuses a malformed payload with a TypeError naming the field", () => {
    const refusals: Array<[unknown, string]> = [
      [{ runId: "", status: "succeeded", result: 1, usage }, 'payload.runId must be a run id, got ""'],
      [{ runId: 7, status: "succeeded", result: 1, usage }, "payload.runId must be a run id, got 7"],
      [{ runId: "run_1", status: "succeeded", result: 1 }, "payload.usage.inputTokens must be an integer >= 0, got undefined"],
      [{ runId: "run_1", status: "succeeded", result: 1, usage: { ...usage, inputTokens: -1 } }, "payload.usage.inputTokens must be an integer >= 0, got -1"],
      [{ runId: "run_1", status: "succeeded", result: 1, usage: { ...usage, outputTokens: 1.5 } }, "payload.usage.outputTokens must be an integer >= 0, got 1.5"],
      [{ runId: "run_1", status: "succeeded", result: 1, usage: { ...usage, durationMs: "5" } }, 'payload.usage.durationMs must be an integer >= 0, got "5"'],
      [{ runId: "run_1", status: "succeeded", usage }, "payload.result is required when status is succeeded"],
      [{ runId: "run_1", status: "failed", result: 1, usage }, "payload.error is required when status is failed"],
      [{ runId: "run_1", status: "cancelled", result: 1, usage }, 'payload.status must be succeeded or failed, got "cancelled"'],
    ];
    for (const [payload, message] of refusals) {
      expect(() => serializeCallbackPayload(payload as RunCallbackPayload), message).toThrow(new TypeError(message));
    }
  });
});
