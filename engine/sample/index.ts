// Public surface of the sampling module: parameters, the sampler, probability helpers and stop sequences.

export { argmax } from "../../kernels/sample/argmax.js";
export { SamplingInputError, SamplingParamError, StopSequenceError } from "./errors.js";
export { applyPenalties, countWindowTokens, penaltiesActive, penalizeLogit, type PenaltyParams } from "./penalties.js";
export { randomSeed, SeededRandom } from "./random.js";
export { checkDeviceToken, type DeviceSampling, Sampler } from "./sampler.js";
export { DEFAULT_SAMPLING_PARAMS, type SamplingParams, validateSamplingParams } from "./params.js";
export { logSoftmax, probabilities } from "./softmax.js";
export { type StopMatchResult, StopSequenceMatcher } from "./stop.js";
