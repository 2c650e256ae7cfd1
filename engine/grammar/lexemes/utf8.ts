// The well-formed UTF-8 rule both the string lexeme and the plain-token split apply, so they agree byte for byte, and
// the check that text has a UTF-8 encoding at all.

/**
 * What a UTF-8 lead byte starts: the sequence's length, and the range its first continuation byte may take (narrower
 * after E0, ED, F0 and F4, which rules out overlong forms, surrogates and code points past U+10FFFF). Undefined for a
 * byte that cannot lead a multi-byte sequence.
 */
export function utf8Lead(byte: number): { length: number; low: number; high: number } | undefined {
  if (byte >= 0xc2 && byte <= 0xdf) return { length: 2, low: 0x80, high: 0xbf };
  if (byte >= 0xe0 && byte <= 0xef) return { length: 3, low: byte === 0xe0 ? 0xa0 : 0x80, high: byte === 0xed ? 0x9f : 0xbf };
  if (byte >= 0xf0 && byte <= 0xf4) return { length: 4, low: byte === 0xf0 ? 0x90 : 0x80, high: byte === 0xf4 ? 0x8f : 0xbf };
  return undefined;
}

/** Whether `text` holds a lone surrogate: a UTF-16 unit that is no code point, which UTF-8 cannot encode. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

// With the u flag a surrogate pair is one code point, so only unpaired halves are in the Surrogate category.
const LONE_SURROGATE = /\p{Cs}/u;
