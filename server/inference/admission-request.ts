// What admission asks of a request about to run on a served model: its prompt's tokens, counted only when a token
// limit or a prepaid balance needs them, and the most output tokens it may produce. An engine that prepares prompts
// off this thread (a WorkerEngine's prompt thread) counts it by preparing it, and the request then runs with that
// prompt (prepared once); otherwise it is counted on this thread when small, else by the engine. Chat routes and
// agent-run turns are admitted through this one description.
import type { PromptCounter } from "../../engine/prompt-counter.js";
import type { PreparedPrompt } from "../../engine/prompt.js";
import { EngineError, type EngineRequest } from "../../engine/request.js";
import type { AdmissionRequest } from "../http/accounting.js";
import type { Principal } from "../http/auth.js";
import { type ServedModel, outputFormatOf } from "../models.js";
import type { InternalRequest, WireFormat } from "../protocol/internal.js";
import { protocolErrorOf, toEngineRequest, type WireFieldNames } from "../protocol/run.js";

/** The most prompt tokens counted on the calling thread (a few milliseconds at most); longer prompts go to the engine. */
const LOCAL_COUNT_MAX_TOKENS = 2048;

/** An admission request that keeps the prompt the engine prepared to count it. */
export interface PromptAdmissionRequest extends AdmissionRequest {
  /** The prompt prepared by `served.engine` when admission counted it so: hand it to that engine's submit. */
  prepared(): PreparedPrompt | undefined;
}

/**
 * The admission request of `request` by `principal` on `served`.
 * `upToContext`: the request's max_tokens is a ceiling the context may lower (agent turns), so what it may produce is
 * the smaller of the two; otherwise max_tokens as given, else what the context leaves.
 * @throws ProtocolError (from inputTokens) when the engine cannot count the prompt (fields named by `wireField`).
 */
export function admissionRequestOf(served: ServedModel, request: InternalRequest, principal: Principal, format: WireFormat, wireField: WireFieldNames, upToContext = false): PromptAdmissionRequest {
  const room = (inputTokens: number) => Math.max(0, served.model.contextSize - inputTokens);
  let prepared: PreparedPrompt | undefined;
  return {
    principal,
    format,
    model: request.model,
    prepared: () => prepared,
    inputTokens: async () => {
      const counted = toEngineRequest("count", request, outputFormatOf(served));
      try {
        // Off this thread, and the request then runs with it: counting costs nothing beyond what submit would do.
        prepared = await served.engine.prepareAhead?.(counted);
        if (prepared) return prepared.tokens.length;
        // Here when the prompt is small: the engine thread answers only between steps. A longer prompt, or one that
        // only auto compaction could fit, is counted by the engine.
        const local = served.promptCounter ? countHere(served.promptCounter, counted, Math.min(LOCAL_COUNT_MAX_TOKENS, served.model.contextSize - 1)) : undefined;
        return local ?? (await served.engine.countTokens(counted));
      } catch (error) {
        if (error instanceof EngineError) throw protocolErrorOf(error, wireField);
        throw error;
      }
    },
    // Several choices (OpenAI `n`) may each produce that many.
    maxOutputTokens: (inputTokens) => (request.choices ?? 1) * (request.maxTokens === undefined ? room(inputTokens) : upToContext ? Math.min(request.maxTokens, room(inputTokens)) : request.maxTokens),
  };
}

/** The prompt's tokens counted on this thread, or undefined when they are more than `limit`. */
function countHere(counter: PromptCounter, request: EngineRequest, limit: number): number | undefined {
  try {
    return counter.count(request, limit);
  } catch (error) {
    if (error instanceof EngineError && error.kind === "too_long") return undefined;
    throw error;
  }
}
