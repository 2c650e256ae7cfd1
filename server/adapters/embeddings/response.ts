// The embeddings response in OpenAI's shape: a list of `embedding` objects in input order, each vector as JSON numbers
// or as base64 of its little-endian float32 bytes (what the official SDKs decode), and usage.
import type { EmbeddingResult } from "../../../engine/embed/request.js";

/** `vector` as base64 of its little-endian float32 bytes. */
export function base64Floats(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString("base64");
}

/** The response body for `result`. */
export function embeddingsResponse(model: string, result: EmbeddingResult, encodingFormat: "float" | "base64"): object {
  const promptTokens = result.tokenCounts.reduce((sum, count) => sum + count, 0);
  return {
    object: "list",
    data: result.embeddings.map((vector, index) => ({
      object: "embedding", index, embedding: encodingFormat === "base64" ? base64Floats(vector) : Array.from(vector),
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
