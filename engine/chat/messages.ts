// The chat message type handed to chat templates: a plain superset the OpenAI and Anthropic request shapes map onto.

/** Who wrote a message. Anthropic's `tool_result` blocks map to "tool"; its top-level `system` to a "system" message. */
export type ChatRole = "system" | "user" | "assistant" | "tool";

/** A tool call made by the assistant (OpenAI `tool_calls[]`, Anthropic `tool_use` blocks). */
export interface ChatToolCall {
  /** Call id, echoed by the "tool" message that answers it (OpenAI `id`, Anthropic `tool_use.id`). */
  id?: string;
  type: "function";
  function: {
    /** Tool name. */
    name: string;
    /** Arguments: a JSON string (OpenAI) or an object (Anthropic `input`); templates handle both. */
    arguments: string | Record<string, unknown>;
  };
}

/**
 * One message of a conversation.
 *
 * NOTE: field names are snake_case on purpose: they are the names Hugging Face chat templates read
 * (`message.reasoning_content`, `message.tool_calls`), and the object is passed to the template as is.
 */
export interface ChatMessage {
  role: ChatRole;
  /** The message text (for "tool", the tool's result). */
  content: string;
  /** The assistant's thinking, kept apart from `content` (OpenAI-style `reasoning_content`, Anthropic `thinking`). */
  reasoning_content?: string;
  /** Tool calls made by an assistant message. */
  tool_calls?: ChatToolCall[];
  /** For a "tool" message: the id of the call it answers. */
  tool_call_id?: string;
  /** Optional author name (OpenAI `name`; for a "tool" message, the tool's name). */
  name?: string;
  /**
   * Images in the message, in order, each placed at an offset of `content` (a model with a vision encoder sees them
   * there; any other refuses the request). Not read by chat templates: loom renders each as a marker first.
   */
  images?: ChatImage[];
}

/** Decoded pixels: 8-bit RGB, row-major, `data.length === width * height * 3`. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** An image of a message and where it sits in the message's text. */
export interface ChatImage {
  /** UTF-16 index into `content` (0: before the text, content.length: after it); images at one offset keep their order. */
  offset: number;
  image: RgbImage;
}
