// Reads a model's generated text as InternalEvents, in the syntax its chat template taught it: tags (`<think>` reasoning,
// Hermes `<tool_call>` calls: server/protocol/think-splitter.ts, tool-calls.ts; Mistral `[TOOL_CALLS]`: mistral.ts; Gemma 4's
// thought channel and `<|tool_call>`: gemma4.ts) or
// OpenAI's harmony channels (gpt-oss: server/protocol/harmony.ts). Each reader takes text deltas and is flushed once at the end.
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

  constructor(tags: { think?: ThinkTags | "gemma4-channels"; toolCall?: ToolCallTags | { mistral: "json" | "args" } | { gemma4: true } }) {
    this.splitter = tags.think === "gemma4-channels" ? new ThoughtChannelSplitter() : tags.think ? new ThinkSplitter(tags.think) : undefined;
    const calls = tags.toolCall;
    this.extractor = !calls
      ? undefined
      : "mistral" in calls
        ? new MistralCallReader(calls.mistral)
        : "gemma4" in calls
          ? new Gemma4CallReader()
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
    return this.splitter ? this.split(this.splitter.push(text)) : this.answer("text", text);
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
