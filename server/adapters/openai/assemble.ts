// A streamed chat completion put back together: the `chat.completion` object its `chat.completion.chunk` frames add
// up to, as a client's SDK assembles it (content, tool calls by index, logprobs, each choice's finish reason). Read
// from the chunks as sent, so it holds whatever the stream held (several choices, logprobs) without knowing how they
// were made. What stored chat completions keep of a stream.
import type { JsonRecord } from "./stored.js";

/** One choice as its chunks build it. */
interface ChoiceParts {
  /** Text fields of the delta (content, refusal, ...), concatenated. */
  text: Map<string, string>;
  toolCalls: Map<number, { id?: string; type?: string; function: { name: string; arguments: string } }>;
  /** Log-probability lists (content, refusal), concatenated; null while every chunk had none. */
  logprobs: Map<string, unknown[]> | null;
  finishReason: unknown;
}

/** Adds chunks, then gives the completion they make. */
export class CompletionAssembler {
  #head: JsonRecord | undefined;
  readonly #choices = new Map<number, ChoiceParts>();
  #usage: unknown;

  /** One chunk's body (a frame's parsed `data`). Frames that are not chunks (an error) are ignored. */
  add(chunk: JsonRecord): void {
    if (chunk.object !== "chat.completion.chunk") return;
    const { choices, usage, object: _object, ...head } = chunk;
    this.#head ??= head;
    if (usage !== undefined && usage !== null) this.#usage = usage;
    if (!Array.isArray(choices)) return;
    for (const choice of choices as JsonRecord[]) this.#addChoice(choice);
  }

  /**
   * The `chat.completion` object, choices by index.
   * @param usage the usage to report when no chunk carried one (a stream without include_usage).
   */
  completion(usage: unknown): JsonRecord {
    const { id, created, model, ...rest } = this.#head ?? {};
    const choices = [...this.#choices.entries()].sort(([a], [b]) => a - b).map(([index, parts]) => ({
      index,
      message: messageOf(parts),
      finish_reason: parts.finishReason ?? null,
      logprobs: parts.logprobs === null ? null : { content: null, refusal: null, ...Object.fromEntries(parts.logprobs) },
    }));
    return { id, object: "chat.completion", created, model, ...rest, choices, usage: this.#usage ?? usage };
  }

  #addChoice(choice: JsonRecord): void {
    const index = typeof choice.index === "number" ? choice.index : 0;
    let parts = this.#choices.get(index);
    if (!parts) this.#choices.set(index, (parts = { text: new Map(), toolCalls: new Map(), logprobs: null, finishReason: undefined }));
    const delta = (choice.delta ?? {}) as JsonRecord;
    for (const [field, value] of Object.entries(delta)) {
      if (field === "role" || field === "tool_calls") continue;
      if (typeof value === "string") parts.text.set(field, (parts.text.get(field) ?? "") + value);
    }
    for (const call of (Array.isArray(delta.tool_calls) ? delta.tool_calls : []) as JsonRecord[]) {
      const callIndex = typeof call.index === "number" ? call.index : parts.toolCalls.size;
      let whole = parts.toolCalls.get(callIndex);
      if (!whole) parts.toolCalls.set(callIndex, (whole = { function: { name: "", arguments: "" } }));
      if (typeof call.id === "string") whole.id = call.id;
      if (typeof call.type === "string") whole.type = call.type;
      const fn = (call.function ?? {}) as JsonRecord;
      if (typeof fn.name === "string") whole.function.name += fn.name;
      if (typeof fn.arguments === "string") whole.function.arguments += fn.arguments;
    }
    const logprobs = choice.logprobs;
    if (logprobs !== null && typeof logprobs === "object") {
      parts.logprobs ??= new Map();
      for (const [field, list] of Object.entries(logprobs as JsonRecord)) {
        if (Array.isArray(list)) parts.logprobs.set(field, [...(parts.logprobs.get(field) ?? []), ...list]);
      }
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) parts.finishReason = choice.finish_reason;
  }
}

/** The assistant message of a choice: as the whole response writes it (content null when only tools were called). */
function messageOf(parts: ChoiceParts): JsonRecord {
  const content = parts.text.get("content") ?? "";
  const calls = [...parts.toolCalls.entries()].sort(([a], [b]) => a - b).map(([, call]) => ({ id: call.id, type: call.type ?? "function", function: call.function }));
  const { content: _content, refusal, ...otherText } = Object.fromEntries(parts.text);
  const message: JsonRecord = { role: "assistant", content: content === "" && calls.length > 0 ? null : content, refusal: refusal ?? null, ...otherText };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** The JSON bodies of an SSE text's `data:` frames, `[DONE]` left out. */
export function chunksOf(sse: string): JsonRecord[] {
  const chunks: JsonRecord[] = [];
  for (const block of sse.split("\n\n")) {
    if (!block.startsWith("data: ")) continue;
    const data = block.slice("data: ".length);
    if (data !== "[DONE]") chunks.push(JSON.parse(data) as JsonRecord);
  }
  return chunks;
}
