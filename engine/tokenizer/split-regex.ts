// Word splitting with a regex, the way llama.cpp does it when no hand-written splitter exists.
//
// A regex that uses Unicode categories (\p{N}, \p{L}, ...) runs over a "collapsed" text in which every codepoint
// outside ASCII becomes one placeholder character per category (and non-ASCII whitespace becomes \v), and each \p{X}
// in the regex becomes a class of that placeholder plus the ASCII members of X. A regex without categories runs over
// the codepoints themselves, again with non-ASCII whitespace shown as \v. Matches and the gaps between them both
// become words.
import { CodepointFlag, codepointFlags } from "./unicode.js";

/** Placeholder characters of the collapsed text, by category flag. */
const CATEGORY_PLACEHOLDER: ReadonlyMap<number, number> = new Map([
  [CodepointFlag.NUMBER, 0xd1],
  [CodepointFlag.LETTER, 0xd2],
  [CodepointFlag.PUNCTUATION, 0xd3],
  [CodepointFlag.ACCENT_MARK, 0xd4],
  [CodepointFlag.SYMBOL, 0xd5],
]);
const OTHER_PLACEHOLDER = 0xd0;
const VERTICAL_TAB = 0x0b;

/** The categories a regex may name, and which category flag each stands for (\p{Lu} etc. count as \p{L}). */
const CATEGORY_NAMES: ReadonlyMap<string, number> = new Map([
  ["\\p{N}", CodepointFlag.NUMBER],
  ["\\p{L}", CodepointFlag.LETTER],
  ["\\p{P}", CodepointFlag.PUNCTUATION],
  ["\\p{M}", CodepointFlag.ACCENT_MARK],
  ["\\p{S}", CodepointFlag.SYMBOL],
  ["\\p{Lu}", CodepointFlag.LETTER],
  ["\\p{Ll}", CodepointFlag.LETTER],
  ["\\p{Lt}", CodepointFlag.LETTER],
  ["\\p{Lm}", CodepointFlag.LETTER],
  ["\\p{Lo}", CodepointFlag.LETTER],
]);

/** Whether a regex names any Unicode category, and so runs on the collapsed text. */
export function usesCategories(regex: string): boolean {
  for (const name of CATEGORY_NAMES.keys()) if (regex.includes(name)) return true;
  return false;
}

/** The ASCII members of a category, written as regex class content. */
function asciiClassContent(category: number): string {
  let content = "";
  for (let c = 0; c < 0x80; c++) {
    if ((codepointFlags(c) & CodepointFlag.CATEGORY_MASK) === category) {
      const char = String.fromCharCode(c);
      content += /[A-Za-z0-9]/.test(char) ? char : `\\x${c.toString(16).padStart(2, "0")}`;
    }
  }
  return content;
}

/** Rewrites a category-using regex for the collapsed text. */
function collapseRegex(regex: string): string {
  let out = "";
  let insideClass = false;
  for (let i = 0; i < regex.length; i++) {
    const char = regex[i];
    if (char === "[" && (i === 0 || regex[i - 1] !== "\\")) {
      out += "[";
      insideClass = true;
      continue;
    }
    if (insideClass && char === "]" && regex[i - 1] !== "\\") {
      out += "]";
      insideClass = false;
      continue;
    }
    if (char === "\\" && regex[i + 1] === "p" && regex[i + 2] === "{" && i + 3 < regex.length) {
      const close = regex.indexOf("}", i + 3);
      if (close !== -1 && close <= i + 10) {
        const category = CATEGORY_NAMES.get(regex.slice(i, close + 1));
        if (category !== undefined) {
          const members = `\\x${CATEGORY_PLACEHOLDER.get(category)!.toString(16)}${asciiClassContent(category)}`;
          out += insideClass ? members : `[${members}]`;
          i = close;
          continue;
        }
      }
    }
    out += char;
  }
  return out;
}

/** The collapsed text: one UTF-16 unit per codepoint. */
export function collapseText(codepoints: readonly number[]): string {
  let out = "";
  for (const cp of codepoints) {
    if (cp < 0x80) {
      out += String.fromCharCode(cp);
      continue;
    }
    const flags = codepointFlags(cp);
    if (flags & CodepointFlag.WHITESPACE) out += String.fromCharCode(VERTICAL_TAB);
    else out += String.fromCharCode(CATEGORY_PLACEHOLDER.get(flags & CodepointFlag.CATEGORY_MASK) ?? OTHER_PLACEHOLDER);
  }
  return out;
}

/** The codepoints as a string, with non-ASCII whitespace shown as \v (what llama.cpp gives std::wregex). */
function plainText(codepoints: readonly number[]): string {
  let out = "";
  for (const cp of codepoints) {
    out += String.fromCodePoint(cp > 0x7f && codepointFlags(cp) & CodepointFlag.WHITESPACE ? VERTICAL_TAB : cp);
  }
  return out;
}

/** A regex compiled for one text representation, with a way to find every match inside one piece. */
export interface CompiledSplitRegex {
  readonly source: string;
  readonly collapsed: boolean;
  readonly pattern: RegExp;
}

/** Compiles a pre-tokenizer regex as llama.cpp would run it. Throws SyntaxError for regexes JavaScript rejects. */
export function compileSplitRegex(regex: string): CompiledSplitRegex {
  const collapsed = usesCategories(regex);
  // The collapsed text holds one unit per codepoint; the plain text needs the u flag to step over astral codepoints.
  const pattern = collapsed ? new RegExp(collapseRegex(regex), "g") : new RegExp(regex, "gu");
  return { source: regex, collapsed, pattern };
}

/**
 * Splits each piece (lengths in codepoints) into matches of the regex and the gaps between them. `collapsedText` and
 * the codepoints must describe the same text; the collapsed form is built once by the caller and shared.
 */
export function splitWithRegex(
  compiled: CompiledSplitRegex,
  codepoints: readonly number[],
  collapsedText: () => string,
  pieces: readonly number[],
): number[] {
  const words: number[] = [];
  const text = compiled.collapsed ? collapsedText() : undefined;
  let pieceStart = 0;
  for (const pieceLength of pieces) {
    // The regex sees only this piece: lookaheads stop at its end, as with std::regex_iterator over a sub-range.
    let subject: string;
    let unitToCodepoint: ((unit: number) => number) | undefined;
    if (text !== undefined) {
      subject = text.slice(pieceStart, pieceStart + pieceLength);
    } else {
      subject = plainText(codepoints.slice(pieceStart, pieceStart + pieceLength));
      // Match offsets only grow, so count codepoints incrementally from the last offset asked for.
      let unitSeen = 0;
      let codepointSeen = 0;
      const source = subject;
      unitToCodepoint = (unit: number) => {
        while (unitSeen < unit) {
          const code = source.charCodeAt(unitSeen);
          unitSeen += code >= 0xd800 && code <= 0xdbff && unitSeen + 1 < source.length ? 2 : 1;
          codepointSeen++;
        }
        return codepointSeen;
      };
    }
    const pattern = compiled.pattern;
    pattern.lastIndex = 0;
    let previousEnd = 0;
    for (let match = pattern.exec(subject); match !== null; match = pattern.exec(subject)) {
      let matchStart = match.index;
      let matchEnd = match.index + match[0].length;
      if (match[0].length === 0) pattern.lastIndex++; // never loop on an empty match
      if (unitToCodepoint) {
        matchStart = unitToCodepoint(matchStart);
        matchEnd = unitToCodepoint(matchEnd);
      }
      if (matchStart > previousEnd) words.push(matchStart - previousEnd);
      words.push(matchEnd - matchStart);
      previousEnd = matchEnd;
    }
    if (previousEnd < pieceLength) words.push(pieceLength - previousEnd);
    pieceStart += pieceLength;
  }
  return words;
}
