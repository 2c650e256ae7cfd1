// What an old tool result is cut down to: a short tail of its text that starts at a clean token boundary, so the
// pruned prompt's tokens are the old ones with one span deleted (A B C -> A C), not a span replaced.

/** Content without a clean cut is emptied only from this length on; shorter content is left as it is. */
export const EMPTY_WITHOUT_CLEAN_CUT_CHARS = 512;

const WHITESPACE = /\s/u;
const LETTER = /\p{L}/u;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/** Printable ASCII that is neither a letter, a digit nor a space. */
const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;

/**
 * The content an old tool result is pruned to, or undefined to leave it as it is.
 *
 * The result is `content.slice(q)`: the shortest tail that starts where byte-level BPE tokenizers (GPT-2, Llama 3,
 * Qwen, SmolLM) begin a new pre-token both in the old text and right after the template's text before the content:
 * - a line start: `q` follows "\n" and `content[q]` is not whitespace;
 * - ASCII punctuation right after a letter or digit (`...xyz"}`, `exit code: 0`);
 * - failing both, a space before a letter, after a non-space (` word`).
 * The content must not start with whitespace (the template's own newline would merge with it differently).
 *
 * NOTE: the tail is kept, not a head and not a placeholder, because the END of the content is where templates glue
 * their text to it: Qwen3 renders "\n" + content + "\n" and its tokenizer merges "}\n" into one token and "\n\n"
 * (an emptied result) into one token. Keeping the tail leaves those end tokens identical, and the start boundary
 * ("\n" before a non-space) tokenizes the same in both prompts, so the only change is the deleted span.
 *
 * Without such a cut, content of {@link EMPTY_WITHOUT_CLEAN_CUT_CHARS} characters or more is emptied (it saves
 * tokens, but may cost a section-cache hit on templates that wrap the content in newlines); shorter content stays.
 */
export function prunedToolContent(content: string): string | undefined {
  if (typeof content !== "string" || content === "") return undefined;
  const cut = WHITESPACE.test(content[0]!) ? -1 : cleanCut(content);
  if (cut > 0) return content.slice(cut);
  return content.length >= EMPTY_WITHOUT_CLEAN_CUT_CHARS ? "" : undefined;
}

/** The largest clean cut position q in 1..length-1 (line start or punctuation first, then word start), or -1. */
function cleanCut(text: string): number {
  for (let q = text.length - 1; q >= 1; q--) {
    if (isLineStart(text, q) || isPunctuationAfterWord(text, q)) return q;
  }
  for (let q = text.length - 1; q >= 1; q--) {
    if (isWordStart(text, q)) return q;
  }
  return -1;
}

function isLineStart(text: string, q: number): boolean {
  return text[q - 1] === "\n" && !WHITESPACE.test(text[q]!) && !isLowSurrogate(text, q);
}

function isPunctuationAfterWord(text: string, q: number): boolean {
  return ASCII_PUNCTUATION.test(text[q]!) && LETTER_OR_DIGIT.test(codePointBefore(text, q));
}

function isWordStart(text: string, q: number): boolean {
  if (text[q] !== " " || q + 1 >= text.length) return false;
  const before = codePointBefore(text, q);
  return !WHITESPACE.test(before) && LETTER.test(String.fromCodePoint(text.codePointAt(q + 1)!));
}

/** The whole code point that ends at q - 1 (both halves of a surrogate pair). */
function codePointBefore(text: string, q: number): string {
  const last = text.charCodeAt(q - 1);
  if (last >= 0xdc00 && last <= 0xdfff && q >= 2) return text.slice(q - 2, q);
  return text[q - 1]!;
}

function isLowSurrogate(text: string, q: number): boolean {
  const code = text.charCodeAt(q);
  return code >= 0xdc00 && code <= 0xdfff;
}
