// The Responses API's conversation items: `input` parsed into the items this server keeps (each with an id, in the
// shape `GET /v1/responses/{id}/input_items` lists them), and a conversation of items turned into chat messages.
// A user message's `input_image` parts are kept as sent (image_url and detail) and become pending images of its chat
// message, so that a stored conversation shows them to the model again when it is continued.
import { randomBytes } from "node:crypto";
import type { ChatMessage, ChatToolCall } from "../../../engine/chat/messages.js";
import { ContentBuilder, IMAGE_DETAILS, type PendingImage, imageSourceOfUrl } from "../../images/source.js";
import { ProtocolError } from "../../protocol/internal.js";
import { checkCount, REQUEST_LIMITS } from "../../protocol/request-limits.js";
import { invalid, isUnset, optionalString, own, quote, quoteList, requireObject, requireString, unsupported, type JsonObject } from "../openai/fields.js";
import type { JsonRecord } from "./store.js";

/** The prefixes of item ids by type. */
const PREFIXES = ["msg_", "fc_", "fco_", "rs_"] as const;
type ItemPrefix = (typeof PREFIXES)[number];

/** An item id this server made: its response's hex digits, `i` (input) or `o` (output), and the item's index. */
const RESPONSE_ITEM_ID = /^(?:msg|fc|fco|rs)_([0-9a-f]{24})[io]\d{1,6}$/;

/**
 * Names the items of one response after it (`msg_<response digits>o2`: its third output item; `i` for input items),
 * so that a reference to an item (`item_reference`) finds its response by primary key. Without a response id (a
 * request parsed outside the server), ids are random.
 */
export class ItemIds {
  #next = { i: 0, o: 0 };
  /** The response id's hex digits, when it is one this server made. */
  readonly #digits: string | undefined;

  constructor(responseId?: string) {
    this.#digits = /^resp_([0-9a-f]{24})$/.exec(responseId ?? "")?.[1];
  }

  /** The next id of an input (`i`) or output (`o`) item. */
  next(prefix: ItemPrefix, kind: "i" | "o"): string {
    if (this.#digits === undefined) return `${prefix}${randomBytes(12).toString("hex")}`;
    return `${prefix}${this.#digits}${kind}${this.#next[kind]++}`;
  }
}

/** The id of the response an item id names (see ItemIds), or undefined for an id this server did not make. */
export function responseOfItem(itemId: string): string | undefined {
  const digits = RESPONSE_ITEM_ID.exec(itemId)?.[1];
  return digits === undefined ? undefined : `resp_${digits}`;
}

/** An image of a user message, as kept: the URL as sent (a data: URL or an http(s) URL). */
export interface InputImagePart {
  type: "input_image";
  image_url: string;
  /** Checked and kept; changes nothing (Gemma 3 sees every image at one fixed resolution). */
  detail: "auto" | "low" | "high";
  /** Always null: this server has no Files API. */
  file_id: null;
}

/** A message item as kept: input roles carry `input_text` parts (a user's also `input_image`), the assistant `output_text` parts. */
export interface MessageItem {
  id: string;
  type: "message";
  role: "user" | "system" | "developer" | "assistant";
  status: "completed";
  content: Array<{ type: "input_text"; text: string } | { type: "output_text"; text: string; annotations: [] } | InputImagePart>;
}

/** What parsing needs to know about images: whether the model takes them (and its name, for the refusal). */
export interface ImageInput {
  model: string;
  vision: boolean;
}

/** Images refused: a model whose name is not known here. */
const NO_IMAGES: ImageInput = { model: "", vision: false };

/** A function call the model made (sent back as input, or in a stored response's output). */
export interface FunctionCallItem {
  id: string;
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  status: "completed" | "incomplete";
}

/** The result of a function call, from the client. */
export interface FunctionCallOutputItem {
  id: string;
  type: "function_call_output";
  call_id: string;
  output: string;
  status: "completed";
}

/** The model's visible reasoning (this server never encrypts it). */
export interface ReasoningItem {
  id: string;
  type: "reasoning";
  summary: Array<{ type: "summary_text"; text: string }>;
  content: Array<{ type: "reasoning_text"; text: string }>;
  status?: "completed" | "incomplete";
}

/** An item of a conversation. */
export type ConversationItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

/** A reference to an item of a stored response (`{type: "item_reference", id}`), resolved before the request runs. */
export interface ItemReference {
  type: "item_reference";
  id: string;
}

/** An item of `input` as parsed: references not yet resolved. */
export type InputItem = ConversationItem | ItemReference;

/** Item types of the Responses API that belong to tools this server does not have. */
const TOOL_ITEM_TYPES = [
  "file_search_call", "computer_call", "computer_call_output", "web_search_call", "image_generation_call", "code_interpreter_call",
  "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output",
  "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "mcp_call", "custom_tool_call", "custom_tool_call_output", "tool_search_call", "tool_search_output",
];

/**
 * Parses `input`: a string (one user message) or a non-empty array of items: messages (`role` user, system,
 * developer with a string or `input_text` parts, a user's also `input_image` parts for a model with vision;
 * assistant with a string or `output_text` / `refusal` parts),
 * `function_call`, `function_call_output` and `reasoning` items (as earlier responses returned them), and
 * `item_reference`s to items of stored responses. Items without an id get one from `ids`.
 * @throws ProtocolError naming the first offending field (`input[2].content[0].type`).
 */
export function parseInput(value: unknown, ids: ItemIds = new ItemIds(), images: ImageInput = NO_IMAGES): InputItem[] {
  if (isUnset(value)) throw new ProtocolError("invalid_request", "input is required: a string or a non-empty array of input items", "input");
  if (typeof value === "string") return [{ id: ids.next("msg_", "i"), type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: value }] }];
  if (!Array.isArray(value) || value.length === 0) invalid("input", "a string or a non-empty array of input items", value);
  checkCount("input", "items", value.length, REQUEST_LIMITS.messages);
  return value.map((item: unknown, index) => parseItem(requireObject(item, `input[${index}]`), `input[${index}]`, ids, images));
}

function parseItem(item: JsonObject, path: string, ids: ItemIds, images: ImageInput): InputItem {
  const type = own(item, "type");
  const id = optionalString(own(item, "id"), `${path}.id`);
  // Stored items are found by id (input_items' `after`): an empty one could not be stored.
  if (id === "") invalid(`${path}.id`, "a non-empty string", id);
  switch (type ?? "message") {
    case "message":
      return parseMessage(item, path, id ?? ids.next("msg_", "i"), images);
    case "function_call":
      return {
        id: id ?? ids.next("fc_", "i"),
        type: "function_call",
        call_id: requireString(own(item, "call_id"), `${path}.call_id`),
        name: requireString(own(item, "name"), `${path}.name`),
        // Arguments stay the JSON text the model wrote: re-serialising could alter it.
        arguments: requireString(own(item, "arguments"), `${path}.arguments`),
        status: own(item, "status") === "incomplete" ? "incomplete" : "completed",
      };
    case "function_call_output":
      return { id: id ?? ids.next("fco_", "i"), type: "function_call_output", call_id: requireString(own(item, "call_id"), `${path}.call_id`), output: parseCallOutput(own(item, "output"), `${path}.output`), status: "completed" };
    case "reasoning":
      return parseReasoning(item, path, id ?? ids.next("rs_", "i"));
    case "item_reference":
      if (id === undefined) throw new ProtocolError("invalid_request", `${path}.id is required: the id of an item of a stored response`, `${path}.id`);
      return { type: "item_reference", id };
    default:
      if (typeof type === "string" && TOOL_ITEM_TYPES.includes(type)) {
        unsupported(`${path}.type`, `${path}.type ${quote(type)} is not supported: this server has function tools only`);
      }
      return invalid(`${path}.type`, "'message', 'function_call', 'function_call_output' or 'reasoning'", type);
  }
}

const ROLES = ["user", "system", "developer", "assistant"] as const;

function parseMessage(item: JsonObject, path: string, id: string, images: ImageInput): MessageItem {
  const role = own(item, "role");
  if (typeof role !== "string" || !(ROLES as readonly string[]).includes(role)) invalid(`${path}.role`, "'user', 'system', 'developer' or 'assistant'", role);
  const messageRole = role as MessageItem["role"];
  const content = parseContent(own(item, "content"), `${path}.content`, messageRole, images).map((part): MessageItem["content"][number] => {
    if (typeof part !== "string") return part;
    return messageRole === "assistant" ? { type: "output_text", text: part, annotations: [] } : { type: "input_text", text: part };
  });
  return { id, type: "message", role: messageRole, status: "completed", content };
}

/**
 * A message's content as its texts and images: a string, or parts (`input_text`, a user's `input_image`; the
 * assistant's `output_text` or `refusal`).
 */
function parseContent(value: unknown, path: string, role: MessageItem["role"], images: ImageInput): Array<string | InputImagePart> {
  if (typeof value === "string") return [value];
  if (!Array.isArray(value) || value.length === 0) invalid(path, "a string or a non-empty array of content parts", value);
  const allowed = role === "assistant" ? ["output_text", "refusal"] : ["input_text"];
  return value.map((part: unknown, index) => {
    const partPath = `${path}[${index}]`;
    const object = requireObject(part, partPath);
    const type = own(object, "type");
    if (type === "input_image") {
      // Chat templates (Gemma's among them) show images where a user puts them: a system message is its text.
      if (role !== "user") unsupported(`${partPath}.type`, `${partPath} is an input_image part in ${role === "assistant" ? "an" : "a"} ${role} message: images are accepted in user messages only`);
      return parseInputImage(object, partPath, images);
    }
    if (type === "input_file" || type === "input_audio") {
      unsupported(`${partPath}.type`, `${partPath}: ${type.slice("input_".length)} input is not supported by this server: send text only`);
    }
    if (typeof type !== "string" || !allowed.includes(type)) invalid(`${partPath}.type`, `${allowed.map((kind) => `'${kind}'`).join(" or ")} in a ${role} message`, type);
    return type === "refusal" ? requireString(own(object, "refusal"), `${partPath}.refusal`) : requireString(own(object, "text"), `${partPath}.text`);
  });
}

/**
 * `{type: "input_image", image_url, detail?}`: image_url a data: URL or an http(s) URL; `file_id` is refused (this
 * server has no Files API); `detail` ("auto" when absent) is kept and changes nothing.
 */
function parseInputImage(part: JsonObject, path: string, images: ImageInput): InputImagePart {
  if (!images.vision) unsupported(path, `The model '${images.model}' has no vision input: ${path} is an input_image part; send text only`);
  if (!isUnset(own(part, "file_id"))) {
    unsupported(`${path}.file_id`, `${path}.file_id is not supported: this server has no Files API; send the image as image_url (a data: URL or an http(s) URL)`);
  }
  const value = own(part, "image_url");
  if (isUnset(value)) throw new ProtocolError("invalid_request", `${path}.image_url is required: a data: URL or an http(s) URL`, `${path}.image_url`);
  const url = requireString(value, `${path}.image_url`);
  const source = imageSourceOfUrl(url);
  if ("refused" in source) invalid(`${path}.image_url`, source.refused, url);
  const detail = own(part, "detail");
  if (!isUnset(detail) && (typeof detail !== "string" || !IMAGE_DETAILS.includes(detail))) invalid(`${path}.detail`, "'auto', 'low' or 'high'", detail);
  return { type: "input_image", image_url: url, detail: isUnset(detail) ? "auto" : (detail as InputImagePart["detail"]), file_id: null };
}

/** A function call's output: a string, or `input_text` parts (joined). */
function parseCallOutput(value: unknown, path: string): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return invalid(path, "a string or an array of input_text parts", value);
  return value.map((part: unknown, index) => {
    const object = requireObject(part, `${path}[${index}]`);
    const type = own(object, "type");
    if (type !== "input_text") {
      if (type === "input_image") unsupported(`${path}[${index}].type`, `${path}[${index}]: images in a function_call_output are not supported by this server: send the image in a user message after the outputs`);
      if (type === "input_file") unsupported(`${path}[${index}].type`, `${path}[${index}]: file output is not supported by this server: send text only`);
      invalid(`${path}[${index}].type`, "'input_text'", type);
    }
    return requireString(own(object, "text"), `${path}[${index}].text`);
  }).join("\n");
}

/** A reasoning item sent back: its text is in `content` (this server's) or, failing that, in `summary`. */
function parseReasoning(item: JsonObject, path: string, id: string): ReasoningItem {
  if (!isUnset(own(item, "encrypted_content"))) {
    unsupported(`${path}.encrypted_content`, `${path}.encrypted_content is not supported: this server returns reasoning as visible text and never encrypts it`);
  }
  const texts = (key: "summary" | "content", partType: string) => {
    const value = own(item, key);
    if (isUnset(value)) return [];
    if (!Array.isArray(value)) return invalid(`${path}.${key}`, `an array of ${partType} parts`, value);
    return value.map((part: unknown, index) => {
      const object = requireObject(part, `${path}.${key}[${index}]`);
      if (own(object, "type") !== partType) invalid(`${path}.${key}[${index}].type`, `'${partType}'`, own(object, "type"));
      return requireString(own(object, "text"), `${path}.${key}[${index}].text`);
    });
  };
  const summary = texts("summary", "summary_text");
  const content = texts("content", "reasoning_text");
  return {
    id,
    type: "reasoning",
    summary: summary.map((text) => ({ type: "summary_text", text })),
    content: content.map((text) => ({ type: "reasoning_text", text })),
  };
}

/** Where the items of a conversation came from, for error paths: the earlier turns have no path in this request. */
export interface ConversationParts {
  /** Items of the stored conversation this request continues (already checked when they were stored). */
  earlier: readonly ConversationItem[];
  /** This request's `input`. */
  input: readonly ConversationItem[];
}

/** Images while a conversation is turned into chat messages: whether the model takes them, and where they go. */
export interface ConversationImages extends ImageInput {
  /** The images of the messages, in order, as they are made. */
  pending: PendingImage[];
}

/**
 * The conversation as chat messages: `instructions` as the first system message, then the items in order (a user
 * message's images pending in `images`, at the offset of the text before them: text parts join with "\n"). A
 * function call joins the assistant message before it (or starts one); reasoning joins the assistant message or
 * function call after it (in the stored conversation, reasoning that nothing follows is an assistant turn without
 * text); a function call output must answer a call of the assistant turn before it, and every call must be answered
 * before anything else follows (as OpenAI's API requires: a template would otherwise show a call without its result).
 * @throws ProtocolError naming the `input` item at fault.
 */
export function chatMessagesOf(instructions: string | undefined, parts: ConversationParts, images: ConversationImages = { ...NO_IMAGES, pending: [] }): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions !== undefined && instructions !== "") messages.push({ role: "system", content: instructions });
  const items = [...parts.earlier, ...parts.input];
  const pathOf = (index: number) => (index >= parts.earlier.length ? `input[${index - parts.earlier.length}]` : "previous_response_id");
  /** The assistant message the current turn's function calls join, while nothing else has followed it. */
  let turn: ChatMessage | undefined;
  /** Reasoning waiting for the assistant message or call it belongs to. */
  let reasoning: { text: string; index: number } | undefined;
  /**
   * Reasoning that nothing follows: in this request's input, a 400; in the stored conversation, the turn of a
   * response that ended inside its reasoning (the token limit cut it), kept as an assistant turn without text.
   */
  const endTurn = (pending: { text: string; index: number }) => {
    if (pending.index >= parts.earlier.length) {
      unsupported(pathOf(pending.index), `${pathOf(pending.index)} is a reasoning item without the assistant message or function call that follows it`);
    }
    messages.push({ role: "assistant", content: "", reasoning_content: pending.text });
    newTurn([]);
    turn = undefined;
    reasoning = undefined;
  };
  /** Call ids of the latest assistant turn that no function_call_output has answered yet. */
  const unanswered = new Set<string>();
  /**
   * Call ids of the latest assistant message, while only tool results have followed it: what an output may answer.
   * NOTE: kept as the items go, not looked up per output: a turn of n calls and n outputs stays linear.
   */
  let answerable: string[] = [];
  let answerableIds = new Set<string>();
  const newTurn = (callIds: string[]) => {
    answerable = callIds;
    answerableIds = new Set(callIds);
  };
  const refuseUnanswered = (path: string, where: string) => {
    const one = unanswered.size === 1;
    unsupported(path, `${where} ${one ? "function call" : "function calls"} ${quoteList([...unanswered])} ${one ? "has" : "have"} no function_call_output: send ${one ? "its result" : "their results"} first`);
  };
  items.forEach((item, index) => {
    const continuesTurn = item.type === "function_call" && turn !== undefined && !reasoning;
    if (unanswered.size > 0 && item.type !== "function_call_output" && !continuesTurn) refuseUnanswered(pathOf(index), `${pathOf(index)} follows an assistant turn whose`);
    if (reasoning && !(item.type === "message" && item.role === "assistant") && item.type !== "function_call") endTurn(reasoning);
    switch (item.type) {
      case "reasoning":
        reasoning = { text: [...item.content, ...(item.content.length === 0 ? item.summary : [])].map((part) => part.text).join("\n"), index };
        return;
      case "message": {
        const built = new ContentBuilder("\n", false);
        item.content.forEach((part, partIndex) => {
          if (part.type !== "input_image") return built.text(part.text);
          // Checked when parsed; checked again here: the model may be another than the stored conversation's.
          const path = index >= parts.earlier.length ? `${pathOf(index)}.content[${partIndex}]` : pathOf(index);
          if (!images.vision) unsupported(path, `The model '${images.model}' has no vision input: ${path} holds an input_image part; send text only`);
          const source = imageSourceOfUrl(part.image_url);
          if ("refused" in source) unsupported(path, `${path} holds an input_image whose image_url is not ${source.refused}`);
          built.image(source, path);
        });
        const message: ChatMessage = { role: item.role === "developer" ? "system" : item.role, content: built.content };
        images.pending.push(...built.pendingOf(message));
        if (item.role === "assistant" && reasoning) message.reasoning_content = reasoning.text;
        reasoning = undefined;
        messages.push(message);
        newTurn([]);
        turn = item.role === "assistant" ? message : undefined;
        return;
      }
      case "function_call": {
        const call: ChatToolCall = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } };
        if (!turn || reasoning) {
          turn = { role: "assistant", content: "" };
          if (reasoning) turn.reasoning_content = reasoning.text;
          messages.push(turn);
          newTurn([]);
        }
        reasoning = undefined;
        (turn.tool_calls ??= []).push(call);
        answerable.push(item.call_id);
        answerableIds.add(item.call_id);
        unanswered.add(item.call_id);
        return;
      }
      case "function_call_output": {
        if (!answerableIds.has(item.call_id)) {
          const made = answerable.length > 0 ? `its calls: ${quoteList(answerable)}` : "it made none";
          unsupported(`${pathOf(index)}.call_id`, `${pathOf(index)}.call_id ${quote(item.call_id)} answers no function call of the turn before it (${made})`);
        }
        messages.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
        unanswered.delete(item.call_id);
        turn = undefined;
        return;
      }
    }
  });
  if (reasoning) endTurn(reasoning);
  if (unanswered.size > 0) refuseUnanswered("input", "input ends after an assistant turn whose");
  return messages;
}

/** Items as stored (plain JSON). Every reference must have been resolved: a reference is never kept. */
export function storedItems(items: readonly InputItem[]): JsonRecord[] {
  if (items.some((item) => item.type === "item_reference")) throw new Error("an item reference was not resolved before the response was stored");
  return items as unknown as JsonRecord[];
}
