// The agentic multi-turn conversation of the section-cache benches, built at the token level: a system prompt, a user
// task, tool results; each turn appends the previous reply and a new tool result and prunes the oldest tool result,
// so relative to the previous request's chain the new prompt is A C D with one pruned span B. The message framing
// (ChatML ids, or ordinary ids standing in for them) is a parameter, so any tokenizer can carry it.
import { randomTokens, seededRandom } from "./bench-models.js";

/** The message roles of the conversation. */
export type Role = "system" | "user" | "assistant" | "tool";

/**
 * How a message is framed: `messageStart role newline content messageEnd newline`, as ChatML does. For a tokenizer
 * without ChatML tokens, any fixed ordinary ids stand in for them.
 */
export interface MessageFraming {
  messageStart: number;
  messageEnd: number;
  newline: number;
  roles: Readonly<Record<Role, number>>;
  /** Tokens the prompt opens with, before the system message (a BOS where the model expects one; none for ChatML). */
  begin: readonly number[];
}

/**
 * SmolLM2's <|im_start|> and <|im_end|> ids (the prompt starts with <|im_start|>, as SmolLM2's template does: no
 * separate BOS); role names and the newline are ordinary ids.
 */
export const SMOLLM2_CHATML: MessageFraming = {
  messageStart: 1, messageEnd: 2, newline: 198, roles: { system: 9690, user: 4093, assistant: 520, tool: 15039 }, begin: [],
};

/** Sizes of the conversation's messages, in content tokens (framing excluded). */
export interface ConversationSizes {
  system: number;
  /** The user task (80 in agentic-workload). */
  user: number;
  /** Earlier (assistant call, tool result) pairs in turn 1. */
  history: number;
  /** Each earlier assistant call in turn 1 (24 in agentic-workload). */
  assistant: number;
  toolMin: number;
  toolMax: number;
}

/** One message of the conversation, framed. */
interface Span {
  role: Role;
  tokens: number[];
}

/** One turn's prompt. */
export interface TurnPrompt {
  /** The whole prompt, ending with the assistant header (the generation prompt). */
  tokens: number[];
  /** Tokens of the span pruned before this turn (0 on turn 1). */
  pruned: number;
}

/**
 * The conversation, turn by turn: {@link AgenticConversation.next} gives turn 1's prompt, then each later turn's from
 * the reply to the turn before. Every draw comes from one seeded stream, so the same seed, sizes and replies give the
 * same prompts.
 */
export class AgenticConversation {
  private readonly random: () => number;
  private readonly spans: Span[];
  private turns = 0;

  /**
   * @param content draws `count` content tokens (default: {@link randomTokens} over `vocabSize`); it must avoid the
   *   framing ids for the spans to stay unambiguous.
   */
  constructor(
    private readonly framing: MessageFraming,
    private readonly sizes: ConversationSizes,
    vocabSize: number,
    seed = 4242,
    private readonly content: (random: () => number, count: number) => number[] = (random, count) => randomTokens(random, count, vocabSize),
  ) {
    this.random = seededRandom(seed);
    // NOTE: the order of draws is the conversation: agentic-workload's published figures depend on it.
    const system = this.frame("system", this.content(this.random, sizes.system));
    system.tokens.unshift(...framing.begin);
    this.spans = [system, this.frame("user", this.content(this.random, sizes.user))];
    for (let i = 0; i < sizes.history; i++) this.spans.push(this.frame("assistant", this.content(this.random, sizes.assistant)), this.tool());
    this.spans.push(this.frame("assistant", this.content(this.random, sizes.assistant)), this.tool());
  }

  /** The next turn's prompt: turn 1's without a reply; each later one needs the reply generated in the turn before. */
  next(previousReply?: readonly number[]): TurnPrompt {
    let pruned = 0;
    if (this.turns > 0) {
      if (!previousReply) throw new TypeError(`turn ${this.turns + 1} needs the reply of turn ${this.turns}`);
      this.spans.push(this.frame("assistant", [...previousReply]), this.tool());
      // Prune the oldest tool result: it was in every request so far, so the previous chain holds it.
      const oldest = this.spans.findIndex((span) => span.role === "tool");
      pruned = this.spans[oldest].tokens.length;
      this.spans.splice(oldest, 1);
    }
    this.turns++;
    const { messageStart, newline, roles } = this.framing;
    return { tokens: [...this.spans.flatMap((span) => span.tokens), messageStart, roles.assistant, newline], pruned };
  }

  private frame(role: Role, content: number[]): Span {
    const { messageStart, messageEnd, newline, roles } = this.framing;
    return { role, tokens: [messageStart, roles[role], newline, ...content, messageEnd, newline] };
  }

  private tool(): Span {
    const { toolMin, toolMax } = this.sizes;
    return this.frame("tool", this.content(this.random, toolMin + Math.floor(this.random() * (toolMax - toolMin + 1))));
  }
}
