// What one request may ask for, whatever its wire format: how many messages (or input items) and tools, and how
// large the tool definitions are. Each adapter checks these before any work that grows with them (converting items,
// compiling tool schemas, rendering the chat template, tokenizing, compaction), so a cheap body cannot buy seconds of
// the engine's time; past a limit the answer is a 400 that names it.
import { ProtocolError } from "./internal.js";

/** The limits every wire format applies to a request (docs/api/limits.md lists them). */
export const REQUEST_LIMITS = {
  /**
   * Messages of a chat request (Anthropic: `messages`; Responses: the `input` items, and the stored conversation a
   * request continues together with them). A conversation this long is far past any context here; auto compaction
   * keeps what fits.
   */
  messages: 4096,
  /** Tools offered in one request (OpenAI's own API allows 128). */
  tools: 256,
  /** The tool definitions of one request as JSON text, in characters (every schema is compiled and rendered). */
  toolCharacters: 256 * 1024,
} as const;

/**
 * Refuses an array of `count` entries at `param` that holds more than `limit`.
 * @throws ProtocolError ("invalid_request", 400) naming the parameter and the limit.
 */
export function checkCount(param: string, what: string, count: number, limit: number): void {
  if (count <= limit) return;
  throw new ProtocolError("invalid_request", `${param} has ${count} ${what}; a request may have at most ${limit} (limit on ${what} per request)`, param);
}

/**
 * Refuses `tools` (the request's raw tools array) past {@link REQUEST_LIMITS}: more tools than allowed, or definitions
 * longer than allowed as JSON. Measured before any tool is parsed or compiled.
 * @throws ProtocolError ("invalid_request", 400) naming `param` and the limit.
 */
export function checkToolsLimits(param: string, tools: unknown): void {
  if (!Array.isArray(tools)) return; // the adapter's own parsing names what is wrong with it
  checkCount(param, "tools", tools.length, REQUEST_LIMITS.tools);
  const characters = JSON.stringify(tools).length;
  if (characters > REQUEST_LIMITS.toolCharacters) {
    throw new ProtocolError(
      "invalid_request",
      `${param} takes ${characters} characters as JSON; a request's tool definitions may take at most ${REQUEST_LIMITS.toolCharacters} (limit on tool definitions per request)`,
      param,
    );
  }
}
