// The Anthropic messages adapter (POST /v1/messages): request body -> InternalRequest, InternalEvents -> response
// body or SSE stream, ProtocolError -> error body. Pure functions, no HTTP: the server's HTTP layer calls these.
export { parseMessagesRequest, MAX_STOP_SEQUENCES, MIN_THINKING_BUDGET } from "./parse.js";
export { BLOCK_SEPARATOR } from "./blocks.js";
export {
  messagesResponse,
  anthropicUsage,
  toolUseBlock,
  type AnthropicMessage,
  type AnthropicContentBlock,
  type AnthropicUsage,
  type MessageMeta,
  type MessageResult,
} from "./response.js";
export { MessagesStreamWriter, sseFrame, type AnthropicStreamEvent } from "./stream.js";
export { anthropicErrorBody, anthropicErrorPayload, ANTHROPIC_ERROR_TYPES, type AnthropicErrorBody, type AnthropicErrorResponse } from "./errors.js";
export { ThinkingSigner } from "./thinking-signature.js";
