// Legacy completions as server-sent events: a `text_completion` chunk per piece of a choice (its index, text and
// logprobs), a chunk with each choice's finish reason, with `stream_options.include_usage` a last chunk with no
// choices and the usage, then `data: [DONE]`. An error after the first chunk ends the stream with the error object.
import type { InternalUsage, ProtocolError } from "../../protocol/internal.js";
import type { ResponseMeta } from "../../http/endpoint.js";
import { openAiErrorObject } from "../openai/errors.js";
import type { ChoiceDelta } from "./choice.js";
import { type CompletionFinishReason, completionUsage } from "./response.js";

/** One SSE frame. */
function frame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** Writes one legacy completions stream. */
export class CompletionStreamWriter {
  constructor(private readonly meta: ResponseMeta, private readonly includeUsage: boolean) {}

  #chunk(choices: unknown[], usage?: InternalUsage): string {
    const { id, created, model } = this.meta;
    return frame({
      id, object: "text_completion", created, model, system_fingerprint: null, choices,
      ...(this.includeUsage ? { usage: usage ? completionUsage(usage) : null } : {}),
    });
  }

  /** A piece of choice `index`. */
  delta(index: number, delta: ChoiceDelta): string {
    return this.#chunk([{ index, text: delta.text, logprobs: delta.logprobs ?? null, finish_reason: null }]);
  }

  /** Choice `index` ended. */
  finish(index: number, reason: CompletionFinishReason): string {
    return this.#chunk([{ index, text: "", logprobs: null, finish_reason: reason }]);
  }

  /** The end of the stream: the usage chunk when asked for, then [DONE]. */
  end(usage: InternalUsage): string {
    return `${this.includeUsage ? this.#chunk([], usage) : ""}data: [DONE]\n\n`;
  }

  /** A failure after the stream started: the error object, and no [DONE] (as OpenAI's streams end an error). */
  error(error: ProtocolError): string {
    return frame({ error: openAiErrorObject(error) });
  }
}
