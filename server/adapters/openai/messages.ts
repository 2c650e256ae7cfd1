// Parses the `messages` array of a chat-completions request into engine ChatMessages: roles (developer -> system),
// string or content-part content, assistant tool calls and reasoning, and tool results answering those calls.
// `image_url` parts of user messages become pending images at the offset of the text before them.
import type { ChatMessage, ChatRole, ChatToolCall } from "../../../engine/chat/messages.js";
import { ContentBuilder, IMAGE_DETAILS, type ImageSource, type PendingImage, imageSourceOfUrl } from "../../images/source.js";
import { ProtocolError } from "../../protocol/internal.js";
import { checkCount, REQUEST_LIMITS } from "../../protocol/request-limits.js";
import { own, invalid, isUnset, optionalString, quote, quoteList, requireObject, requireString, unsupported, type JsonObject } from "./fields.js";

/** What message parsing needs to know about the requested model. */
export interface MessageContext {
  model: string;
  /** Whether the model takes images (else image parts are rejected as such). */
  hasVision: boolean;
  /** Where the images of the messages go, in order, as they are parsed (absent: nowhere, for a model without vision). */
  images?: PendingImage[];
}

type WireRole = "system" | "developer" | "user" | "assistant" | "tool";
const WIRE_ROLES: readonly WireRole[] = ["system", "developer", "user", "assistant", "tool"];

/** The content-part types each role may carry in the OpenAI API. */
const PART_TYPES: Record<WireRole, readonly string[]> = {
  system: ["text"],
  developer: ["text"],
  user: ["text", "image_url", "input_audio", "file"],
  assistant: ["text", "refusal"],
  tool: ["text"],
};

/**
 * Parses and validates `messages`.
 *
 * @throws ProtocolError("invalid_request") naming the first offending field, e.g. `messages[1].content[0].text`.
 */
export function parseMessages(value: unknown, context: MessageContext): ChatMessage[] {
  if (isUnset(value)) {
    throw new ProtocolError("invalid_request", "messages is required: a non-empty array of {role, content} objects", "messages");
  }
  if (!Array.isArray(value) || value.length === 0) invalid("messages", "a non-empty array of {role, content} objects", value);
  checkCount("messages", "messages", value.length, REQUEST_LIMITS.messages);

  const messages: ChatMessage[] = [];
  // Ids of the tool calls made by the latest assistant message, while only tool messages have followed it.
  let answerableCallIds: ReadonlySet<string> | undefined;
  value.forEach((item: unknown, index) => {
    const path = `messages[${index}]`;
    const message = parseMessage(requireObject(item, path), path, context);
    if (message.role === "tool") {
      checkToolAnswer(message.tool_call_id ?? "", answerableCallIds, path);
    } else {
      answerableCallIds = message.tool_calls ? new Set(message.tool_calls.map((call) => call.id ?? "")) : undefined;
    }
    messages.push(message);
  });
  return messages;
}

/** One message: role, content, and the fields only some roles may carry. */
function parseMessage(message: JsonObject, path: string, context: MessageContext): ChatMessage {
  const rolePath = `${path}.role`;
  const wireRole = own(message, "role");
  if (wireRole === "function") {
    unsupported(rolePath, `${rolePath} 'function' is deprecated and not supported: send tool results as role 'tool' with a tool_call_id`);
  }
  if (typeof wireRole !== "string" || !(WIRE_ROLES as readonly string[]).includes(wireRole)) {
    invalid(rolePath, `one of ${WIRE_ROLES.map((role) => `'${role}'`).join(", ")}`, wireRole);
  }
  const role = wireRole as WireRole;
  // Chat templates know no "developer": it is OpenAI's newer name for the system role.
  const chatRole: ChatRole = role === "developer" ? "system" : role;

  rejectOnOtherRoles(message, path, role, "tool_calls", "assistant");
  rejectOnOtherRoles(message, path, role, "reasoning_content", "assistant");
  rejectOnOtherRoles(message, path, role, "tool_call_id", "tool");
  if (!isUnset(own(message, "function_call"))) {
    unsupported(`${path}.function_call`, `${path}.function_call is deprecated and not supported: use tool_calls`);
  }

  const toolCalls = role === "assistant" ? parseToolCalls(own(message, "tool_calls"), `${path}.tool_calls`) : undefined;
  const content = parseMessageContent(message, path, role, toolCalls, context);
  const result: ChatMessage = { role: chatRole, content: content.content };
  if (content.images.length > 0) context.images?.push(...content.pendingOf(result));

  const name = optionalString(own(message, "name"), `${path}.name`);
  if (name !== undefined) result.name = name;
  if (toolCalls) result.tool_calls = toolCalls;
  if (role === "assistant") {
    const reasoning = optionalString(own(message, "reasoning_content"), `${path}.reasoning_content`);
    if (reasoning !== undefined) result.reasoning_content = reasoning;
  }
  if (role === "tool") {
    const id = own(message, "tool_call_id");
    if (isUnset(id)) {
      throw new ProtocolError("invalid_request", `${path}.tool_call_id is required on tool messages: the id of the tool call this message answers`, `${path}.tool_call_id`);
    }
    result.tool_call_id = requireString(id, `${path}.tool_call_id`);
  }
  return result;
}

/** Rejects a field set on a role that cannot carry it (a silent drop would change the conversation). */
function rejectOnOtherRoles(message: JsonObject, path: string, role: WireRole, key: string, allowedRole: WireRole): void {
  if (role !== allowedRole && !isUnset(own(message, key))) {
    unsupported(`${path}.${key}`, `${path}.${key} is only allowed on ${allowedRole} messages, not on a ${role} message`);
  }
}

/**
 * A message's content: its text, with its images at their offsets; null or absent only for an assistant message
 * that makes tool calls.
 */
function parseMessageContent(
  message: JsonObject,
  path: string,
  role: WireRole,
  toolCalls: ChatToolCall[] | undefined,
  context: MessageContext,
): ContentBuilder {
  // NOTE: text parts join with a newline, as vLLM does, so adjacent parts cannot run words together.
  const built = new ContentBuilder("\n", false);
  const contentPath = `${path}.content`;
  const content = own(message, "content");
  if (role === "assistant") {
    const refusal = optionalString(own(message, "refusal"), `${path}.refusal`);
    if (isUnset(content)) {
      // An earlier refusal stands in for the content it replaced.
      if (toolCalls || refusal !== undefined) {
        built.text(toolCalls ? "" : refusal!);
        return built;
      }
      throw new ProtocolError("invalid_request", `${contentPath} is required unless the assistant message has tool_calls`, contentPath);
    }
  } else if (isUnset(content)) {
    throw new ProtocolError("invalid_request", `${contentPath} is required on ${role} messages: a string or an array of content parts`, contentPath);
  }
  if (typeof content === "string") {
    built.text(content);
    return built;
  }
  if (!Array.isArray(content) || content.length === 0) invalid(contentPath, "a string or a non-empty array of content parts", content);
  content.forEach((part: unknown, index) => {
    const partPath = `${contentPath}[${index}]`;
    const read = parseContentPart(part, partPath, role, context);
    if (typeof read === "string") built.text(read);
    else built.image(read, partPath);
  });
  return built;
}

/** One content part: its text or image, or an error saying why the part cannot be served. */
function parseContentPart(value: unknown, path: string, role: WireRole, context: MessageContext): string | ImageSource {
  const part = requireObject(value, path);
  const type = own(part, "type");
  const allowed = PART_TYPES[role];
  if (type === "image_url" && role !== "user") {
    // Chat templates (Gemma's among them) show images where a user puts them; OpenAI's API takes them there only.
    unsupported(`${path}.type`, `${path} is an image_url part in ${role === "assistant" ? "an" : "a"} ${role} message: images are accepted in user messages only; send the image in a user message`);
  }
  if (typeof type !== "string" || !allowed.includes(type)) {
    invalid(`${path}.type`, `${allowed.map((kind) => `'${kind}'`).join(" or ")} in a ${role} message`, type);
  }
  switch (type) {
    case "text":
      return requireString(own(part, "text"), `${path}.text`);
    case "refusal":
      return requireString(own(part, "refusal"), `${path}.refusal`);
    case "image_url":
      if (!context.hasVision) {
        unsupported(path, `The model '${context.model}' has no vision input: ${path} is an image_url part; send text only`);
      }
      return imageUrlPart(part, path);
    case "input_audio":
      return unsupported(path, `${path}: audio input is not supported`);
    default:
      return unsupported(path, `${path}: file input is not supported`);
  }
}

/**
 * `{type: "image_url", image_url: {url, detail?}}`: a data: URL or an http(s) URL. `detail` is checked and changes
 * nothing: Gemma 3 sees every image at one fixed resolution.
 */
function imageUrlPart(part: JsonObject, path: string): ImageSource {
  const imageUrl = requireObject(own(part, "image_url"), `${path}.image_url`);
  const url = requireString(own(imageUrl, "url"), `${path}.image_url.url`);
  const detail = own(imageUrl, "detail");
  if (!isUnset(detail) && (typeof detail !== "string" || !IMAGE_DETAILS.includes(detail))) {
    invalid(`${path}.image_url.detail`, "'auto', 'low' or 'high'", detail);
  }
  const source = imageSourceOfUrl(url);
  if ("refused" in source) return invalid(`${path}.image_url.url`, source.refused, url);
  return source;
}

/** Assistant `tool_calls`: a non-empty array of {id, type: "function", function: {name, arguments: string}}. */
function parseToolCalls(value: unknown, path: string): ChatToolCall[] | undefined {
  if (isUnset(value)) return undefined;
  if (!Array.isArray(value) || value.length === 0) invalid(path, "a non-empty array of tool calls", value);
  return value.map((item: unknown, index): ChatToolCall => {
    const callPath = `${path}[${index}]`;
    const call = requireObject(item, callPath);
    const id = requireString(own(call, "id"), `${callPath}.id`);
    const type = own(call, "type");
    if (type !== "function") invalid(`${callPath}.type`, "'function'", type);
    const callFunction = requireObject(own(call, "function"), `${callPath}.function`);
    const name = requireString(own(callFunction, "name"), `${callPath}.function.name`);
    // Arguments stay the JSON string the client sent: templates take strings, and re-serialising could alter it.
    const args = requireString(own(callFunction, "arguments"), `${callPath}.function.arguments`);
    return { id, type: "function", function: { name, arguments: args } };
  });
}

/** A tool message must answer a call of the assistant message before it (tool messages in between allowed). */
function checkToolAnswer(toolCallId: string, answerableCallIds: ReadonlySet<string> | undefined, path: string): void {
  if (!answerableCallIds) {
    unsupported(`${path}.role`, `${path} is a tool message but does not follow an assistant message with tool_calls`);
  }
  if (!answerableCallIds.has(toolCallId)) {
    const expected = quoteList([...answerableCallIds]);
    unsupported(`${path}.tool_call_id`, `${path}.tool_call_id ${quote(toolCallId)} answers no tool call of the preceding assistant message (its ids: ${expected})`);
  }
}
