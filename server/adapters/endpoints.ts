// The wire formats as the HTTP layer sees them: each adapter's parser, response and stream builders, error and
// model-list shapes, and field names, behind one WireEndpoint interface.
import type { CollectedChoice, WireEndpoint } from "../http/endpoint.js";
import type { ServedModels } from "../protocol/internal.js";
import { MessagesStreamWriter, ThinkingSigner, anthropicErrorBody, messagesResponse, parseMessagesRequest } from "./anthropic/index.js";
import { anthropicModel, anthropicModelList } from "./anthropic/models.js";
import { ChatCompletionStreamWriter, type CompletionResult, chatCompletionResponse, openAiErrorBody, parseChatCompletionRequest } from "./openai/index.js";
import { openAiModel, openAiModelList } from "./openai/models.js";
import { storingChatEndpoint } from "./openai/stored-endpoint.js";
import type { ChatCompletionStorage } from "./openai/stored.js";
import { responsesEndpoint, type ResponsesStorage } from "./responses/endpoint.js";
import { anthropicWireField, openAiWireField } from "./wire-fields.js";

/** Options shared by the endpoints. */
export interface EndpointOptions {
  /** Signs thinking blocks so they can be verified when clients send them back (default: a random secret). */
  signer?: ThinkingSigner;
  /** Stored responses: with them, POST /v1/responses (the Responses API) is served too. */
  responses?: ResponsesStorage;
  /** Stored chat completions: with them, chat completions take `store: true`. */
  chatCompletions?: ChatCompletionStorage;
}

/** A collected choice as the chat-completions response takes it. */
function completionOf(choice: CollectedChoice): CompletionResult {
  return { reasoning: choice.thinking, text: choice.text, toolCalls: choice.toolCalls, finish: choice.finish, ...(choice.logprobs ? { logprobs: [...choice.logprobs.thinking, ...choice.logprobs.text] } : {}) };
}

/**
 * POST /v1/chat/completions, POST /v1/messages (and its count_tokens), and with stored responses POST /v1/responses,
 * over the served models.
 */
export function createEndpoints(models: ServedModels, options: EndpointOptions = {}): WireEndpoint[] {
  const signer = options.signer ?? ThinkingSigner.withRandomSecret();
  const openai: WireEndpoint = storingChatEndpoint({
    format: "openai",
    path: "/v1/chat/completions",
    idPrefix: "chatcmpl-",
    parse: (body) => parseChatCompletionRequest(body, models),
    respond: (meta, result) => chatCompletionResponse(meta, { ...completionOf(result), choices: result.choices?.map(completionOf) }),
    stream: (meta, request) => new ChatCompletionStreamWriter(meta, { includeUsage: request.includeUsage, choices: request.choices ?? 1, logprobs: request.logprobs !== undefined }),
    error: (error) => openAiErrorBody(error),
    wireField: openAiWireField,
    models: { list: openAiModelList, one: openAiModel },
    // The default for routes both formats share.
    claims: () => false,
  }, options.chatCompletions);
  const anthropic: WireEndpoint = {
    format: "anthropic",
    path: "/v1/messages",
    idPrefix: "msg_",
    parse: (body) => parseMessagesRequest(body, models, signer),
    respond: (meta, result) => messagesResponse(meta, result, signer),
    stream: (meta) => new MessagesStreamWriter(meta, signer),
    error: (error) => anthropicErrorBody(error),
    wireField: anthropicWireField,
    models: { list: anthropicModelList, one: anthropicModel },
    // The Anthropic SDK sends its API version on every request.
    claims: (header) => header("anthropic-version") !== "",
    tokenCount: {
      path: "/v1/messages/count_tokens",
      parse: (body) => parseMessagesRequest(body, models, signer, "count"),
      respond: (inputTokens) => ({ input_tokens: inputTokens }),
    },
  };
  return options.responses ? [openai, anthropic, responsesEndpoint(models, options.responses)] : [openai, anthropic];
}
