// Content blocks -> ChatMessages: text, tool_use, tool_result, thinking (signed), images, system, merging of turns.
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../engine/chat/messages.js";
import { ProtocolError, type ServedModels } from "../../protocol/internal.js";
import { parseMessagesRequest } from "./parse.js";
import { ThinkingSigner } from "./thinking-signature.js";

const MODEL = "service/tim-marathon";
const VISION_MODEL = "service/tim-vision-marathon";
const models: ServedModels = { slugs: () => [MODEL, VISION_MODEL], hasVision: (slug) => slug === VISION_MODEL };
const signer = new ThinkingSigner("blocks-test-secret");

function conversation(messages: unknown[], extra: Record<string, unknown> = {}, model = MODEL): ChatMessage[] {
  return parseMessagesRequest({ model, max_tokens: 100, messages, ...extra }, models, signer).messages;
}

function failure(messages: unknown[], model = MODEL): ProtocolError {
  try {
    conversation(messages, {}, model);
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).kind).toBe("invalid_request");
    return error as ProtocolError;
  }
  throw new Error("expected a ProtocolError");
}

const user = (content: unknown) => ({ role: "user", content });
const assistant = (content: unknown) => ({ role: "assistant", content });
const toolUse = (id: string, name = "get_weather", input: unknown = { city: "Paris" }) => ({ type: "tool_use", id, name, input });
const thinking = (text: string, signature = signer.sign(text)) => ({ type: "thinking", thinking: text, signature });

describe("text and system", () => {
  it("maps string content and joins text blocks, skipping empty ones", () => {
    expect(conversation([user([{ type: "text", text: "a" }, { type: "text", text: "" }, { type: "text", text: "b", cache_control: { type: "ephemeral" } }])])).toEqual([
      { role: "user", content: "a\n\nb" },
    ]);
    expect(conversation([user("q"), assistant("r"), user("s")])).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "r" },
      { role: "user", content: "s" },
    ]);
  });

  it("puts system (string or text blocks) first, and leaves out an empty one", () => {
    expect(conversation([user("q")], { system: "S" })[0]).toEqual({ role: "system", content: "S" });
    expect(conversation([user("q")], { system: [{ type: "text", text: "A" }, { type: "text", text: "B", cache_control: { type: "ephemeral" } }] })[0]).toEqual({
      role: "system",
      content: "A\n\nB",
    });
    expect(conversation([user("q")], { system: "" })).toEqual([{ role: "user", content: "q" }]);
    expect(conversation([user("q")], { system: [] })).toEqual([{ role: "user", content: "q" }]);
  });

  it("merges consecutive same-role messages into one turn", () => {
    expect(conversation([user("a"), user([{ type: "text", text: "b" }]), assistant("c"), assistant([toolUse("t1")])])).toEqual([
      { role: "user", content: "a\n\nb" },
      { role: "assistant", content: "c", tool_calls: [{ id: "t1", type: "function", function: { name: "get_weather", arguments: { city: "Paris" } } }] },
    ]);
  });

  it("keeps a final assistant prefill and drops an empty one", () => {
    expect(conversation([user("q"), assistant("The answer is")]).at(-1)).toEqual({ role: "assistant", content: "The answer is" });
    expect(conversation([user("q"), assistant("")])).toEqual([{ role: "user", content: "q" }]);
    expect(conversation([user("q"), assistant([])])).toEqual([{ role: "user", content: "q" }]);
    const alone = failure([assistant("")]);
    expect([alone.param, alone.message]).toEqual(["messages", "messages: must contain at least one message with content"]);
  });

  it("rejects empty content anywhere else", () => {
    expect(failure([user("")]).param).toBe("messages[0].content");
    expect(failure([user([])]).param).toBe("messages[0].content");
    expect(failure([user("q"), assistant(""), user("r")]).param).toBe("messages[1].content");
  });

  it("rejects malformed messages and blocks with their path", () => {
    const cases: Array<[unknown[], string, RegExp]> = [
      [["hi"], "messages[0]", /object/],
      [[{ role: "system", content: "x" }], "messages[0].role", /top-level "system" field/],
      [[{ role: "tool", content: "x" }], "messages[0].role", /"user" or "assistant"/],
      [[{ content: "x" }], "messages[0].role", /"user" or "assistant"/],
      [[{ role: "user" }], "messages[0].content", /string or an array of content blocks/],
      [[user(5)], "messages[0].content", /string or an array/],
      [[user(["x"])], "messages[0].content[0]", /object/],
      [[user([{ text: "x" }])], "messages[0].content[0].type", /content block type/],
      [[user([{ type: "document", source: {} }])], "messages[0].content[0].type", /text, image, tool_result/],
      [[user("q"), assistant([{ type: "server_tool_use" }])], "messages[1].content[0].type", /text, thinking, tool_use/],
      [[user([{ type: "text", text: 5 }])], "messages[0].content[0].text", /string/],
      [[user([{ type: "text" }])], "messages[0].content[0].text", /string/],
    ];
    for (const [messages, param, message] of cases) {
      const error = failure(messages);
      expect(error.param).toBe(param);
      expect(error.message).toMatch(message);
    }
  });
});

describe("tool_use and tool_result", () => {
  it("maps tool_use to tool_calls (arguments = the input object) and tool_result to tool messages", () => {
    const messages = conversation([
      user("Weather in Paris and Rome?"),
      assistant([{ type: "text", text: "Checking." }, toolUse("t1"), toolUse("t2", "get_weather", { city: "Rome" })]),
      user([
        { type: "tool_result", tool_use_id: "t1", content: "18C" },
        { type: "tool_result", tool_use_id: "t2", content: [{ type: "text", text: "25C" }, { type: "text", text: "sunny" }], is_error: false },
        { type: "text", text: "Thanks" },
      ]),
    ]);
    expect(messages).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "t1", type: "function", function: { name: "get_weather", arguments: { city: "Paris" } } },
          { id: "t2", type: "function", function: { name: "get_weather", arguments: { city: "Rome" } } },
        ],
      },
      { role: "tool", content: "18C", tool_call_id: "t1", name: "get_weather" },
      { role: "tool", content: "25C\n\nsunny", tool_call_id: "t2", name: "get_weather" },
      { role: "user", content: "Thanks" },
    ]);
  });

  it("keeps block order: text before a tool_result stays before it", () => {
    const messages = conversation([user("q"), assistant([toolUse("t1")]), user([{ type: "text", text: "note" }, { type: "tool_result", tool_use_id: "t1", is_error: true }])]);
    expect(messages.slice(2)).toEqual([
      { role: "user", content: "note" },
      { role: "tool", content: "", tool_call_id: "t1", name: "get_weather" },
    ]);
  });

  it("accepts a tool_result answering a call from any earlier turn", () => {
    const messages = conversation([user("q"), assistant([toolUse("t1")]), user("wait"), assistant("ok"), user([{ type: "tool_result", tool_use_id: "t1", content: "late" }])]);
    expect(messages.at(-1)).toEqual({ role: "tool", content: "late", tool_call_id: "t1", name: "get_weather" });
  });

  it("rejects misplaced and malformed tool blocks", () => {
    const call = assistant([toolUse("t1")]);
    const cases: Array<[unknown[], string, RegExp]> = [
      [[user([toolUse("t1")])], "messages[0].content[0].type", /only appear in assistant messages/],
      [[user("q"), assistant([{ type: "tool_result", tool_use_id: "t1" }])], "messages[1].content[0].type", /only appear in user messages/],
      [[user("q"), assistant([toolUse("")])], "messages[1].content[0].id", /non-empty string/],
      [[user("q"), assistant([{ type: "tool_use", id: "t1", input: {} }])], "messages[1].content[0].name", /non-empty string/],
      [[user("q"), assistant([toolUse("t1", "f", [1])])], "messages[1].content[0].input", /must be an object/],
      [[user("q"), assistant([toolUse("t1", "f", "{}")])], "messages[1].content[0].input", /must be an object/],
      [[user("q"), assistant([{ type: "tool_use", id: "t1", name: "f" }])], "messages[1].content[0].input", /must be an object/],
      [[user("q"), assistant([toolUse("t1"), toolUse("t1")])], "messages[1].content[1].id", /unique/],
      [[user("q"), call, user([{ type: "tool_result", tool_use_id: "t9" }])], "messages[2].content[0].tool_use_id", /earlier assistant message/],
      [[user([{ type: "tool_result", tool_use_id: "t1" }]), call], "messages[0].content[0].tool_use_id", /earlier assistant message/],
      [[user("q"), call, user([{ type: "tool_result" }])], "messages[2].content[0].tool_use_id", /non-empty string/],
      [[user("q"), call, user([{ type: "tool_result", tool_use_id: "t1", content: 5 }])], "messages[2].content[0].content", /array/],
      [[user("q"), call, user([{ type: "tool_result", tool_use_id: "t1", content: [{ type: "document" }] }])], "messages[2].content[0].content[0].type", /"text" or "image"/],
      [[user("q"), call, user([{ type: "tool_result", tool_use_id: "t1", is_error: "yes" }])], "messages[2].content[0].is_error", /boolean/],
    ];
    for (const [messages, param, message] of cases) {
      const error = failure(messages);
      expect(error.param, JSON.stringify(messages)).toBe(param);
      expect(error.message).toMatch(message);
    }
  });
});

describe("thinking blocks", () => {
  it("maps a validly signed thinking block to reasoning_content", () => {
    const messages = conversation([user("2+2?"), assistant([thinking("2+2 is 4."), { type: "text", text: "4" }]), user("and 3+3?")]);
    expect(messages[1]).toEqual({ role: "assistant", content: "4", reasoning_content: "2+2 is 4." });
  });

  it("keeps thinking next to tool calls (interleaved tool use)", () => {
    const messages = conversation([user("q"), assistant([thinking("I should look it up."), toolUse("t1")]), user([{ type: "tool_result", tool_use_id: "t1", content: "18C" }])]);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: "",
      reasoning_content: "I should look it up.",
      tool_calls: [{ id: "t1", type: "function", function: { name: "get_weather", arguments: { city: "Paris" } } }],
    });
  });

  it("rejects tampered, foreign, missing and malformed signatures, naming the block", () => {
    const signature = signer.sign("2+2 is 4.");
    const cases: Array<[unknown, RegExp]> = [
      [{ type: "thinking", thinking: "2+2 is 5.", signature }, /signature does not match: thinking blocks must be sent back unmodified/],
      [thinking("2+2 is 4.", new ThinkingSigner("another server").sign("2+2 is 4.")), /signature does not match/],
      [thinking("2+2 is 4.", signature.replace(/^./, (c) => (c === "A" ? "B" : "A"))), /signature does not match/],
      [thinking("2+2 is 4.", "not-a-signature"), /signature does not match/],
      [{ type: "thinking", thinking: "2+2 is 4." }, /signature is missing/],
      [thinking("2+2 is 4.", ""), /signature is missing/],
    ];
    for (const [block, message] of cases) {
      const error = failure([user("q"), assistant([{ type: "text", text: "x" }, block])]);
      expect(error.param).toBe("messages[1].content[1]");
      expect(error.message).toMatch(message);
    }
    expect(failure([user("q"), assistant([{ type: "thinking", signature }])]).param).toBe("messages[1].content[0].thinking");
  });

  it("rejects thinking in user messages and redacted_thinking anywhere", () => {
    expect(failure([user([thinking("x")])]).param).toBe("messages[0].content[0].type");
    const redacted = failure([user("q"), assistant([{ type: "redacted_thinking", data: "abc" }])]);
    expect(redacted.param).toBe("messages[1].content[0].type");
    expect(redacted.message).toMatch(/not produced by this server/);
  });
});

describe("images", () => {
  const png = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };

  it("rejects an image for a model without vision, naming the block", () => {
    const error = failure([user([{ type: "text", text: "What is this?" }, png])]);
    expect(error.param).toBe("messages[0].content[1]");
    expect(error.message).toBe(`messages[0].content[1]: model ${MODEL} does not accept image input`);
  });

  it("rejects an image inside a tool_result for a model without vision", () => {
    const error = failure([user("q"), assistant([toolUse("t1")]), user([{ type: "tool_result", tool_use_id: "t1", content: [png] }])]);
    expect(error.param).toBe("messages[2].content[0].content[0]");
    expect(error.message).toMatch(/does not accept image input/);
  });

  it("checks the source for a vision model, naming the field at fault", () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ type: "image" }, "messages[0].content[0].source", /object/],
      [{ type: "image", source: { type: "file", file_id: "f" } }, "messages[0].content[0].source.type", /cannot be "file": this server has no Files API/],
      [{ type: "image", source: { type: "text", data: "x" } }, "messages[0].content[0].source.type", /"base64" or "url"/],
      [{ type: "image", source: { type: "base64", media_type: "image/bmp", data: "x" } }, "messages[0].content[0].source.media_type", /image\/jpeg/],
      [{ type: "image", source: { type: "base64", media_type: "image/png", data: "" } }, "messages[0].content[0].source.data", /non-empty/],
      [{ type: "image", source: { type: "url", url: "ftp://example.com/a.png" } }, "messages[0].content[0].source.url", /must be an http:\/\/ or https:\/\/ URL/],
      [{ type: "image", source: { type: "url", url: "data:image/png;base64,AAAA" } }, "messages[0].content[0].source.url", /send an inline image as a "base64" source/],
    ];
    for (const [block, param, message] of cases) {
      const error = failure([user([block])], VISION_MODEL);
      expect(error.param).toBe(param);
      expect(error.message).toMatch(message);
    }
  });

  it("rejects images in assistant messages", () => {
    expect(failure([user("q"), assistant([png])]).param).toBe("messages[1].content[0].type");
    expect(failure([user("q"), assistant([png])], VISION_MODEL).message).toMatch(/"image" blocks may only appear in user messages/);
  });

  /** The request parsed for the vision model: its messages, and its pending images as [message index, offset, source, path]. */
  function withImages(messages: unknown[], extra: Record<string, unknown> = {}) {
    const request = parseMessagesRequest({ model: VISION_MODEL, max_tokens: 100, messages, ...extra }, models, signer);
    const images = (request.images ?? []).map((image) => [request.messages.indexOf(image.message), image.offset, image.source, image.path]);
    return { messages: request.messages, images, request };
  }
  const url = { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } };
  const base64 = { type: "base64", data: "iVBORw0KGgo=", mediaType: "image/png" };
  const fetched = { type: "url", url: "https://example.com/cat.jpg" };

  it("keeps a vision model's base64 and URL images pending, each at the offset of the text before it", () => {
    const { messages, images } = withImages([user([png, { type: "text", text: "Compare" }, url, { type: "text", text: "" }, { type: "text", text: "with this." }, png])]);
    expect(messages).toStrictEqual<ChatMessage[]>([{ role: "user", content: "Compare\n\nwith this." }]);
    expect(images).toEqual([
      [0, 0, base64, "messages[0].content[0]"],
      [0, 7, fetched, "messages[0].content[2]"],
      [0, 19, base64, "messages[0].content[5]"],
    ]);
  });

  it("makes a user message of images alone, and keeps the media type declared (the bytes decide the format)", () => {
    const jpegDeclared = { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "iVBORw0KGgo=" } };
    const { messages, images } = withImages([user([jpegDeclared])]);
    expect(messages).toStrictEqual<ChatMessage[]>([{ role: "user", content: "" }]);
    expect(images).toEqual([[0, 0, { ...base64, mediaType: "image/jpeg" }, "messages[0].content[0]"]]);
  });

  it("puts a tool_result's images on its tool message, and the user's images after it on the user message", () => {
    const { messages, images } = withImages([
      user("Take a screenshot"),
      assistant([toolUse("t1", "screenshot", {})]),
      user([
        { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "Here:" }, png] },
        { type: "text", text: "And this one?" },
        url,
      ]),
    ]);
    expect(messages.map((message) => [message.role, message.content])).toEqual([["user", "Take a screenshot"], ["assistant", ""], ["tool", "Here:"], ["user", "And this one?"]]);
    expect(images).toEqual([
      [2, 5, base64, "messages[2].content[0].content[1]"],
      [3, 13, fetched, "messages[2].content[2]"],
    ]);
  });

  it("moves a merged turn's images with its text: after the earlier text and the separator", () => {
    const { messages, images } = withImages([user([{ type: "text", text: "First" }, png]), user([png, { type: "text", text: "Second" }, url]), user([url])], { system: "Be brief." });
    expect(messages).toStrictEqual<ChatMessage[]>([{ role: "system", content: "Be brief." }, { role: "user", content: "First\n\nSecond" }]);
    expect(images).toEqual([
      [1, 5, base64, "messages[0].content[1]"],
      [1, 7, base64, "messages[1].content[0]"],
      [1, 13, fetched, "messages[1].content[2]"],
      [1, 13, fetched, "messages[2].content[0]"],
    ]);
  });

  it("counts tokens of a request with images (count_tokens parses them alike)", () => {
    const request = parseMessagesRequest({ model: VISION_MODEL, messages: [user([png, { type: "text", text: "What is it?" }])] }, models, signer, "count");
    expect(request.images?.map((image) => [image.offset, image.path])).toEqual([[0, "messages[0].content[0]"]]);
  });

  it("carries no pending images for a request without any", () => {
    expect(withImages([user("hello")]).request.images).toBeUndefined();
  });
});
