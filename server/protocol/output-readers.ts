// Reads a model's generated text as InternalEvents, in the syntax its chat template taught it: tags (`<think>` reasoning,
// Hermes `<tool_call>` calls: server/protocol/think-splitter.ts, tool-calls.ts; Mistral `[TOOL_CALLS]`: mistral.ts; Gemma 4's
// thought channel and `<|tool_call>`: gemma4.ts) or
// OpenAI's harmony channels (gpt-oss: server/protocol/harmony.ts). Each reader takes text deltas and is flushed once at the end.
import { GEMMA4_TOOL_CALL_OPEN } from "../../engine/chat/gemma4.js";
import { Gemma4CallReader } from "./gemma4.js";
import { HarmonyParser, type HarmonyPiece } from "./harmony.js";
import type { InternalEvent } from "./internal.js";
import { MistralCallReader } from "./mistral.js";
import { type SplitPiece, type ThinkTags, ThinkSplitter } from "./think-splitter.js";
import { ThoughtChannelSplitter } from "./thought-channels.js";
import { ToolCallExtractor, type ToolCallPiece, type ToolCallTags } from "./tool-calls.js";

/** One request's reader of generated text. */
export interface OutputReader {
  /** Whether reasoning is told apart (usage then reports its tokens). */
  readonly readsReasoning: boolean;
  /** Whether the output is inside reasoning now. */
  readonly reasoning: boolean;
  /** Tool calls found so far. */
  readonly calls: number;
  /** Whether a call ended without whole arguments: it is not one the client should run. */
  readonly endedInsideCall: boolean;
  /** The events a delta settles. */
  push(text: string): InternalEvent[];
  /** The rest at the end; `cut`: the token limit or a stop sequence ended generation (held markup is dropped). */
  flush(cut: boolean): InternalEvent[];
}

/** Takes tool calls out of answer text, in one model family's syntax. */
export interface CallReader {
  readonly calls: number;
  readonly endedInsideCall: boolean;
  push(text: string): ToolCallPiece[];
  flush(cut: boolean): ToolCallPiece[];
}

/**
 * Reads tagged output: reasoning between think tags when `tags.think` is set (the request turned thinking on; Gemma
 * 4's thought channels, wherever they come, with "gemma4-channels"), and,
 * when `tags.toolCall` is set (the request offers tools), calls taken out of the answer, streamed as constrained
 * decoding writes them: Hermes-style between tool-call tags, or Mistral's after `[TOOL_CALLS]` in its `layout`.
 */
export class TaggedOutputReader implements OutputReader {
  private readonly splitter: ThinkSplitter | ThoughtChannelSplitter | undefined;
  private readonly extractor: CallReader | undefined;
  /**
   * Gemma 4 with thought channels and calls: a call is read by the call reader alone, so channel markers inside its
   * strings stay its text (as llama.cpp reads a string to its closing mark); the splitter reads what lies outside.
   */
  private readonly gemma4: { splitter: ThoughtChannelSplitter; calls: Gemma4CallReader } | undefined;
  /** Inside a Gemma 4 call: deltas go to the call reader until it ends. */
  private inGemma4Call = false;

  constructor(tags: { think?: ThinkTags | "gemma4-channels"; toolCall?: ToolCallTags | { mistral: "json" | "args" } | { gemma4: true } }) {
    const calls = tags.toolCall;
    const gemma4Calls = calls && "gemma4" in calls ? new Gemma4CallReader() : undefined;
    const channels = tags.think === "gemma4-channels" ? new ThoughtChannelSplitter(gemma4Calls ? GEMMA4_TOOL_CALL_OPEN : undefined) : undefined;
    this.splitter = channels ?? (tags.think && tags.think !== "gemma4-channels" ? new ThinkSplitter(tags.think) : undefined);
    this.gemma4 = channels && gemma4Calls ? { splitter: channels, calls: gemma4Calls } : undefined;
    this.extractor = !calls
      ? undefined
      : "mistral" in calls
        ? new MistralCallReader(calls.mistral)
        : "gemma4" in calls
          ? gemma4Calls
          : new ToolCallExtractor(calls, undefined, true);
  }

  get readsReasoning(): boolean {
    return this.splitter !== undefined;
  }

  get reasoning(): boolean {
    return this.splitter?.reasoning ?? false;
  }

  get calls(): number {
    return this.extractor?.calls ?? 0;
  }

  get endedInsideCall(): boolean {
    return this.extractor?.endedInsideCall ?? false;
  }

  push(text: string): InternalEvent[] {
    if (this.gemma4) return this.pushGemma4(this.gemma4, text);
    return this.splitter ? this.split(this.splitter.push(text)) : this.answer("text", text);
  }

  /** Channels split outside calls, calls read whole by the call reader, in turn as the text goes. */
  private pushGemma4(gemma4: { splitter: ThoughtChannelSplitter; calls: Gemma4CallReader }, text: string): InternalEvent[] {
    const events: InternalEvent[] = [];
    let rest: string | undefined = text;
    while (rest !== undefined) {
      if (this.inGemma4Call) {
        const read = gemma4.calls.readCall(rest);
        events.push(...read.pieces.map(eventOf));
        rest = read.rest;
        this.inGemma4Call = rest === undefined;
        continue;
      }
      events.push(...this.split(gemma4.splitter.push(rest)));
      rest = gemma4.splitter.takeStopped();
      this.inGemma4Call = rest !== undefined;
    }
    return events;
  }

  flush(cut: boolean): InternalEvent[] {
    const events = this.splitter ? this.split(this.splitter.flush(cut)) : [];
    if (this.extractor) events.push(...this.extractor.flush(cut).map(eventOf));
    return events;
  }

  private split(pieces: SplitPiece[]): InternalEvent[] {
    return pieces.flatMap((piece) => this.answer(piece.kind, piece.text));
  }

  /** Reasoning as is, answer text through the extractor. */
  private answer(kind: "thinking" | "text", text: string): InternalEvent[] {
    if (kind === "thinking") return [{ type: "thinking", text }];
    return this.extractor ? this.extractor.push(text).map(eventOf) : [{ type: "text", text }];
  }
}

/**
 * Reads harmony output (gpt-oss): the analysis channel is reasoning, always (the model always reasons); final and
 * commentary without a recipient are the answer; with `extractCalls`, messages to `functions.NAME` are tool calls.
 */
export class HarmonyOutputReader implements OutputReader {
  private readonly parser: HarmonyParser;
  readonly readsReasoning = true;

  constructor(extractCalls: boolean) {
    this.parser = new HarmonyParser(extractCalls);
  }

  get reasoning(): boolean {
    return this.parser.reasoning;
  }

  get calls(): number {
    return this.parser.calls;
  }

  get endedInsideCall(): boolean {
    return this.parser.endedInsideCall;
  }

  push(text: string): InternalEvent[] {
    return this.parser.push(text).map(eventOf);
  }

  flush(cut: boolean): InternalEvent[] {
    return this.parser.flush(cut).map(eventOf);
  }
}

/** The InternalEvent of a piece of output. */
function eventOf(piece: ToolCallPiece | HarmonyPiece): InternalEvent {
  switch (piece.kind) {
    case "thinking": return { type: "thinking", text: piece.text };
    case "text": return { type: "text", text: piece.text };
    case "tool_call_start": return { type: "tool_call_start", index: piece.index, id: piece.id, name: piece.name };
    case "tool_call_delta": return { type: "tool_call_delta", index: piece.index, arguments: piece.arguments };
    case "tool_call": {
      const { kind: _, ...call } = piece;
      return { type: "tool_call", ...call };
    }
  }
}
