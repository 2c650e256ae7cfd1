// Message rules of the chat-completions parser: roles, content parts, vision, assistant tool calls and reasoning,
// tool results; and the tools / tool_choice rules.
import { describe, expect, it } from "vitest";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import type { ChatMessage } from "../../../engine/chat/messages.js";
import type { InternalRequest, ServedModels } from "../../protocol/internal.js";
import { parseChatCompletionRequest } from "./parse.js";
import { rejection } from "../testing/rejection.js";

const MODEL = "service/tim-qwen-27b";
const VISION_MODEL = "service/tim-vision-27b";
const models: ServedModels = {
  slugs: () => [MODEL, VISION_MODEL],
  hasVision: (slug) => slug === VISION_MODEL,
};

function parse(messages: unknown, extra: Record<string, unknown> = {}, model = MODEL): InternalRequest {
  return parseChatCompletionRequest({ model, messages, ...extra }, models);
}

const user = { role: "user", content: "Hi" } as const;

describe("messages: roles and content", () => {
  it("maps every role, developer to system", () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: "S" },
      { role: "developer", content: "D" },
      { role: "user", content: "U", name: "alice" },
      { role: "assistant", content: "A" },
      { role: "user", content: "U2" },
    ];
    expect(parse(messages).messages).toStrictEqual<ChatMessage[]>([
      { role: "system", content: "S" },
      { role: "system", content: "D" },
      { role: "user", content: "U", name: "alice" },
      { role: "assistant", content: "A" },
      { role: "user", content: "U2" },
    ]);
  });

  it("joins text parts with newlines", () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: [{ type: "text", text: "S1" }, { type: "text", text: "S2" }] },
      { role: "user", content: [{ type: "text", text: "line one" }, { type: "text", text: "line two" }] },
      { role: "assistant", content: [{ type: "text", text: "A" }, { type: "refusal", refusal: "No." }] },
    ];
    expect(parse(messages).messages.map((message) => message.content)).toStrictEqual(["S1\nS2", "line one\nline two", "A\nNo."]);
  });

  it("keeps an empty string content", () => {
    expect(parse([{ role: "user", content: "" }]).messages).toStrictEqual([{ role: "user", content: "" }]);
  });

  it("keeps assistant reasoning_content", () => {
    const messages = [user, { role: "assistant", content: "4", reasoning_content: "2+2" }, user];
    expect(parse(messages).messages[1]).toStrictEqual({ role: "assistant", content: "4", reasoning_content: "2+2" });
  });

  it("uses an assistant refusal when its content is absent", () => {
    expect(parse([user, { role: "assistant", content: null, refusal: "I can't." }]).messages[1]).toStrictEqual({
      role: "assistant",
      content: "I can't.",
    });
  });

  it.each([
    [undefined, "messages", "messages is required: a non-empty array of {role, content} objects"],
    [[], "messages", "messages must be a non-empty array of {role, content} objects, got an array of 0"],
    [{ role: "user" }, "messages", "messages must be a non-empty array of {role, content} objects, got an object"],
    [["hi"], "messages[0]", 'messages[0] must be an object, got the string "hi"'],
    [[{ content: "x" }], "messages[0].role", "messages[0].role must be one of 'system', 'developer', 'user', 'assistant', 'tool', got nothing"],
    [[user, { role: "bot", content: "x" }], "messages[1].role", `messages[1].role must be one of 'system', 'developer', 'user', 'assistant', 'tool', got the string "bot"`],
    [
      [{ role: "function", name: "f", content: "x" }],
      "messages[0].role",
      "messages[0].role 'function' is deprecated and not supported: send tool results as role 'tool' with a tool_call_id",
    ],
    [[{ role: "user" }], "messages[0].content", "messages[0].content is required on user messages: a string or an array of content parts"],
    [[{ role: "system", content: null }], "messages[0].content", "messages[0].content is required on system messages: a string or an array of content parts"],
    [[user, { role: "assistant" }], "messages[1].content", "messages[1].content is required unless the assistant message has tool_calls"],
    [[{ role: "user", content: 42 }], "messages[0].content", "messages[0].content must be a string or a non-empty array of content parts, got 42"],
    [[{ role: "user", content: [] }], "messages[0].content", "messages[0].content must be a string or a non-empty array of content parts, got an array of 0"],
    [[{ role: "user", content: [{ type: "text" }] }], "messages[0].content[0].text", "messages[0].content[0].text must be a string, got nothing"],
    [
      [{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: 7 }] }],
      "messages[0].content[1].text",
      "messages[0].content[1].text must be a string, got 7",
    ],
    [[{ role: "user", content: ["a"] }], "messages[0].content[0]", 'messages[0].content[0] must be an object, got the string "a"'],
    [
      [{ role: "user", content: [{ type: "video", url: "x" }] }],
      "messages[0].content[0].type",
      `messages[0].content[0].type must be 'text' or 'image_url' or 'input_audio' or 'file' in a user message, got the string "video"`,
    ],
    [
      [{ role: "system", content: [{ type: "image_url", image_url: { url: "x" } }] }],
      "messages[0].content[0].type",
      "messages[0].content[0] is an image_url part in a system message: images are accepted in user messages only; send the image in a user message",
    ],
    [
      [{ role: "user", content: [{ type: "refusal", refusal: "x" }] }],
      "messages[0].content[0].type",
      `messages[0].content[0].type must be 'text' or 'image_url' or 'input_audio' or 'file' in a user message, got the string "refusal"`,
    ],
    [
      [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "", format: "wav" } }] }],
      "messages[0].content[0]",
      "messages[0].content[0]: audio input is not supported",
    ],
    [[{ role: "user", content: [{ type: "file", file: { file_id: "f" } }] }], "messages[0].content[0]", "messages[0].content[0]: file input is not supported"],
    [[{ role: "user", content: "x", name: 3 }], "messages[0].name", "messages[0].name must be a string, got 3"],
    [[user, { role: "assistant", content: "x", reasoning_content: 1 }], "messages[1].reasoning_content", "messages[1].reasoning_content must be a string, got 1"],
    [[{ role: "user", content: "x", reasoning_content: "r" }], "messages[0].reasoning_content", "messages[0].reasoning_content is only allowed on assistant messages, not on a user message"],
    [[{ role: "user", content: "x", tool_call_id: "c" }], "messages[0].tool_call_id", "messages[0].tool_call_id is only allowed on tool messages, not on a user message"],
    [
      [{ role: "user", content: "x", tool_calls: [] }],
      "messages[0].tool_calls",
      "messages[0].tool_calls is only allowed on assistant messages, not on a user message",
    ],
    [
      [user, { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }],
      "messages[1].function_call",
      "messages[1].function_call is deprecated and not supported: use tool_calls",
    ],
  ])("rejects %j", (messages, param, message) => {
    const error = rejection(() => parse(messages));
    expect([error.kind, error.param, error.message]).toStrictEqual(["invalid_request", param, message]);
  });
});

describe("messages: images", () => {
  const withImage = [
    {
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      ],
    },
  ];

  it("rejects an image part for a model without vision, naming the part", () => {
    const error = rejection(() => parse(withImage));
    expect([error.kind, error.param]).toStrictEqual(["invalid_request", "messages[0].content[1]"]);
    expect(error.message).toBe(`The model '${MODEL}' has no vision input: messages[0].content[1] is an image_url part; send text only`);
  });

  const png = { type: "base64", data: "AAAA", mediaType: "image/png" };
  /** The vision model's pending images as [message index, offset, source, path]. */
  const pendingOf = (request: InternalRequest) => (request.images ?? []).map((image) => [request.messages.indexOf(image.message), image.offset, image.source, image.path]);

  it("takes data: and http(s) URLs, with every detail OpenAI has, images at the offset of the text joined so far", () => {
    const request = parse([
      { role: "system", content: "S" },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "https://example.com/a.jpg", detail: "high" } },
          { type: "text", text: "Left" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
          { type: "text", text: "right" },
          { type: "image_url", image_url: { url: "http://example.com/b.webp", detail: "auto" } },
        ],
      },
    ], {}, VISION_MODEL);
    expect(request.messages).toStrictEqual<ChatMessage[]>([{ role: "system", content: "S" }, { role: "user", content: "Left\nright" }]);
    expect(pendingOf(request)).toEqual([
      [1, 0, { type: "url", url: "https://example.com/a.jpg" }, "messages[1].content[0]"],
      [1, 4, png, "messages[1].content[2]"],
      [1, 10, { type: "url", url: "http://example.com/b.webp" }, "messages[1].content[4]"],
    ]);
  });

  it("refuses a detail OpenAI does not have, and a URL that is neither a base64 image data: URL nor http(s), by name", () => {
    const image = (imageUrl: unknown) => [{ role: "user", content: [{ type: "image_url", image_url: imageUrl }] }];
    const cases: Array<[unknown, string, string]> = [
      [{ url: "https://example.com/a.png", detail: "original" }, "messages[0].content[0].image_url.detail", `messages[0].content[0].image_url.detail must be 'auto', 'low' or 'high', got the string "original"`],
      [{ url: "https://example.com/a.png", detail: 1 }, "messages[0].content[0].image_url.detail", "messages[0].content[0].image_url.detail must be 'auto', 'low' or 'high', got 1"],
      [{ url: "file:///etc/passwd" }, "messages[0].content[0].image_url.url", `messages[0].content[0].image_url.url must be a data: URL with base64 image data (data:image/png;base64,...) or an http:// or https:// URL, got the string "file:///etc/passwd"`],
      [{ url: "data:text/plain;base64,aGk=" }, "messages[0].content[0].image_url.url", `messages[0].content[0].image_url.url must be a data: URL of an image type (image/jpeg, image/png, image/gif, image/webp), not "text/plain", got the string "data:text/plain;base64,aGk="`],
      [{}, "messages[0].content[0].image_url.url", "messages[0].content[0].image_url.url must be a string, got nothing"],
      ["https://example.com/a.png", "messages[0].content[0].image_url", `messages[0].content[0].image_url must be an object, got the string "https://example.com/a.png"`],
    ];
    for (const [imageUrl, param, message] of cases) {
      const error = rejection(() => parse(image(imageUrl), {}, VISION_MODEL));
      expect([error.kind, error.param, error.message]).toStrictEqual(["invalid_request", param, message]);
    }
  });

  it("refuses images in assistant messages too (text and refusal parts only)", () => {
    const error = rejection(() => parse([user, { role: "assistant", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }], {}, VISION_MODEL));
    expect([error.param, error.message]).toStrictEqual(["messages[1].content[0].type", "messages[1].content[0] is an image_url part in an assistant message: images are accepted in user messages only; send the image in a user message"]);
  });

  it("carries no pending images for a request without any", () => {
    expect(parse([user], {}, VISION_MODEL).images).toBeUndefined();
  });

  it("keeps an image part of a vision model's message pending at the offset of the text before it", () => {
    const request = parse(withImage, {}, VISION_MODEL);
    expect(request.messages).toStrictEqual<ChatMessage[]>([{ role: "user", content: "What is this?" }]);
    expect(request.images).toStrictEqual([
      { message: request.messages[0], offset: 13, source: { type: "base64", data: "AAAA", mediaType: "image/png" }, path: "messages[0].content[1]" },
    ]);
  });
});

describe("messages: tool calls and tool results", () => {
  const parisCall = { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } } as const;
  const conversation: ChatCompletionMessageParam[] = [
    { role: "user", content: "Weather in Paris and Rome?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } },
        { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "18C" },
    { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "21C" }] },
    { role: "assistant", content: "Paris 18C, Rome 21C." },
  ];

  it("maps assistant tool_calls (arguments kept as sent) and tool messages", () => {
    expect(parse(conversation).messages).toStrictEqual<ChatMessage[]>([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", content: "18C", tool_call_id: "call_1" },
      { role: "tool", content: "21C", tool_call_id: "call_2" },
      { role: "assistant", content: "Paris 18C, Rome 21C." },
    ]);
  });

  it("keeps assistant text next to its tool calls", () => {
    const messages = [user, { role: "assistant", content: "Let me check.", tool_calls: [parisCall] }];
    expect(parse(messages).messages[1]).toMatchObject({ content: "Let me check.", tool_calls: [{ id: "call_1" }] });
  });

  const call = (patch: Record<string, unknown>) => ({ id: "c", type: "function", function: { name: "f", arguments: "{}" }, ...patch });
  it.each([
    [{ tool_calls: [] }, "messages[1].tool_calls", "messages[1].tool_calls must be a non-empty array of tool calls, got an array of 0"],
    [{ tool_calls: {} }, "messages[1].tool_calls", "messages[1].tool_calls must be a non-empty array of tool calls, got an object"],
    [{ tool_calls: [3] }, "messages[1].tool_calls[0]", "messages[1].tool_calls[0] must be an object, got 3"],
    [{ tool_calls: [call({ id: undefined })] }, "messages[1].tool_calls[0].id", "messages[1].tool_calls[0].id must be a string, got nothing"],
    [{ tool_calls: [call({ type: "custom" })] }, "messages[1].tool_calls[0].type", `messages[1].tool_calls[0].type must be 'function', got the string "custom"`],
    [{ tool_calls: [call({ function: null })] }, "messages[1].tool_calls[0].function", "messages[1].tool_calls[0].function must be an object, got null"],
    [{ tool_calls: [call({ function: { arguments: "{}" } })] }, "messages[1].tool_calls[0].function.name", "messages[1].tool_calls[0].function.name must be a string, got nothing"],
    [
      { tool_calls: [call({ function: { name: "f", arguments: { city: "Paris" } } })] },
      "messages[1].tool_calls[0].function.arguments",
      "messages[1].tool_calls[0].function.arguments must be a string, got an object",
    ],
  ])("rejects assistant %j", (patch, param, message) => {
    const error = rejection(() => parse([user, { role: "assistant", content: null, ...patch }]));
    expect([error.kind, error.param, error.message]).toStrictEqual(["invalid_request", param, message]);
  });

  const assistantCall = { role: "assistant", content: null, tool_calls: [call({ id: "call_1" })] };
  it.each([
    [[user, assistantCall, { role: "tool", content: "r" }], "messages[2].tool_call_id", "messages[2].tool_call_id is required on tool messages: the id of the tool call this message answers"],
    [[user, assistantCall, { role: "tool", content: "r", tool_call_id: 1 }], "messages[2].tool_call_id", "messages[2].tool_call_id must be a string, got 1"],
    [[user, assistantCall, { role: "tool", tool_call_id: "call_1" }], "messages[2].content", "messages[2].content is required on tool messages: a string or an array of content parts"],
    [
      [user, assistantCall, { role: "tool", tool_call_id: "call_1", content: [{ type: "image_url", image_url: { url: "x" } }] }],
      "messages[2].content[0].type",
      "messages[2].content[0] is an image_url part in a tool message: images are accepted in user messages only; send the image in a user message",
    ],
    [[user, { role: "tool", content: "r", tool_call_id: "call_1" }], "messages[1].role", "messages[1] is a tool message but does not follow an assistant message with tool_calls"],
    [
      [user, assistantCall, user, { role: "tool", content: "r", tool_call_id: "call_1" }],
      "messages[3].role",
      "messages[3] is a tool message but does not follow an assistant message with tool_calls",
    ],
    [
      [user, assistantCall, { role: "tool", content: "r", tool_call_id: "call_9" }],
      "messages[2].tool_call_id",
      "messages[2].tool_call_id 'call_9' answers no tool call of the preceding assistant message (its ids: 'call_1')",
    ],
  ])("rejects tool messages %#", (messages, param, message) => {
    const error = rejection(() => parse(messages));
    expect([error.kind, error.param, error.message]).toStrictEqual(["invalid_request", param, message]);
  });
});

describe("tools and tool_choice", () => {
  const weather: ChatCompletionTool = {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      strict: true,
    },
  };

  it("maps function tools, defaulting parameters to an empty object schema", () => {
    const request = parse([user], { tools: [weather, { type: "function", function: { name: "now" } }] });
    expect(request.tools).toStrictEqual([
      { name: "get_weather", description: "Current weather", parameters: weather.type === "function" ? weather.function.parameters : {} },
      { name: "now", parameters: { type: "object", properties: {} } },
    ]);
  });

  it.each([
    ["auto", { type: "auto" }],
    ["none", { type: "none" }],
    ["required", { type: "any" }],
    [{ type: "function", function: { name: "get_weather" } }, { type: "tool", name: "get_weather" }],
  ])("maps tool_choice %j", (toolChoice, expected) => {
    expect(parse([user], { tools: [weather], tool_choice: toolChoice }).toolChoice).toStrictEqual(expected);
  });

  it("accepts tool_choice auto or none without tools", () => {
    expect(parse([user], { tool_choice: "none" }).toolChoice).toStrictEqual({ type: "none" });
    expect(parse([user], { tool_choice: "auto" }).toolChoice).toStrictEqual({ type: "auto" });
  });

  const fn = (patch: Record<string, unknown>) => ({ type: "function", function: { name: "f", ...patch } });
  it.each([
    [{ tools: [] }, "tools", "tools must be a non-empty array of function tools, got an array of 0"],
    [{ tools: {} }, "tools", "tools must be a non-empty array of function tools, got an object"],
    [{ tools: ["f"] }, "tools[0]", 'tools[0] must be an object, got the string "f"'],
    [{ tools: [{ type: "custom", custom: { name: "x" } }] }, "tools[0].type", "tools[0].type 'custom' is not supported: only 'function' tools are"],
    [{ tools: [{ function: { name: "f" } }] }, "tools[0].type", "tools[0].type must be 'function', got nothing"],
    [{ tools: [{ type: "function" }] }, "tools[0].function", "tools[0].function must be an object, got nothing"],
    [{ tools: [fn({ name: 5 })] }, "tools[0].function.name", "tools[0].function.name must be a string, got 5"],
    [{ tools: [fn({ name: "has space" })] }, "tools[0].function.name", 'tools[0].function.name must be 1 to 64 letters, digits, underscores or dashes, got the string "has space"'],
    [{ tools: [fn({ name: "" })] }, "tools[0].function.name", 'tools[0].function.name must be 1 to 64 letters, digits, underscores or dashes, got the string ""'],
    [{ tools: [fn({}), fn({})] }, "tools[1].function.name", "tools[1].function.name 'f' is defined twice: tool names must be unique"],
    [{ tools: [fn({ description: 1 })] }, "tools[0].function.description", "tools[0].function.description must be a string, got 1"],
    [{ tools: [fn({ parameters: "{}" })] }, "tools[0].function.parameters", 'tools[0].function.parameters must be an object, got the string "{}"'],
    [{ tools: [fn({ strict: "yes" })] }, "tools[0].function.strict", 'tools[0].function.strict must be a boolean, got the string "yes"'],
    [{ tool_choice: "required" }, "tool_choice", "tool_choice 'required' needs tools: no tools were given"],
    [{ tools: [fn({})], tool_choice: "always" }, "tool_choice", `tool_choice must be 'auto', 'none', 'required' or {type: 'function', function: {name}}, got the string "always"`],
    [{ tools: [fn({})], tool_choice: 3 }, "tool_choice", `tool_choice must be 'auto', 'none', 'required' or {type: 'function', function: {name}}, got 3`],
    [{ tools: [fn({})], tool_choice: { type: "tool", name: "f" } }, "tool_choice.type", `tool_choice.type must be 'function', got the string "tool"`],
    [{ tools: [fn({})], tool_choice: { type: "allowed_tools", allowed_tools: {} } }, "tool_choice.type", "tool_choice.type 'allowed_tools' is not supported: use 'function'"],
    [{ tools: [fn({})], tool_choice: { type: "function" } }, "tool_choice.function", "tool_choice.function must be an object, got nothing"],
    [{ tools: [fn({})], tool_choice: { type: "function", function: {} } }, "tool_choice.function.name", "tool_choice.function.name must be a string, got nothing"],
    [
      { tools: [fn({})], tool_choice: { type: "function", function: { name: "g" } } },
      "tool_choice.function.name",
      "tool_choice.function.name 'g' is not one of the tools ('f')",
    ],
    [
      { tool_choice: { type: "function", function: { name: "g" } } },
      "tool_choice.function.name",
      "tool_choice.function.name 'g' is not one of the tools (none were given)",
    ],
  ])("rejects %j", (extra, param, message) => {
    const error = rejection(() => parse([user], extra));
    expect([error.kind, error.param, error.message]).toStrictEqual(["invalid_request", param, message]);
  });
});
