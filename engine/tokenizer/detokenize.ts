// Token -> bytes: the raw bytes each token stands for (llama.cpp's token_to_piece), and the clean-up llama.cpp applies
// to joined pieces for vocabularies with `clean_spaces` (" ," -> ",", " 's" -> "'s", ...).
import { CHAR_TO_BYTE, utf8Bytes } from "./unicode.js";
import { TokenAttribute, type ResolvedVocabulary } from "./vocabulary.js";

const EMPTY = new Uint8Array(0);
const HIDDEN_UNLESS_SPECIAL = TokenAttribute.UNKNOWN | TokenAttribute.CONTROL;
const SHOWN_AS_TEXT = TokenAttribute.UNKNOWN | TokenAttribute.CONTROL | TokenAttribute.USER_DEFINED;

/** Bytes of a byte-level BPE token ("Ġhi" -> " hi"); characters outside the byte alphabet come out as llama.cpp writes them. */
function decodeByteLevel(text: string): Uint8Array {
  const out: number[] = [];
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const byte = code < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[code] : -1;
    if (byte >= 0) {
      out.push(byte);
      continue;
    }
    const hex = Array.from(utf8Bytes(char), (b) => b.toString(16).padStart(2, "0")).join("");
    out.push(...utf8Bytes(`[UNK_BYTE_0x${hex}${text}]`));
  }
  return Uint8Array.from(out);
}

/**
 * The bytes token `id` renders as. Control and unknown tokens render as their text only when `special` is set;
 * unused and undefined tokens render as nothing.
 */
export function tokenPiece(vocabulary: ResolvedVocabulary, id: number, special: boolean): Uint8Array {
  const attributes = vocabulary.attributes[id];
  if (!special && attributes & HIDDEN_UNLESS_SPECIAL) return EMPTY;
  const text = vocabulary.tokens[id];
  if (attributes & SHOWN_AS_TEXT) return utf8Bytes(text);
  if (attributes & TokenAttribute.NORMAL) {
    const escaped = vocabulary.kind === "spm" || vocabulary.rawUtf8;
    return escaped ? utf8Bytes(text.replaceAll("\u2581", " ")) : decodeByteLevel(text);
  }
  if (attributes & TokenAttribute.BYTE) return Uint8Array.of(parseInt(text.slice(3, 5), 16));
  return EMPTY;
}

const SPACE = 0x20;
const APOSTROPHE = 0x27;

/** llama.cpp's three clean-up passes over detokenized bytes, for vocabularies with `clean_spaces`. */
export function cleanUpSpaces(bytes: Uint8Array): Uint8Array {
  if (bytes.length === 0) return bytes;
  // 1: " ?", " !", " .", " ," lose the space.
  const first: number[] = [bytes[0]];
  for (let i = 1; i < bytes.length; i++) {
    const x = bytes[i];
    if (bytes[i - 1] === SPACE && (x === 0x3f || x === 0x21 || x === 0x2e || x === 0x2c)) first.pop();
    first.push(x);
  }
  // 2: " ' " becomes "'". The swallowed space reads as a NUL to the character after it, as in llama.cpp.
  const second: number[] = [first[0]];
  for (let i = 1; i < first.length; i++) {
    const x = first[i];
    if (x === APOSTROPHE && i + 1 < first.length && first[i - 1] === SPACE && first[i + 1] === SPACE) {
      second.pop();
      first[i + 1] = 0;
      second.push(x);
      i++;
      continue;
    }
    second.push(x);
  }
  // 3: " 's", " 'm", " 're", " 've" lose the space (" 't", " 'd", " 'll" keep it).
  const third: number[] = [second[0]];
  for (let i = 1; i < second.length; i++) {
    const x = second[i];
    if (second[i - 1] === SPACE && x === APOSTROPHE && i + 1 < second.length) {
      const x1 = second[i + 1];
      if (x1 === 0x73 || x1 === 0x6d) third.pop();
      else if (x1 !== 0x74 && x1 !== 0x64 && i + 2 < second.length) {
        const x2 = second[i + 2];
        if ((x1 === 0x72 && x2 === 0x65) || (x1 === 0x76 && x2 === 0x65)) third.pop();
      }
    }
    third.push(x);
  }
  return Uint8Array.from(third);
}
