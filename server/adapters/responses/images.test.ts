// Images in the Responses API: `input_image` parts of user messages (a data: URL or an http(s) URL, `detail` kept),
// kept in the input items as sent and pending on the chat message at the offset of the text before them, in this
// request and when a stored conversation is continued; `file_id`, images in other roles and in function outputs, and
// images for a model without vision refused by name.
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../engine/chat/messages.js";
import type { InternalRequest, ServedModels } from "../../protocol/internal.js";
import { rejection } from "../testing/rejection.js";
import type { ConversationItem } from "./items.js";
import { continueConversation, parseResponsesRequest, responsesStateOf } from "./parse.js";

const BLIND = "service/tim-qwen-27b";
const VISION = "service/tim-gemma-27b";
const models: ServedModels = { slugs: () => [BLIND, VISION], hasVision: (slug) => slug === VISION };

const parse = (input: unknown, model = VISION, extra: Record<string, unknown> = {}): InternalRequest => parseResponsesRequest({ model, input, ...extra }, models);
/** The pending images as [message index, offset, source, path]. */
const pendingOf = (request: InternalRequest) => (request.images ?? []).map((image) => [request.messages.indexOf(image.message), image.offset, image.source, image.path]);

const DATA_URL = "data:image/png;base64,iVBORw0KGgo=";
const png = { type: "base64", data: "iVBORw0KGgo=", mediaType: "image/png" };
const userWith = (...content: unknown[]) => ({ role: "user", content });

describe("Responses input_image", () => {
  it("keeps data: and http(s) images pending at the offset of the text before them, and in the items as sent", () => {
    const request = parse([
      userWith(
        { type: "input_image", image_url: "https://example.com/a.jpg", detail: "high" },
        { type: "input_text", text: "Which is" },
        { type: "input_image", image_url: DATA_URL },
        { type: "input_text", text: "bigger?" },
      ),
    ], VISION, { instructions: "Be brief." });
    expect(request.messages).toStrictEqual<ChatMessage[]>([{ role: "system", content: "Be brief." }, { role: "user", content: "Which is\nbigger?" }]);
    expect(pendingOf(request)).toEqual([
      [1, 0, { type: "url", url: "https://example.com/a.jpg" }, "input[0].content[0]"],
      [1, 8, png, "input[0].content[2]"],
    ]);
    // The items (input_items, a continuation) keep each image as sent; detail defaults to "auto".
    const item = responsesStateOf(request).input[0] as ConversationItem & { content: unknown[] };
    expect(item.content).toEqual([
      { type: "input_image", image_url: "https://example.com/a.jpg", detail: "high", file_id: null },
      { type: "input_text", text: "Which is" },
      { type: "input_image", image_url: DATA_URL, detail: "auto", file_id: null },
      { type: "input_text", text: "bigger?" },
    ]);
  });

  it("refuses file_id, a missing or bad image_url and an unknown detail, by name", () => {
    const cases: Array<[unknown, string, string | RegExp]> = [
      [{ type: "input_image", file_id: "file-abc" }, "input[0].content[0].file_id", "input[0].content[0].file_id is not supported: this server has no Files API; send the image as image_url (a data: URL or an http(s) URL)"],
      [{ type: "input_image", file_id: "file-abc", image_url: DATA_URL }, "input[0].content[0].file_id", /file_id is not supported/],
      [{ type: "input_image", detail: "auto" }, "input[0].content[0].image_url", "input[0].content[0].image_url is required: a data: URL or an http(s) URL"],
      [{ type: "input_image", image_url: "ftp://example.com/a.png" }, "input[0].content[0].image_url", /^input\[0\]\.content\[0\]\.image_url must be a data: URL with base64 image data .* or an http:\/\/ or https:\/\/ URL, got the string "ftp:/],
      [{ type: "input_image", image_url: "data:image/png,%89PNG" }, "input[0].content[0].image_url", /must be a base64 data: URL/],
      [{ type: "input_image", image_url: DATA_URL, detail: "original" }, "input[0].content[0].detail", `input[0].content[0].detail must be 'auto', 'low' or 'high', got the string "original"`],
    ];
    for (const [part, param, message] of cases) {
      const error = rejection(() => parse([userWith(part)]));
      expect([error.kind, error.param]).toEqual(["invalid_request", param]);
      if (typeof message === "string") expect(error.message).toBe(message);
      else expect(error.message).toMatch(message);
    }
  });

  it("refuses images outside user messages: system and developer messages, and function_call_output", () => {
    for (const role of ["system", "developer"]) {
      const error = rejection(() => parse([{ role, content: [{ type: "input_image", image_url: DATA_URL }] }]));
      expect([error.param, error.message]).toEqual(["input[0].content[0].type", `input[0].content[0] is an input_image part in a ${role} message: images are accepted in user messages only`]);
    }
    const output = rejection(() => parse([userWith({ type: "input_text", text: "q" }), { type: "function_call", call_id: "c", name: "shot", arguments: "{}" }, { type: "function_call_output", call_id: "c", output: [{ type: "input_image", image_url: DATA_URL }] }]));
    expect(output.param).toBe("input[2].output[0].type");
  });

  it("refuses an image for a model without vision, naming the part", () => {
    const error = rejection(() => parse([userWith({ type: "input_image", image_url: DATA_URL })], BLIND));
    expect([error.param, error.message]).toEqual(["input[0].content[0]", `The model '${BLIND}' has no vision input: input[0].content[0] is an input_image part; send text only`]);
  });

  it("shows a stored conversation's images to the model again when it is continued, and refuses them for a model without vision", () => {
    const earlier = [
      { id: "msg_1", type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "Look" }, { type: "input_image", image_url: DATA_URL, detail: "auto", file_id: null }] },
      { id: "msg_2", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "A cat.", annotations: [] }] },
    ] as ConversationItem[];
    const request = parse([userWith({ type: "input_text", text: "And this?" }, { type: "input_image", image_url: "https://example.com/b.png" })], VISION, { previous_response_id: "resp_abc" });
    const state = responsesStateOf(request);
    continueConversation(request, earlier, state.input as ConversationItem[]);
    expect(request.messages.map((message) => message.content)).toEqual(["Look", "A cat.", "And this?"]);
    expect(pendingOf(request)).toEqual([
      [0, 4, png, "previous_response_id"],
      [2, 9, { type: "url", url: "https://example.com/b.png" }, "input[0].content[1]"],
    ]);
    // The same stored conversation continued on a model without vision: the earlier image is refused.
    const blind = parse("And now?", BLIND, { previous_response_id: "resp_abc" });
    const error = rejection(() => continueConversation(blind, earlier, responsesStateOf(blind).input as ConversationItem[]));
    expect([error.param, error.message]).toEqual(["previous_response_id", `The model '${BLIND}' has no vision input: previous_response_id holds an input_image part; send text only`]);
  });
});
