// The Responses API's answers: the `response` object for a finished generation, and the typed server-sent events of a
// streamed one (response.created ... response.completed), each keeping the response when the request asked to store
// it before the client learns it is done.
import type { CollectedResult, ResponseMeta, StreamEncoder } from "../../http/endpoint.js";
import { type InternalEvent, type InternalStopReason, type InternalUsage, ProtocolError } from "../../protocol/internal.js";
import { openAiErrorObject } from "../openai/errors.js";
import { OutputAssembler, type OutputEvent, type OutputItem } from "./output.js";
import type { ResponsesState } from "./parse.js";
import type { JsonRecord } from "./store.js";

/** Keeps a finished response (the request's state says whether and for whom). */
export type ResponseSaver = (state: ResponsesState, response: JsonRecord) => Promise<void>;

/** The `usage` object. */
function wireUsage(usage: InternalUsage): JsonRecord {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** What decides a response object's status fields. */
type Outcome =
  | { status: "in_progress" }
  | { status: "completed" | "incomplete"; reason: InternalStopReason; usage: InternalUsage }
  | { status: "failed"; error: ProtocolError };

/** The response object, with the request's settings echoed as OpenAI's API echoes them. */
export function responseObject(meta: ResponseMeta, state: ResponsesState, outcome: Outcome, output: readonly OutputItem[], outputText: string): JsonRecord {
  const finished = outcome.status === "completed" || outcome.status === "incomplete";
  const failure = outcome.status === "failed" ? openAiErrorObject(outcome.error) : undefined;
  return {
    id: meta.id,
    object: "response",
    created_at: meta.created,
    status: outcome.status,
    background: false,
    completed_at: finished ? Math.floor(Date.now() / 1000) : null,
    error: failure ? { code: failure.code ?? failure.type, message: failure.message } : null,
    incomplete_details: outcome.status === "incomplete" ? { reason: "max_output_tokens" } : null,
    ...state.echo,
    max_tool_calls: null,
    model: meta.model,
    output: structuredClone(output),
    output_text: outputText,
    service_tier: "default",
    store: state.store,
    usage: finished ? wireUsage(outcome.usage) : null,
  };
}

/** How a response's output is written: items named after it, and reasoning summaries when the client asked for them. */
function outputOptions(meta: ResponseMeta, state: ResponsesState) {
  return { responseId: meta.id, summary: state.echo.reasoning.summary !== null };
}

/** The outcome of a finish: incomplete when the token limit ended it. */
function finishOutcome(event: Extract<InternalEvent, { type: "finish" }>): Outcome {
  return { status: event.reason === "max_tokens" ? "incomplete" : "completed", reason: event.reason, usage: event.usage };
}

/** Stores the response when asked to; a failure is the client's to know (the answer is not kept). */
async function keep(state: ResponsesState, response: JsonRecord, save: ResponseSaver): Promise<void> {
  if (!state.store) return;
  try {
    await save(state, response);
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError("bad_gateway", `the response was generated but could not be stored (${(error as Error).message}): retry, or send store: false`);
  }
}

/** The response object of a finished generation, stored first when the request asked for it. */
export async function finishedResponse(meta: ResponseMeta, state: ResponsesState, result: CollectedResult, save: ResponseSaver): Promise<JsonRecord> {
  const assembler = new OutputAssembler(outputOptions(meta, state));
  // The same events a stream would have had, in InternalEvent's order: reasoning, text, then the calls.
  assembler.event({ type: "thinking", text: result.thinking });
  assembler.event({ type: "text", text: result.text, ...(result.logprobs ? { logprobs: result.logprobs.text } : {}) });
  for (const [index, call] of result.toolCalls.entries()) assembler.event({ type: "tool_call", index, ...call });
  assembler.finish(result.finish.reason);
  const response = responseObject(meta, state, finishOutcome(result.finish), assembler.items, assembler.outputText);
  await keep(state, response, save);
  return response;
}

/** One server-sent event: its type as the SSE event name, the object as data. */
function frame(event: JsonRecord & { type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Writes one Responses stream: feed it every InternalEvent in order and write what `event` returns. The finish keeps
 * the response (when asked) before its `response.completed` / `response.incomplete` goes out; an error after the
 * start is a `response.failed` and an `error` event.
 */
export class ResponsesStreamWriter implements StreamEncoder {
  readonly #assembler: OutputAssembler;
  #sequence = 0;
  #ended = false;

  constructor(private readonly meta: ResponseMeta, private readonly state: ResponsesState, private readonly save: ResponseSaver) {
    this.#assembler = new OutputAssembler(outputOptions(meta, state));
  }

  event(event: InternalEvent): string | Promise<string> {
    if (this.#ended) return "";
    switch (event.type) {
      case "start": {
        const response = this.#response({ status: "in_progress" });
        return this.#frames([{ type: "response.created", response }, { type: "response.in_progress", response }]);
      }
      case "finish":
        this.#ended = true;
        return this.#finish(event);
      case "error":
        this.#ended = true;
        return this.#failed(event.error);
      default:
        return this.#frames(this.#assembler.event(event));
    }
  }

  async #finish(event: Extract<InternalEvent, { type: "finish" }>): Promise<string> {
    const done = this.#assembler.finish(event.reason);
    const outcome = finishOutcome(event);
    const response = this.#response(outcome);
    try {
      await keep(this.state, response, this.save);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      return this.#frames(done) + this.#failed(error);
    }
    return this.#frames([...done, { type: outcome.status === "incomplete" ? "response.incomplete" : "response.completed", response }]);
  }

  #failed(error: ProtocolError): string {
    const wire = openAiErrorObject(error);
    return this.#frames([
      ...this.#assembler.fail(),
      { type: "response.failed", response: this.#response({ status: "failed", error }) },
      { type: "error", code: wire.code ?? wire.type, message: wire.message, param: wire.param },
    ]);
  }

  #response(outcome: Outcome): JsonRecord {
    return responseObject(this.meta, this.state, outcome, this.#assembler.items, this.#assembler.outputText);
  }

  #frames(events: readonly OutputEvent[]): string {
    let out = "";
    for (const event of events) out += frame({ ...event, sequence_number: this.#sequence++ });
    return out;
  }
}
