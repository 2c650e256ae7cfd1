// POST /tokenize and POST /detokenize (the extension llama.cpp's server and vLLM both offer): a text or a conversation
// to the model's token ids, and ids back to text, on the model's engine (its prompt thread, or a gateway's worker).
// Authenticated as the inference routes are; nothing is generated, so nothing is metered.
import type { HttpRequest } from "uWebSockets.js";
import { EngineError } from "../../engine/request.js";
import { tokenString } from "../adapters/completions/logprobs.js";
import { parseDetokenizeRequest, parseTokenizeRequest } from "../adapters/tokenize/parse.js";
import type { ServerContext } from "../http/context.js";
import type { WireEndpoint } from "../http/endpoint.js";
import type { Connection } from "../http/reply.js";
import type { ServedModel } from "../models.js";
import { ProtocolError } from "../protocol/internal.js";
import { protocolErrorOf } from "../protocol/run.js";
import { checkCapacity, handleJsonPost } from "./generation.js";

export const TOKENIZE_PATH = "/tokenize";
export const DETOKENIZE_PATH = "/detokenize";

/** The model a request names, else the first served (llama.cpp's server has one model, and its clients name none). */
function servedFor(context: ServerContext, model: string | undefined): ServedModel {
  const registry = context.options.registry;
  const served = model === undefined ? registry.entries.find((entry) => entry.slugs.openai.length > 0) : registry.find(model, "openai");
  if (!served) throw new ProtocolError("not_found", model === undefined ? "no model is served" : `The model '${model}' does not exist`, "model");
  if (!served.poolEngine) checkCapacity(context, served.engine);
  return served;
}

/** Engine errors as the client sees them: fields named as the request named them. */
async function engineCall<T>(call: () => T | Promise<T>, field: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof EngineError) throw protocolErrorOf(error, (name) => (name === "text" || name === "input" || name.startsWith("input.") ? field : name));
    throw error;
  }
}

/** A piece as llama.cpp's `with_pieces` answers it: the text when the bytes are whole UTF-8, else the bytes. */
function llamaCppPiece(bytes: readonly number[]): string | number[] {
  const text = tokenString(0, bytes);
  return text.startsWith("bytes:") ? [...bytes] : text;
}

/** POST /tokenize. `endpoint`: the chat-completions endpoint, whose authentication and error shape it shares. */
export function handleTokenize(context: ServerContext, endpoint: WireEndpoint, connection: Connection, req: HttpRequest): void {
  handleJsonPost(context, TOKENIZE_PATH, endpoint, connection, req, async (body) => {
    const parsed = parseTokenizeRequest(body, context.options.registry);
    const served = servedFor(context, parsed.model);
    const field = parsed.shape === "llama.cpp" ? "content" : "text" in parsed.request ? "prompt" : "messages";
    const tokens = await engineCall(() => served.engine.tokenize(parsed.request), field);
    const pieces = parsed.pieces ? (await engineCall(() => served.engine.detokenize({ tokens, pieces: true }), field)).pieces ?? [] : undefined;
    const answer = parsed.shape === "llama.cpp"
      ? { tokens: pieces ? tokens.map((id, index) => ({ id, piece: llamaCppPiece(pieces[index] ?? []) })) : tokens }
      : { count: tokens.length, max_model_len: served.model.contextSize, tokens, ...(pieces ? { token_strs: tokens.map((id, index) => tokenString(id, pieces[index])) } : {}) };
    context.metrics.request(TOKENIZE_PATH, 200);
    connection.sendJson(200, answer);
  });
}

/**
 * POST /detokenize: `{content}` as llama.cpp answers and `{prompt}` as vLLM answers, the same text in both, so that
 * either client reads its own field.
 */
export function handleDetokenize(context: ServerContext, endpoint: WireEndpoint, connection: Connection, req: HttpRequest): void {
  handleJsonPost(context, DETOKENIZE_PATH, endpoint, connection, req, async (body) => {
    const parsed = parseDetokenizeRequest(body, context.options.registry);
    const served = servedFor(context, parsed.model);
    const { text } = await engineCall(() => served.engine.detokenize(parsed.request), "tokens");
    context.metrics.request(DETOKENIZE_PATH, 200);
    connection.sendJson(200, { content: text, prompt: text });
  });
}
