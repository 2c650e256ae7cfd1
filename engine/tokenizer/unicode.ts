// Unicode facts the pre-tokenizers need: per-codepoint category flags (as llama.cpp's unicode tables encode them),
// the White_Space set, and GPT-2's byte <-> printable-character mapping used by byte-level BPE vocabularies.
//
// NOTE: categories come from the Unicode database built into Node (ICU). llama.cpp ships its own generated table,
// which may be a few Unicode versions older: characters assigned only in the newest versions can classify differently.

/** Category bits, one per general category group, in the same layout llama.cpp uses. */
export const CodepointFlag = {
  UNDEFINED: 0x0001,
  NUMBER: 0x0002, // \p{N}
  LETTER: 0x0004, // \p{L}
  SEPARATOR: 0x0008, // \p{Z}
  ACCENT_MARK: 0x0010, // \p{M}
  PUNCTUATION: 0x0020, // \p{P}
  SYMBOL: 0x0040, // \p{S}
  CONTROL: 0x0080, // \p{C}
  CATEGORY_MASK: 0x00ff,
  WHITESPACE: 0x0100, // Unicode White_Space property
} as const;

const CATEGORY_TESTS: ReadonlyArray<[number, RegExp]> = [
  [CodepointFlag.NUMBER, /^\p{N}$/u],
  [CodepointFlag.LETTER, /^\p{L}$/u],
  [CodepointFlag.SEPARATOR, /^\p{Z}$/u],
  [CodepointFlag.ACCENT_MARK, /^\p{M}$/u],
  [CodepointFlag.PUNCTUATION, /^\p{P}$/u],
  [CodepointFlag.SYMBOL, /^\p{S}$/u],
];
const UNASSIGNED = /^\p{Cn}$/u;
const WHITE_SPACE = /^\p{White_Space}$/u;

/** Lazily filled: 0 means "not computed yet" (every real codepoint has at least one flag bit). */
const flagCache = new Uint16Array(0x110000);

function computeFlags(codepoint: number): number {
  if (codepoint >= 0xd800 && codepoint <= 0xdfff) return CodepointFlag.CONTROL; // surrogates are category Cs
  const text = String.fromCodePoint(codepoint);
  let flags = 0;
  if (UNASSIGNED.test(text)) {
    flags = CodepointFlag.UNDEFINED;
  } else {
    for (const [flag, test] of CATEGORY_TESTS) {
      if (test.test(text)) {
        flags = flag;
        break;
      }
    }
    if (flags === 0) flags = CodepointFlag.CONTROL; // Cc, Cf, Co
  }
  if (WHITE_SPACE.test(text)) flags |= CodepointFlag.WHITESPACE;
  return flags;
}

for (let c = 0; c < 0x80; c++) flagCache[c] = computeFlags(c);

/** The category flags of one codepoint; 0 for values outside Unicode. */
export function codepointFlags(codepoint: number): number {
  if (codepoint < 0 || codepoint >= 0x110000) return 0;
  const cached = flagCache[codepoint];
  if (cached !== 0) return cached;
  const flags = computeFlags(codepoint);
  flagCache[codepoint] = flags;
  return flags;
}

/** Splits a string into codepoints (lone surrogates become U+FFFD, as UTF-8 encoding would make them). */
export function codepointsOf(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out.push(((unit - 0xd800) << 10) + (next - 0xdc00) + 0x10000);
        i++;
        continue;
      }
    }
    out.push(unit >= 0xd800 && unit <= 0xdfff ? 0xfffd : unit);
  }
  return out;
}

/** Replaces lone surrogates with U+FFFD so the string is exactly what its UTF-8 encoding will say. */
export function wellFormed(text: string): string {
  // String.prototype.toWellFormed is Node 20+.
  return (text as string & { toWellFormed(): string }).toWellFormed();
}

const utf8Encoder = new TextEncoder();
/** UTF-8 bytes of a string. */
export function utf8Bytes(text: string): Uint8Array {
  return utf8Encoder.encode(text);
}

/** Byte length of a string's UTF-8 encoding. */
export function utf8Length(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) length += 1;
    else if (unit < 0x800) length += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      length += 4;
      i++;
    } else length += 3;
  }
  return length;
}

/**
 * GPT-2's reversible byte -> character table: printable Latin-1 bytes map to themselves, the other 68 bytes to
 * U+0100.. in byte order, so that every byte becomes one visible character of a byte-level BPE token.
 */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const table: string[] = new Array(256);
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let next = 0x100;
  for (let b = 0; b < 256; b++) table[b] = String.fromCharCode(printable(b) ? b : next++);
  return table;
})();

/** Inverse of {@link BYTE_TO_CHAR}, indexed by char code (all codes are below 0x144); -1 where no byte maps. */
export const CHAR_TO_BYTE: Int16Array = (() => {
  const table = new Int16Array(0x144).fill(-1);
  BYTE_TO_CHAR.forEach((char, byte) => (table[char.charCodeAt(0)] = byte));
  return table;
})();

/** Encodes a string's UTF-8 bytes as byte-level BPE characters ("hi there" -> "hiĠthere"). */
export function byteLevelEncode(text: string): string {
  const bytes = utf8Bytes(text);
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += BYTE_TO_CHAR[bytes[i]];
  return out;
}

/** UTF-16 units of each code point of `text` (a surrogate pair is one symbol). */
export function codepointWidths(text: string): number[] {
  const widths: number[] = [];
  for (let i = 0; i < text.length; ) {
    const unit = text.charCodeAt(i);
    const width = unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length ? 2 : 1;
    widths.push(width);
    i += width;
  }
  return widths;
}
