// One Anthropic message (role + content string or content blocks) to ChatMessages. A user message becomes user text
// and role "tool" messages (one per tool_result, order kept); an assistant message becomes one assistant message with
// its text, verified thinking as `reasoning_content`, and tool_use blocks as `tool_calls`. Image blocks (in user
// messages and tool results) become pending images of their message, at the offset of the text before them.
import type { ChatMessage, ChatToolCall } from "../../../engine/chat/messages.js";
import { ContentBuilder, type ImageSource, type PendingImage, imageSourceOfUrl } from "../../images/source.js";
import { child, invalid, isObject, isUnset, own, readArray, readBoolean, readNonEmptyString, readObject, readString } from "./fields.js";
import type { ThinkingSigner } from "./thinking-signature.js";

/** How the text of several blocks (or merged turns) is joined into one message's content. */
export const BLOCK_SEPARATOR = "\n\n";

/** What parsing a message needs to know about the request and the conversation so far. */
export interface ConversationContext {
  /** The requested model slug, for error messages. */
  model: string;
  /** Whether the model takes images. */
  vision: boolean;
  signer: ThinkingSigner;
  /** Tool calls made by earlier assistant turns: id -> tool name. Filled as assistant turns are parsed. */
  toolUses: Map<string, string>;
  /** The images of each message made so far, not yet decoded (merging turns moves them: see parse.ts). */
  images: Map<ChatMessage, PendingImage[]>;
}

const IMAGE_MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/**
 * Parses `messages[index]` into ChatMessages (possibly none: an empty final assistant turn is no prefill at all).
 * `isLast` allows the one empty content Anthropic allows: the optional final assistant turn.
 */
export function parseMessage(value: unknown, index: number, isLast: boolean, context: ConversationContext): ChatMessage[] {
  const path = child("messages", index);
  const message = readObject(value, path);
  const role = own(message, "role");
  if (role !== "user" && role !== "assistant") {
    const hint = role === "system" ? ': put the system prompt in the top-level "system" field' : "";
    throw invalid(child(path, "role"), `must be "user" or "assistant"${hint}`, role);
  }
  const contentPath = child(path, "content");
  const content = own(message, "content");
  if (typeof content === "string") {
    if (content.length === 0) return emptyContent(contentPath, role, isLast);
    return [{ role, content }];
  }
  if (!Array.isArray(content)) throw invalid(contentPath, "must be a string or an array of content blocks", content);
  if (content.length === 0) return emptyContent(contentPath, role, isLast);
  return role === "user" ? userBlocks(content, contentPath, context) : assistantBlocks(content, contentPath, context);
}

function emptyContent(param: string, role: "user" | "assistant", isLast: boolean): ChatMessage[] {
  if (role === "assistant" && isLast) return [];
  throw invalid(param, "must not be empty (only the final assistant message may be empty)");
}

/** The block's `type`, checked to be a string. */
function blockType(block: Record<string, unknown>, path: string): string {
  const type = own(block, "type");
  if (typeof type !== "string") throw invalid(child(path, "type"), "must be a content block type string", type);
  return type;
}

function unsupported(path: string, type: string, role: string): never {
  const allowed = role === "user" ? "text, image, tool_result" : "text, thinking, tool_use";
  throw invalid(child(path, "type"), `must be one of ${allowed} in a ${role} message`, type);
}

/** User blocks: text and images gather into user messages, each tool_result becomes a tool message in place. */
function userBlocks(blocks: unknown[], param: string, context: ConversationContext): ChatMessage[] {
  const out: ChatMessage[] = [];
  let content = new ContentBuilder(BLOCK_SEPARATOR, true);
  const flush = (): void => {
    if (!content.empty) out.push(withImages({ role: "user", content: content.content }, content, context));
    content = new ContentBuilder(BLOCK_SEPARATOR, true);
  };
  blocks.forEach((item, index) => {
    const path = child(param, index);
    const block = readObject(item, path);
    const type = blockType(block, path);
    switch (type) {
      case "text":
        content.text(textOf(block, path));
        return;
      case "image":
        content.image(imageSource(block, path, context), path);
        return;
      case "tool_result":
        flush();
        out.push(toolResult(block, path, context));
        return;
      case "tool_use":
      case "thinking":
      case "redacted_thinking":
        throw invalid(child(path, "type"), `"${type}" blocks may only appear in assistant messages`, type);
      default:
        return unsupported(path, type, "user");
    }
  });
  flush();
  return out;
}

/** Assistant blocks: one assistant message with text, reasoning and tool calls. */
function assistantBlocks(blocks: unknown[], param: string, context: ConversationContext): ChatMessage[] {
  const texts: string[] = [];
  const thoughts: string[] = [];
  const calls: ChatToolCall[] = [];
  blocks.forEach((item, index) => {
    const path = child(param, index);
    const block = readObject(item, path);
    const type = blockType(block, path);
    switch (type) {
      case "text": {
        const text = textOf(block, path);
        if (text.length > 0) texts.push(text);
        return;
      }
      case "thinking":
        thoughts.push(thinking(block, path, context));
        return;
      case "redacted_thinking":
        throw invalid(child(path, "type"), "redacted_thinking blocks are not produced by this server and cannot be sent to it", type);
      case "tool_use":
        calls.push(toolUse(block, path, context));
        return;
      case "image":
      case "tool_result":
        throw invalid(child(path, "type"), `"${type}" blocks may only appear in user messages`, type);
      default:
        return unsupported(path, type, "assistant");
    }
  });
  const message: ChatMessage = { role: "assistant", content: texts.join(BLOCK_SEPARATOR) };
  if (thoughts.length > 0) message.reasoning_content = thoughts.join(BLOCK_SEPARATOR);
  if (calls.length > 0) message.tool_calls = calls;
  return [message];
}

/**
 * A text block's text. Empty text is accepted (and contributes nothing), unlike Anthropic's API: this server, like
 * Anthropic, answers an empty response with an empty text block, and clients send that block back as is.
 */
function textOf(block: Record<string, unknown>, path: string): string {
  return readString(own(block, "text"), child(path, "text"));
}

/** `message`, with the images of its content recorded as its pending images. */
function withImages(message: ChatMessage, content: ContentBuilder, context: ConversationContext): ChatMessage {
  if (content.images.length > 0) context.images.set(message, content.pendingOf(message));
  return message;
}

/**
 * An image block's source: `{type: "base64", media_type, data}` or `{type: "url", url}` (http or https). Rejected
 * for a model without vision. The media type must be one of the four Anthropic takes, but the bytes decide how the
 * image is decoded (a PNG declared as JPEG decodes as PNG).
 */
function imageSource(block: Record<string, unknown>, path: string, context: ConversationContext): ImageSource {
  if (!context.vision) throw invalid(path, `model ${context.model} does not accept image input`);
  const sourcePath = child(path, "source");
  const source = readObject(own(block, "source"), sourcePath);
  const kind = own(source, "type");
  if (kind === "base64") {
    const mediaType = own(source, "media_type");
    if (typeof mediaType !== "string" || !IMAGE_MEDIA_TYPES.includes(mediaType)) {
      throw invalid(child(sourcePath, "media_type"), `must be one of ${IMAGE_MEDIA_TYPES.join(", ")}`, mediaType);
    }
    return { type: "base64", mediaType, data: readNonEmptyString(own(source, "data"), child(sourcePath, "data")) };
  }
  if (kind === "url") {
    const urlPath = child(sourcePath, "url");
    const url = readNonEmptyString(own(source, "url"), urlPath);
    const parsed = imageSourceOfUrl(url);
    if ("refused" in parsed || parsed.type !== "url") throw invalid(urlPath, 'must be an http:// or https:// URL (send an inline image as a "base64" source)', url);
    return parsed;
  }
  if (kind === "file") {
    throw invalid(child(sourcePath, "type"), 'cannot be "file": this server has no Files API; send the image as a "base64" or "url" source', kind);
  }
  throw invalid(child(sourcePath, "type"), 'must be "base64" or "url"', kind);
}

/** A tool_result block -> a tool message answering an earlier tool_use. */
function toolResult(block: Record<string, unknown>, path: string, context: ConversationContext): ChatMessage {
  const idPath = child(path, "tool_use_id");
  const id = readNonEmptyString(own(block, "tool_use_id"), idPath);
  const name = context.toolUses.get(id);
  if (name === undefined) {
    throw invalid(idPath, "must be the id of a tool_use block in an earlier assistant message", id);
  }
  const isError = own(block, "is_error");
  // Checked but not carried: ChatMessage has no error flag, and tool results that failed say so in their text.
  if (!isUnset(isError)) readBoolean(isError, child(path, "is_error"));
  const contentPath = child(path, "content");
  const content = own(block, "content");
  // Anthropic lets a tool result hold images (a screenshot tool): they go to the tool message, where its text is.
  const parts = new ContentBuilder(BLOCK_SEPARATOR, true);
  if (typeof content === "string") parts.text(content);
  else if (!isUnset(content)) {
    readArray(content, contentPath).forEach((item, index) => {
      const partPath = child(contentPath, index);
      const part = readObject(item, partPath);
      const type = blockType(part, partPath);
      if (type === "image") return parts.image(imageSource(part, partPath, context), partPath);
      if (type !== "text") throw invalid(child(partPath, "type"), 'must be "text" or "image" in a tool_result', type);
      parts.text(textOf(part, partPath));
    });
  }
  return withImages({ role: "tool", content: parts.content, tool_call_id: id, name }, parts, context);
}

/** A tool_use block -> a tool call; ids must be unique across the conversation (results refer to them). */
function toolUse(block: Record<string, unknown>, path: string, context: ConversationContext): ChatToolCall {
  const idPath = child(path, "id");
  const id = readNonEmptyString(own(block, "id"), idPath);
  if (context.toolUses.has(id)) throw invalid(idPath, `must be unique: tool_use id "${id}" appears twice`);
  const name = readNonEmptyString(own(block, "name"), child(path, "name"));
  const input = own(block, "input");
  if (!isObject(input)) throw invalid(child(path, "input"), "must be an object (the tool's arguments)", input);
  context.toolUses.set(id, name);
  return { id, type: "function", function: { name, arguments: input } };
}

/** A thinking block -> its text, once its signature proves this server wrote it. */
function thinking(block: Record<string, unknown>, path: string, context: ConversationContext): string {
  const text = readString(own(block, "thinking"), child(path, "thinking"));
  const signature = own(block, "signature");
  if (!context.signer.verify(text, signature)) {
    const what = isUnset(signature) || signature === "" ? "signature is missing" : "signature does not match";
    throw invalid(path, `${what}: thinking blocks must be sent back unmodified, with the signature this server gave them`);
  }
  return text;
}
