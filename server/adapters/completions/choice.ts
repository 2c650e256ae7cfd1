// One choice of a legacy completion as it is written: the echoed prompt first (with its tokens' log-probabilities),
// then the generated text with its tokens'. Whole responses and streams are built from the same deltas, so their text
// and logprobs are equal.
import type { TokenLogprob } from "../../../engine/request.js";
import { type LegacyLogprobs, LegacyLogprobsBuilder, scoredToken, unscoredToken } from "./logprobs.js";

/** A piece of one choice: text, and the logprobs of the tokens it holds when asked for. */
export interface ChoiceDelta {
  text: string;
  logprobs?: LegacyLogprobs;
}

/** What a choice's writer knows of its prompt. */
export interface ChoicePrompt {
  /** The prompt as text: the client's string, or its token ids decoded. */
  text: string;
  /** The prompt's token ids and each one's bytes (needed for echo with logprobs: the first token's text). */
  tokens: number[];
  pieces?: number[][];
}

/** Turns one choice's events into deltas. */
export class ChoiceWriter {
  readonly #builder: LegacyLogprobsBuilder;
  #echoed = false;

  /**
   * @param echo whether the prompt's text comes first; `logprobs`: whether log-probabilities were asked for. A
   * completion token's offset counts from the prompt's text, as OpenAI's do, whether or not it is echoed.
   */
  constructor(private readonly prompt: ChoicePrompt, private readonly echo: boolean, private readonly logprobs: boolean) {
    this.#builder = new LegacyLogprobsBuilder(prompt.text.length);
  }

  /** On admission: the echo, when no prompt log-probabilities are to come with it. */
  admitted(promptLogprobsAsked: boolean): ChoiceDelta | undefined {
    if (!this.echo || promptLogprobsAsked) return undefined;
    return this.#echo();
  }

  /** The prompt's log-probabilities: the echo, with them when logprobs were asked for. */
  promptLogprobs(entries: readonly (TokenLogprob | null)[]): ChoiceDelta | undefined {
    if (!this.echo) return undefined;
    const delta = this.#echo();
    if (!this.logprobs) return delta;
    const logprobs = LegacyLogprobsBuilder.empty();
    const tokens = entries.map((entry, position) => entry ? scoredToken(entry) : unscoredToken(this.prompt.tokens[position] ?? -1, this.prompt.pieces?.[position]));
    // The echoed text is the prompt's: its tokens' offsets run through it from 0.
    new LegacyLogprobsBuilder(0).append(logprobs, tokens, this.prompt.text);
    return { ...delta, logprobs };
  }

  /** Generated text, and the logprobs of the tokens it completes. */
  text(text: string, logprobs: readonly TokenLogprob[] | undefined): ChoiceDelta | undefined {
    if (text === "" && !logprobs?.length) return undefined;
    if (!this.logprobs) return { text };
    const delta = { text, logprobs: LegacyLogprobsBuilder.empty() };
    this.#builder.append(delta.logprobs, (logprobs ?? []).map(scoredToken), text);
    return delta;
  }

  #echo(): ChoiceDelta {
    if (this.#echoed) return { text: "" };
    this.#echoed = true;
    return { text: this.prompt.text };
  }
}

/** Appends `delta` to a choice collected whole. */
export function appendDelta(into: { text: string; logprobs?: LegacyLogprobs }, delta: ChoiceDelta): void {
  into.text += delta.text;
  if (!delta.logprobs) return;
  const logprobs = (into.logprobs ??= LegacyLogprobsBuilder.empty());
  // One at a time: a long prompt's tokens spread as arguments would overflow the stack.
  const added = delta.logprobs;
  for (let i = 0; i < added.tokens.length; i++) {
    logprobs.tokens.push(added.tokens[i]!);
    logprobs.token_logprobs.push(added.token_logprobs[i]!);
    logprobs.top_logprobs.push(added.top_logprobs[i]!);
    logprobs.text_offset.push(added.text_offset[i]!);
  }
}
