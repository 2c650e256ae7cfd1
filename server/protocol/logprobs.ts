// Which generated tokens' log-probabilities go with which InternalEvent. The engine reports them on its text events
// (those of the tokens each text completes); the output readers then split that text into reasoning, answer and tool
// calls, and may hold some back (a tag not yet complete). A token's log-probability goes with the first event that
// brings text after it arrived: reasoning (`thinking`) or answer (`text`), so concatenating the events' logprobs gives
// the tokens of the visible text in order. Tokens that only wrote tool calls or markup a reader dropped come with none.
import type { TokenLogprob } from "../../engine/request.js";
import type { InternalEvent } from "./internal.js";

/** Holds the log-probabilities of tokens whose text has not come out of the readers yet. */
export class LogprobAttribution {
  #pending: TokenLogprob[] = [];

  /** The log-probabilities of the tokens of one engine text event, before its text goes to the reader. */
  add(logprobs: readonly TokenLogprob[] | undefined): void {
    if (logprobs) this.#pending.push(...logprobs);
  }

  /**
   * Attaches what is pending to the first event of `events` with text. When they have none but a tool call came, the
   * pending tokens wrote that call: dropped. Otherwise (all held back) they wait for the next events.
   * `end`: nothing follows; what is still pending is dropped.
   */
  attach(events: InternalEvent[], end = false): InternalEvent[] {
    if (this.#pending.length === 0) return events;
    const index = events.findIndex((event) => (event.type === "text" || event.type === "thinking") && event.text !== "");
    if (index >= 0) {
      const event = events[index] as Extract<InternalEvent, { type: "text" | "thinking" }>;
      events[index] = { ...event, logprobs: this.#pending };
      this.#pending = [];
    } else if (end || events.some((event) => event.type === "tool_call_start" || event.type === "tool_call_delta" || event.type === "tool_call")) {
      this.#pending = [];
    }
    return events;
  }
}
