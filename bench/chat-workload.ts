// Shared by the HTTP benchmarks (http-load, platform-overhead, the cluster benches): seeded chat conversations whose prompts, rendered by
// the model's own chat template, have a chosen number of tokens, and their request bodies in both wire formats.
import { preparePrompt } from "../engine/prompt.js";
import { openModelSource } from "../engine/model/source.js";
import { tokenizerFromGguf } from "../engine/tokenizer/gguf.js";
import { seededRandom } from "./bench-models.js";

/** A support assistant's system prompt (about 50 tokens): what a deployment's requests typically share. */
export const SUPPORT_SYSTEM_PROMPT =
  "You are the support assistant of a regional parcel delivery company. Answer questions about shipments, invoices, " +
  "pickup windows and delivery schedules briefly and accurately. If you do not know something, say so plainly.";

const WORDS = (
  "the parcel arrived late yesterday because truck route north depot changed schedule again please check invoice " +
  "number address customer weekend pickup window morning evening driver signature missing damaged box refund order " +
  "tracking update warehouse label printed twice delivery attempt failed neighbour collect office hours payment card " +
  "declined express standard shipping cost weight limit customs form international return policy days receipt email " +
  "phone support ticket status pending resolved escalated manager contact information city street postcode building"
).split(" ");

/** One request before it is written in a wire format. */
export interface Conversation {
  user: string;
  maxTokens: number;
  /** Prompt tokens after the chat template (counted here; the server's usage must agree). */
  promptTokens: number;
}

/** An inclusive range of integers, from a `N` or `MIN-MAX` flag. */
export interface Range {
  min: number;
  max: number;
}

export function parseRange(text: string, name: string): Range {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  if (!match) throw new RangeError(`--${name} must be N or MIN-MAX, got ${text}`);
  const min = Number(match[1]);
  const max = Number(match[2] ?? match[1]);
  if (min < 1 || max < min) throw new RangeError(`--${name} must have 1 <= MIN <= MAX, got ${text}`);
  return { min, max };
}

export function drawIn(random: () => number, range: Range): number {
  return range.min + Math.floor(random() * (range.max - range.min + 1));
}

/** The messages of a conversation: the system prompt (when there is one) and the user message. */
function messagesOf(system: string | undefined, user: string) {
  return [...(system === undefined ? [] : [{ role: "system" as const, content: system }]), { role: "user" as const, content: user }];
}

/**
 * Seeded conversations whose rendered prompts are `prompt` tokens long: user words are appended until the template's
 * token count reaches a length drawn from the range (overshooting by at most one word's tokens). `system`: the
 * system prompt every conversation shares, or undefined for none (the template may then add its own default).
 */
export function buildConversations(path: string, count: number, prompt: Range, decode: Range, seed: number, system: string | undefined): Conversation[] {
  const promptModel = promptModelOf(path);
  const countTokens = (user: string) => preparePrompt(promptModel, { messages: messagesOf(system, user) }, undefined).tokens.length;
  const overhead = countTokens("");
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const target = drawIn(random, prompt);
    const words: string[] = [];
    // Cheap estimate per word (the user text alone), then exact counts near the target.
    while (overhead + promptModel.tokenizer.encode(words.join(" "), { addSpecial: false, parseSpecial: false }).length < target - 4) {
      words.push(WORDS[Math.floor(random() * WORDS.length)]);
    }
    const sentence = () => { const text = words.join(" "); return `${text.slice(0, 1).toUpperCase()}${text.slice(1)}?`; };
    let tokens = countTokens(sentence());
    while (tokens < target) {
      words.push(WORDS[Math.floor(random() * WORDS.length)]);
      tokens = countTokens(sentence());
    }
    return { user: sentence(), maxTokens: drawIn(random, decode), promptTokens: tokens };
  });
}

/** The tokenizer and chat template of the GGUF file at `path`, as preparePrompt takes them. */
function promptModelOf(path: string) {
  const source = openModelSource(path);
  if (!source.ggufMetadata) throw new Error(`${path} is not a GGUF file`);
  return { tokenizer: tokenizerFromGguf(source.ggufMetadata, path), chatTemplate: source.chatTemplate, vocabSize: source.config.vocab_size };
}

/** Counts a conversation's prompt tokens after the model's chat template (system prompt optional). */
export function promptTokenCounter(path: string): (system: string | undefined, user: string) => number {
  const promptModel = promptModelOf(path);
  return (system, user) => preparePrompt(promptModel, { messages: messagesOf(system, user) }, undefined).tokens.length;
}

/**
 * Seeded text: `lead`, then words drawn from the bench's vocabulary until the text alone (no template, no special
 * tokens) is `tokens` tokens long, overshooting by at most one word's tokens.
 */
export function seededText(path: string, tokens: number, seed: number, lead = ""): string {
  const { tokenizer } = promptModelOf(path);
  const random = seededRandom(seed);
  const words = lead === "" ? [] : [lead];
  const count = () => tokenizer.encode(words.join(" "), { addSpecial: false, parseSpecial: false }).length;
  // Half the missing tokens' worth of words at a time (a word is at least one token), then one by one.
  for (let have = count(); have < tokens; have = count()) {
    for (let i = Math.max(1, Math.floor((tokens - have) / 2)); i > 0; i--) words.push(WORDS[Math.floor(random() * WORDS.length)]);
  }
  return words.join(" ");
}

/** A chat completions body: temperature 0; streamed with a final usage chunk unless `stream` is false. */
export function openAiBody(model: string, system: string | undefined, user: string, maxTokens: number, stream = true): string {
  return JSON.stringify({
    model, messages: messagesOf(system, user), max_tokens: maxTokens, temperature: 0,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

/**
 * A Responses API body for the same conversation as openAiBody's: the messages as input items, temperature 0, not
 * stored, truncation "auto" (chat completions' default auto compaction), so that it reaches the engine as the same
 * request; streamed unless `stream` is false.
 */
export function responsesBody(model: string, system: string | undefined, user: string, maxTokens: number, stream = true): string {
  return JSON.stringify({ model, input: messagesOf(system, user), max_output_tokens: maxTokens, temperature: 0, store: false, truncation: "auto", ...(stream ? { stream: true } : {}) });
}

/** A messages body: temperature 0; streamed unless `stream` is false. */
export function anthropicBody(model: string, system: string | undefined, user: string, maxTokens: number, stream = true): string {
  return JSON.stringify({ model, ...(system === undefined ? {} : { system }), messages: [{ role: "user", content: user }], max_tokens: maxTokens, temperature: 0, ...(stream ? { stream: true } : {}) });
}
