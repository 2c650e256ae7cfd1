// Scripted conversations and a plain one-line-per-message template for the compaction tests (plain code: no
// test-runner imports).

import type { ChatMessage, ChatToolCall } from "../chat/messages.js";

function callText(call: ChatToolCall): string {
  const args = call.function.arguments;
  return `[call ${call.function.name} ${typeof args === "string" ? args : JSON.stringify(args)}]`;
}

/** Renders `role: <think>reasoning</think>content [call name args]\n` per message: every token is a character. */
export function renderPlain(messages: readonly ChatMessage[]): string {
  return messages
    .map((message) => {
      const reasoning = message.reasoning_content ? `<think>${message.reasoning_content}</think>` : "";
      const calls = message.tool_calls?.length ? ` ${message.tool_calls.map(callText).join(" ")}` : "";
      return `${message.role}: ${reasoning}${message.content}${calls}\n`;
    })
    .join("");
}

/** The character count of {@link renderPlain}: an exactly additive token counter. */
export function countPlain(messages: readonly ChatMessage[]): number {
  return renderPlain(messages).length;
}

/** A multi-line file listing as a tool returns it; it ends with a line "}" (its clean tail). */
export function fileContent(step: number): string {
  return `export const value${step} = ${step};\n// line 2 of file ${step}\nexport function f${step}() {\n  return value${step} * 2;\n}`;
}

/** One agentic step: an assistant message with reasoning and a tool call, and the tool's result. */
export function agenticStep(step: number): ChatMessage[] {
  return [
    {
      role: "assistant",
      content: "",
      reasoning_content: `Step ${step}: I should read file ${step} next.`,
      tool_calls: [{ id: `call_${step}`, type: "function", function: { name: "read_file", arguments: `{"path": "src/file${step}.ts"}` } }],
    },
    { role: "tool", tool_call_id: `call_${step}`, name: "read_file", content: fileContent(step) },
  ];
}

/** A system prompt, one user task, then `steps` agentic steps: the request after the last tool result. */
export function agenticConversation(steps: number): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the failing test in the repository." },
  ];
  for (let step = 1; step <= steps; step++) messages.push(...agenticStep(step));
  return messages;
}

/** A system prompt (10 tokens), `answered` turns of a 57-token question and an 82-token answer, and one more question. */
export function chatConversation(answered: number): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: "system", content: "S" }];
  for (let turn = 1; turn <= answered + 1; turn++) {
    messages.push({ role: "user", content: `Question ${turn}: `.padEnd(50, "q") });
    if (turn <= answered) messages.push({ role: "assistant", content: `Answer ${turn}: `.padEnd(70, "a") });
  }
  return messages;
}

/** Length of the common prefix of two sequences. */
export function commonPrefix<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  let length = 0;
  while (length < a.length && length < b.length && a[length] === b[length]) length++;
  return length;
}

/** Length of the common suffix of two sequences. */
export function commonSuffix<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  let length = 0;
  while (length < a.length && length < b.length && a[a.length - 1 - length] === b[b.length - 1 - length]) length++;
  return length;
}

/**
 * How `next` reuses `previous` under the section rule: `previous` = A B C and `next` = A C D, with A their common
 * prefix and C the longest run that ends `previous` and continues `next` right after A (B as short as possible).
 * `suffix` 0 means only the prefix is reused: C was not found (more than one span pruned, or something inserted).
 */
export function sectionSplit<T>(previous: ArrayLike<T>, next: ArrayLike<T>): { prefix: number; pruned: number; suffix: number } {
  const prefix = commonPrefix(previous, next);
  for (let resume = prefix; resume < previous.length; resume++) {
    const suffix = previous.length - resume;
    if (prefix + suffix > next.length) continue;
    let same = true;
    for (let offset = 0; offset < suffix && same; offset++) same = previous[resume + offset] === next[prefix + offset];
    if (same) return { prefix, pruned: resume - prefix, suffix };
  }
  return { prefix, pruned: previous.length - prefix, suffix: 0 };
}
