// The two wire formats as the HTTP layer sees them: each adapter's parser, response and stream builders, and error
// shapes behind one WireEndpoint interface.
import type { WireEndpoint } from "../http/endpoint.js";
import type { ServedModels } from "../protocol/internal.js";
import { MessagesStreamWriter, ThinkingSigner, anthropicErrorBody, messagesResponse, parseMessagesRequest } from "./anthropic/index.js";
import { ChatCompletionStreamWriter, chatCompletionResponse, openAiErrorBody, parseChatCompletionRequest } from "./openai/index.js";

/** Options shared by the endpoints. */
export interface EndpointOptions {
  /** Signs thinking blocks so they can be verified when clients send them back (default: a random secret). */
  signer?: ThinkingSigner;
}

/** POST /v1/chat/completions and POST /v1/messages over the served models. */
export function createEndpoints(models: ServedModels, options: EndpointOptions = {}): WireEndpoint[] {
  const signer = options.signer ?? ThinkingSigner.withRandomSecret();
  const openai: WireEndpoint = {
    format: "openai",
    path: "/v1/chat/completions",
    idPrefix: "chatcmpl-",
    overloadKind: "rate_limit",
    parse: (body) => parseChatCompletionRequest(body, models),
    respond: (meta, result) => chatCompletionResponse(meta, { reasoning: result.thinking, text: result.text, toolCalls: result.toolCalls, finish: result.finish }),
    stream: (meta, request) => new ChatCompletionStreamWriter(meta, { includeUsage: request.includeUsage }),
    error: (error) => openAiErrorBody(error),
  };
  const anthropic: WireEndpoint = {
    format: "anthropic",
    path: "/v1/messages",
    idPrefix: "msg_",
    overloadKind: "overloaded",
    parse: (body) => parseMessagesRequest(body, models, signer),
    respond: (meta, result) => messagesResponse(meta, result, signer),
    stream: (meta) => new MessagesStreamWriter(meta, signer),
    error: (error) => anthropicErrorBody(error),
  };
  return [openai, anthropic];
}
