// Conversations for chat templates in OpenAI's harmony format (gpt-oss). Such a template reads an assistant turn's
// reasoning from `thinking` (not `reasoning_content`), refuses a turn with both text and reasoning beside a tool call,
// renders one call per assistant message with its arguments as an object (`arguments|tojson`), and names a tool
// result after the call just before it. This adapts loom's messages to that, as llama.cpp's gpt-oss chat handler does.
import type { ChatMessage, ChatToolCall } from "./messages.js";

/** Reasoning at the start of an assistant message's content, as chat completions returns it. */
const THINK_IN_CONTENT = /^\s*<think>([\s\S]*?)<\/think>\s*/;

/** An assistant message as a harmony template reads it. */
export type HarmonyChatMessage = Omit<ChatMessage, "reasoning_content"> & { thinking?: string };

/**
 * Whether `template` is a harmony template: it writes the `<|channel|>` marker (llama.cpp picks its gpt-oss handler the
 * same way), and the vocabulary has that marker as a token when `hasToken` is given.
 */
export function isHarmonyTemplate(template: string | null, hasToken?: (text: string) => boolean): boolean {
  return template !== null && template.includes("<|channel|>") && (hasToken?.("<|channel|>") ?? true);
}

/**
 * `messages` as a harmony template expects them: leading system messages joined into one (the template reads only
 * the first); assistant reasoning as `thinking` (also reasoning sent back at the start of the content between
 * `<think>` tags, as chat completions returns it), and beside tool calls the text dropped when there is reasoning (the
 * template refuses both); string arguments parsed to objects; an assistant message with several calls split into one
 * message per call, each followed by the results that answer it (by `tool_call_id`), so every result is named after
 * its own call. Results that answer none of them follow the last call, in order.
 */
export function harmonyMessages(messages: readonly ChatMessage[]): HarmonyChatMessage[] {
  const out: HarmonyChatMessage[] = [];
  let index = 0;
  const systems: string[] = [];
  while (index < messages.length && messages[index]!.role === "system") systems.push(messages[index++]!.content);
  if (systems.length > 0) out.push({ role: "system", content: systems.join("\n\n") });
  while (index < messages.length) {
    const message = messages[index++]!;
    if (message.role !== "assistant") {
      out.push({ ...message });
      continue;
    }
    const { reasoning_content: given, tool_calls: calls, ...rest } = message;
    // Chat completions returns reasoning inside the content between think tags; sent back that way, it is reasoning.
    const tagged = given === undefined ? THINK_IN_CONTENT.exec(rest.content) : null;
    if (tagged) rest.content = rest.content.slice(tagged[0].length);
    const reasoning = given ?? tagged?.[1];
    const turn: HarmonyChatMessage = { ...rest, ...(reasoning ? { thinking: reasoning } : {}) };
    if (!calls || calls.length === 0) {
      out.push(turn);
      continue;
    }
    if (turn.thinking) turn.content = "";
    // The tool results that follow this turn, to be placed after their own calls.
    const results: ChatMessage[] = [];
    while (index < messages.length && messages[index]!.role === "tool") results.push(messages[index++]!);
    calls.forEach((call, position) => {
      out.push(position === 0 ? { ...turn, tool_calls: [withObjectArguments(call)] } : { role: "assistant", content: "", tool_calls: [withObjectArguments(call)] });
      const last = position === calls.length - 1;
      const answers = results.filter((result) => (last ? !calls.slice(0, -1).some((other) => answersCall(result, other)) : answersCall(result, call)));
      out.push(...answers.map((result) => ({ ...result })));
    });
  }
  return out;
}

/**
 * Tool definitions as a harmony template reads them: it writes `"// " + description` for every function, so a
 * function without a description gets an empty one (llama.cpp always passes one) instead of failing the render.
 */
export function harmonyTools(tools: readonly unknown[]): unknown[] {
  return tools.map((tool) => {
    if (typeof tool !== "object" || tool === null) return tool;
    const fn = (tool as { function?: unknown }).function;
    if (typeof fn !== "object" || fn === null || typeof (fn as { description?: unknown }).description === "string") return tool;
    return { ...tool, function: { ...fn, description: "" } };
  });
}

/** Whether a tool result answers `call` (by its id; results without ids answer the last call). */
function answersCall(result: ChatMessage, call: ChatToolCall): boolean {
  return result.tool_call_id !== undefined && call.id !== undefined && result.tool_call_id === call.id;
}

/** The call with its arguments as an object when they are a JSON object's text (the template writes them with tojson). */
function withObjectArguments(call: ChatToolCall): ChatToolCall {
  const args = call.function.arguments;
  if (typeof args !== "string") return call;
  try {
    const parsed: unknown = JSON.parse(args === "" ? "{}" : args);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return { ...call, function: { ...call.function, arguments: parsed as Record<string, unknown> } };
  } catch {
    // Not JSON: the template writes the text as it came.
  }
  return call;
}
