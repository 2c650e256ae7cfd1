// The OpenAI chat-completions adapter: request parsing into the internal request, and internal events into the wire
// response, stream and error shapes. Pure functions and classes; the HTTP layer does the I/O.
export { parseChatCompletionRequest } from "./parse.js";
export { chatCompletionResponse, type CompletionResult } from "./response.js";
export { ChatCompletionStreamWriter, type StreamWriterOptions } from "./stream.js";
export { openAiErrorBody, openAiErrorObject, type OpenAiErrorObject, type OpenAiErrorResponse } from "./errors.js";
export {
  DEFAULT_THINK_TAGS,
  finishReason,
  wireToolCall,
  wireUsage,
  type ChatCompletionBody,
  type ChatCompletionChunkBody,
  type CompletionMeta,
  type OpenAiFinishReason,
  type OpenAiToolCall,
  type OpenAiToolCallDelta,
  type OpenAiUsage,
  type ThinkTags,
} from "./wire.js";
