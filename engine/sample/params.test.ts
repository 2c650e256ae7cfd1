// Tests for sampling-parameter defaults and validation.

import { describe, expect, it } from "vitest";
import { SamplingParamError } from "./errors.js";
import { DEFAULT_SAMPLING_PARAMS, type SamplingParams, validateSamplingParams } from "./params.js";

function withField(field: string, value: unknown): SamplingParams {
  return { ...DEFAULT_SAMPLING_PARAMS, [field]: value } as SamplingParams;
}

describe("validateSamplingParams", () => {
  it("accepts the defaults and typical settings", () => {
    expect(() => validateSamplingParams({ ...DEFAULT_SAMPLING_PARAMS })).not.toThrow();
    expect(() =>
      validateSamplingParams({
        temperature: 0, topP: 0.95, topK: 40, minP: 0.05, frequencyPenalty: -0.5,
        presencePenalty: 1.5, repetitionPenalty: 1.1, penaltyLastN: -1, seed: 123,
      }),
    ).not.toThrow();
  });

  const bad: Array<[string, unknown]> = [
    ["temperature", -0.1], ["temperature", Number.NaN], ["temperature", Infinity],
    ["topP", -0.01], ["topP", 1.01], ["topP", Number.NaN],
    ["topK", -1], ["topK", 2.5], ["topK", Number.NaN],
    ["minP", -0.01], ["minP", 1.5], ["minP", Number.NaN],
    ["frequencyPenalty", Number.NaN], ["frequencyPenalty", Infinity],
    ["presencePenalty", -Infinity], ["presencePenalty", Number.NaN],
    ["repetitionPenalty", 0], ["repetitionPenalty", Number.NaN], ["repetitionPenalty", Infinity],
    ["penaltyLastN", -2], ["penaltyLastN", 1.5],
    ["seed", 0.5], ["seed", Number.NaN], ["topK", "40"], ["temperature", null],
  ];
  it.each(bad)("rejects %s = %s and names the field", (field, value) => {
    let error: unknown;
    try {
      validateSamplingParams(withField(field, value));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SamplingParamError);
    expect((error as SamplingParamError).field).toBe(field);
    expect((error as SamplingParamError).message).toContain(field);
  });
});

describe("validateSamplingParams on partial parameters", () => {
  it("fills missing and undefined fields with the defaults, keeps given ones, and returns a new object", () => {
    const partial: Partial<SamplingParams> = { temperature: 0.7, topK: 40, seed: 9, topP: undefined };
    const params = validateSamplingParams(partial);
    expect(params).toEqual({ ...DEFAULT_SAMPLING_PARAMS, temperature: 0.7, topK: 40, seed: 9 });
    expect(params.penaltyLastN).toBe(64);
    expect(params).not.toBe(partial);
    expect(validateSamplingParams()).toEqual(DEFAULT_SAMPLING_PARAMS);
  });

  it("validates what it fills", () => {
    expect(() => validateSamplingParams({ topP: 2 })).toThrow(SamplingParamError);
  });
});
