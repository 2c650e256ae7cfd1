// Builds a response's output items from InternalEvents, and the typed stream events that announce them: reasoning
// first, then the message, then function calls (InternalEvent's order). The whole response and the stream are built
// by this one class, so they have the same items with the same ids.
import type { TokenLogprob } from "../../../engine/request.js";
import type { InternalEvent, InternalStopReason } from "../../protocol/internal.js";
import { type OpenAiTokenLogprob, wireLogprobs } from "../openai/logprobs.js";
import { ItemIds, type FunctionCallItem, type MessageItem, type ReasoningItem } from "./items.js";

/** An output item while it is being written (`in_progress`) and once done. */
export type OutputItem =
  | (Omit<ReasoningItem, "status"> & { status: "in_progress" | "completed" | "incomplete" })
  | (Omit<MessageItem, "status" | "content"> & { status: "in_progress" | "completed" | "incomplete"; content: OutputText[] })
  | (Omit<FunctionCallItem, "status"> & { status: "in_progress" | "completed" | "incomplete" });

interface OutputText {
  type: "output_text";
  text: string;
  annotations: [];
  /** With `include: ["message.output_text.logprobs"]`: the text's tokens (server/adapters/openai/logprobs.ts); else empty. */
  logprobs: OpenAiTokenLogprob[];
}

/** One stream event, before its sequence number. */
export type OutputEvent = { type: string } & Record<string, unknown>;

/** The item being written, and where its text goes. */
interface OpenItem {
  index: number;
  item: OutputItem;
  /** The tool-call index of a function call (InternalEvent's). */
  callIndex?: number;
}

/** How the output is written. */
export interface OutputOptions {
  /** The response's id: its items are named after it (ItemIds); without it, item ids are random. */
  responseId?: string;
  /**
   * Whether the client asked for a reasoning summary (`reasoning.summary`): the reasoning item's `summary` then also
   * carries the reasoning, whole (loom never shortens it), with the `response.reasoning_summary_*` events that the
   * clients reading only summaries (the AI SDK, LangChain) show.
   */
  summary?: boolean;
}

/** Collects output items from events; `event()` returns the stream events each one causes. */
export class OutputAssembler {
  readonly items: OutputItem[] = [];
  #open: OpenItem | undefined;
  readonly #calls = new Map<number, OpenItem>();
  readonly #ids: ItemIds;
  readonly #summary: boolean;

  constructor(options: OutputOptions = {}) {
    this.#ids = new ItemIds(options.responseId);
    this.#summary = options.summary ?? false;
  }

  /** The events for one InternalEvent (start, finish and error are the caller's: they concern the whole response). */
  event(event: InternalEvent): OutputEvent[] {
    switch (event.type) {
      case "thinking":
        return event.text === "" ? [] : this.#reasoningDelta(event.text);
      case "text":
        return event.text === "" ? [] : this.#textDelta(event.text, event.logprobs);
      case "tool_call_start":
        return this.#startCall(event.index, event.id, event.name);
      case "tool_call_delta": {
        const open = this.#calls.get(event.index);
        if (!open || open.item.type !== "function_call") return [];
        open.item.arguments += event.arguments;
        return [{ type: "response.function_call_arguments.delta", item_id: open.item.id, output_index: open.index, delta: event.arguments }];
      }
      case "tool_call": {
        const events = this.#calls.has(event.index) ? [] : this.#startCall(event.index, event.id, event.name);
        const open = this.#calls.get(event.index)!;
        const item = open.item as Extract<OutputItem, { type: "function_call" }>;
        item.arguments = event.argumentsText ?? JSON.stringify(event.arguments);
        events.push({ type: "response.function_call_arguments.done", item_id: item.id, output_index: open.index, name: item.name, arguments: item.arguments });
        // The call stays open: the next item, or the finish (which knows whether the token limit cut it), closes it.
        return events;
      }
      default:
        return [];
    }
  }

  /**
   * Closes the item still open at the finish: `incomplete` when the token limit cut it (a function call so cut keeps
   * the arguments written so far).
   */
  finish(reason: InternalStopReason): OutputEvent[] {
    return this.#close(reason === "max_tokens" ? "incomplete" : "completed");
  }

  /** Closes the item still open when the response failed: it is incomplete. */
  fail(): OutputEvent[] {
    return this.#close("incomplete");
  }

  /** The answer's text: every output_text part, joined (the SDKs' `output_text`). */
  get outputText(): string {
    return this.items.flatMap((item) => (item.type === "message" ? item.content.map((part) => part.text) : [])).join("");
  }

  #reasoningDelta(text: string): OutputEvent[] {
    const events: OutputEvent[] = [];
    if (this.#open?.item.type !== "reasoning") {
      events.push(...this.#close("completed"));
      const item: OutputItem = { id: this.#ids.next("rs_", "o"), type: "reasoning", summary: [], content: [], status: "in_progress" };
      events.push(...this.#add(item));
      const index = this.#open!.index;
      item.content.push({ type: "reasoning_text", text: "" });
      events.push({ type: "response.content_part.added", item_id: item.id, output_index: index, content_index: 0, part: { type: "reasoning_text", text: "" } });
      if (this.#summary) {
        item.summary.push({ type: "summary_text", text: "" });
        events.push({ type: "response.reasoning_summary_part.added", item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: "" } });
      }
    }
    const open = this.#open!;
    const item = open.item as Extract<OutputItem, { type: "reasoning" }>;
    item.content[0]!.text += text;
    events.push({ type: "response.reasoning_text.delta", item_id: item.id, output_index: open.index, content_index: 0, delta: text });
    if (this.#summary) {
      item.summary[0]!.text += text;
      events.push({ type: "response.reasoning_summary_text.delta", item_id: item.id, output_index: open.index, summary_index: 0, delta: text });
    }
    return events;
  }

  #textDelta(text: string, tokens: readonly TokenLogprob[] | undefined): OutputEvent[] {
    const events: OutputEvent[] = [];
    if (this.#open?.item.type !== "message") {
      events.push(...this.#close("completed"));
      const item: OutputItem = { id: this.#ids.next("msg_", "o"), type: "message", role: "assistant", status: "in_progress", content: [] };
      events.push(...this.#add(item));
      item.content.push({ type: "output_text", text: "", annotations: [], logprobs: [] });
      events.push({ type: "response.content_part.added", item_id: item.id, output_index: this.#open!.index, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
    }
    const open = this.#open!;
    const part = (open.item as Extract<OutputItem, { type: "message" }>).content[0]!;
    part.text += text;
    const logprobs = tokens ? wireLogprobs(tokens) : [];
    part.logprobs.push(...logprobs);
    events.push({ type: "response.output_text.delta", item_id: open.item.id, output_index: open.index, content_index: 0, delta: text, logprobs });
    return events;
  }

  #startCall(callIndex: number, callId: string, name: string): OutputEvent[] {
    const events = this.#close("completed");
    const item: OutputItem = { id: this.#ids.next("fc_", "o"), type: "function_call", call_id: callId, name, arguments: "", status: "in_progress" };
    events.push(...this.#add(item));
    this.#calls.set(callIndex, this.#open!);
    return events;
  }

  /** Adds an item and makes it the open one. */
  #add(item: OutputItem): OutputEvent[] {
    this.#open = { index: this.items.length, item };
    this.items.push(item);
    return [{ type: "response.output_item.added", output_index: this.#open.index, item: structuredClone(item) }];
  }

  /** Closes the open item: its done events, in the order OpenAI sends them. */
  #close(status: "completed" | "incomplete"): OutputEvent[] {
    const open = this.#open;
    if (!open) return [];
    this.#open = undefined;
    const { item, index } = open;
    item.status = status;
    const events: OutputEvent[] = [];
    if (item.type === "reasoning") {
      const part = item.content[0]!;
      events.push({ type: "response.reasoning_text.done", item_id: item.id, output_index: index, content_index: 0, text: part.text });
      events.push({ type: "response.content_part.done", item_id: item.id, output_index: index, content_index: 0, part: structuredClone(part) });
      const summary = item.summary[0];
      if (summary) {
        events.push({ type: "response.reasoning_summary_text.done", item_id: item.id, output_index: index, summary_index: 0, text: summary.text });
        events.push({ type: "response.reasoning_summary_part.done", item_id: item.id, output_index: index, summary_index: 0, part: structuredClone(summary) });
      }
    } else if (item.type === "message") {
      const part = item.content[0]!;
      events.push({ type: "response.output_text.done", item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: part.logprobs });
      events.push({ type: "response.content_part.done", item_id: item.id, output_index: index, content_index: 0, part: structuredClone(part) });
    }
    events.push({ type: "response.output_item.done", output_index: index, item: structuredClone(item) });
    return events;
  }
}
