// The Tokenizer: text <-> token ids for SentencePiece-BPE ("llama"), byte-level BPE ("gpt2") and SentencePiece-style
// BPE with merges ("gemma4") vocabularies, token for token what llama.cpp produces for the same GGUF vocabulary.
import { tokenizeBpeWord, type BpeVocabulary } from "./bpe.js";
import { cleanUpSpaces, tokenPiece } from "./detokenize.js";
import { OversizedWordError, TokenLimitError, TokenizerInputError } from "./errors.js";
import { WordSplitter } from "./pre-tokenizers.js";
import { SpecialTokenSplitter } from "./special-split.js";
import { tokenizeSpm, type SpmVocabulary } from "./spm.js";
import { createStreamDecoderFor, type StreamDecoder } from "./stream-decoder.js";
import { byteLevelEncode, utf8Length, wellFormed } from "./unicode.js";
import { SPLIT_WINDOW_UNITS, spmPieces, windowedWords } from "./windowed-split.js";
import { TokenAttribute, resolveVocabulary, type ResolvedVocabulary, type VocabularySpec } from "./vocabulary.js";

/** Options for {@link Tokenizer.encode}. */
export interface EncodeOptions {
  /** Add BOS (and EOS) where the model asks for them (`addBos` / `addEos`). Default false. */
  addSpecial?: boolean;
  /**
   * Recognise the text of control tokens such as `<|im_start|>` or `<s>` and emit them as those tokens. Default false:
   * such text is tokenized as ordinary characters. User-defined added tokens (e.g. `<think>`) are recognised either way.
   */
  parseSpecial?: boolean;
  /**
   * Most tokens the caller will take: past it, encode throws {@link TokenLimitError} as soon as the count is certain
   * to exceed it, after about `maxTokens` tokens of work (a text longer than `maxTokens` times the longest token is
   * refused before any). Under the limit the result is exactly that of an unlimited encode. Default: no limit.
   */
  maxTokens?: number;
}

/** Options for {@link Tokenizer.decode} and {@link Tokenizer.createStreamDecoder}. */
export interface DecodeOptions {
  /** Render control and unknown tokens (BOS, `<|im_end|>`, ...) as nothing instead of their text. Default false. */
  skipSpecial?: boolean;
}

/**
 * Longest pre-tokenizer word tokenized under a token limit (UTF-16 units): BPE over 64 K units of one word takes
 * about 0.1-0.15 s here, over 4 M about 10 s.
 */
export const MAX_LIMITED_WORD_UNITS = 64 * 1024;

/** Most code points NFC composes into one (U+1F84: alpha, psili, oxia, ypogegrammeni). */
const NFC_MOST_COMPOSED = 4;

const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });
const NOTHING = new Uint8Array(0);

/**
 * A loaded vocabulary with encode/decode. Build one with `tokenizerFromGguf`, `tokenizerFromHuggingFace` or
 * `tokenizerFromLlama2c`, or directly from a {@link VocabularySpec}.
 */
export class Tokenizer {
  /**
   * "spm": SentencePiece-style BPE by token scores, with byte fallback; "bpe": BPE by merge ranks, byte-level ("gpt2")
   * or over SentencePiece-style text with `<0xXX>` byte fallback ("gemma4").
   */
  readonly kind: "spm" | "bpe";
  /** Number of token ids (the model's embedding rows may be more). */
  readonly vocabSize: number;
  readonly bosId?: number;
  readonly eosId?: number;
  /** End-of-turn token (`<|im_end|>`, `<|eot_id|>`, ...) as named by the file or found by its text. */
  readonly eotId?: number;
  readonly unkId?: number;
  readonly padId?: number;
  /** Whether encode with `addSpecial` prepends BOS. */
  readonly addBos: boolean;
  /** Whether encode with `addSpecial` appends EOS. */
  readonly addEos: boolean;
  /** Tokens that end generation: EOS, EOT and the texts llama.cpp treats as such (`<|im_end|>`, `<|endoftext|>`, ...). */
  readonly endOfGenerationIds: ReadonlySet<number>;
  /** The chat template the vocabulary came with, if any. */
  readonly chatTemplate?: string;
  /** Where the vocabulary came from. */
  readonly source: string;

  private readonly vocabulary: ResolvedVocabulary;
  private readonly specialSplitter: SpecialTokenSplitter;
  private readonly wordSplitter?: WordSplitter;
  private readonly spm?: SpmVocabulary;
  private readonly bpe?: BpeVocabulary;
  private readonly pieceCache: Array<Uint8Array | undefined>;
  /** Bytes of the longest token: a text of n UTF-16 units has at least n / this many tokens. */
  private longestPiece: number | undefined;
  private spmCuts: boolean | undefined;

  constructor(spec: VocabularySpec) {
    const vocabulary = resolveVocabulary(spec);
    this.vocabulary = vocabulary;
    this.kind = vocabulary.kind;
    this.source = vocabulary.source;
    this.vocabSize = vocabulary.tokens.length;
    this.bosId = vocabulary.ids.bos;
    this.eosId = vocabulary.ids.eos;
    this.eotId = vocabulary.ids.eot;
    this.unkId = vocabulary.ids.unk;
    this.padId = vocabulary.ids.pad;
    this.addBos = vocabulary.addBos;
    this.addEos = vocabulary.addEos;
    this.endOfGenerationIds = vocabulary.endOfGeneration;
    this.chatTemplate = vocabulary.chatTemplate;
    this.specialSplitter = new SpecialTokenSplitter(vocabulary.tokens, vocabulary.attributes, vocabulary.specialTokensLongestFirst);
    this.pieceCache = new Array(this.vocabSize);
    const byteTokens: Array<number | undefined> = [];
    for (let byte = 0; byte < 256; byte++) {
      const hex = byte.toString(16).toUpperCase().padStart(2, "0");
      // SentencePiece also takes an ASCII character's own token; llama.cpp's BPE session looks for <0xXX> only.
      const single = vocabulary.kind === "spm" && byte < 0x80 ? vocabulary.tokenToId.get(String.fromCharCode(byte)) : undefined;
      byteTokens.push(vocabulary.tokenToId.get(`<0x${hex}>`) ?? single);
    }
    if (vocabulary.kind === "spm") {
      this.spm = {
        tokenToId: vocabulary.tokenToId,
        scores: vocabulary.scores,
        byteTokens,
        missingByte: (byte) => {
          // llama.cpp aborts here; the unknown token is the SentencePiece answer.
          if (this.unkId !== undefined) return this.unkId;
          throw new TokenizerInputError(this.source, `the vocabulary has no token for byte 0x${byte.toString(16)} and no unknown token`);
        },
      };
    } else {
      this.wordSplitter = new WordSplitter(vocabulary.preRegexes);
      this.bpe = {
        tokenToId: vocabulary.tokenToId,
        mergeRanks: vocabulary.mergeRanks,
        ignoreMerges: vocabulary.ignoreMerges,
        rawUtf8: vocabulary.rawUtf8,
        wholeNewlineRuns: vocabulary.wholeNewlineRuns,
        byteTokens,
      };
    }
  }

  /** Text to token ids; with `maxTokens`, throws {@link TokenLimitError} once the text is certain to exceed it. */
  encode(text: string, options: EncodeOptions = {}): number[] {
    const { addSpecial = false, parseSpecial = false } = options;
    const limit = options.maxTokens ?? Number.POSITIVE_INFINITY;
    const limited = Number.isFinite(limit);
    const nfc = this.vocabulary.normalization === "NFC";
    let input = wellFormed(text);
    // Every token covers at most longestPiece bytes, and a UTF-16 unit is at least one byte; NFC composes at most
    // four code points (a Greek letter and three marks) into one, so the bound holds before normalising too.
    if (limited && input.length > (limit + 1) * this.longestPieceBytes() * (nfc ? NFC_MOST_COMPOSED : 1)) throw new TokenLimitError(limit);
    if (nfc) input = input.normalize("NFC");
    if (limited && input.length > (limit + 1) * this.longestPieceBytes()) throw new TokenLimitError(limit);
    const fragments = this.specialSplitter.split(input, parseSpecial);
    const out: number[] = [];
    const check = () => {
      if (out.length > limit) throw new TokenLimitError(limit);
    };
    if (addSpecial && this.addBos) out.push(this.requireId(this.bosId, "BOS"));
    if (this.spm) {
      // A space goes before the first text and before text that follows a special token.
      let afterSpecial = true;
      for (const fragment of fragments) {
        if (fragment.kind === "token") {
          out.push(fragment.id);
          afterSpecial = true;
          continue;
        }
        const spaced = this.vocabulary.addSpacePrefix && afterSpecial ? ` ${fragment.text}` : fragment.text;
        afterSpecial = false;
        if (limited) this.checkLowerBound(out.length, spaced, limit);
        const text = spaced.replaceAll(" ", "\u2581");
        // Limited, a long fragment goes a piece at a time where no token can span the cut, stopping at the limit.
        const pieces = limited && text.length > SPLIT_WINDOW_UNITS && this.spmCutsAtSpaces() ? spmPieces(text) : [text];
        for (const piece of pieces) {
          if (pieces.length > 1) this.checkLowerBound(out.length, piece, limit);
          tokenizeSpm(piece, this.spm, out);
          check();
        }
      }
    } else {
      const rawUtf8 = this.vocabulary.rawUtf8;
      for (const fragment of fragments) {
        if (fragment.kind === "token") {
          out.push(fragment.id);
          continue;
        }
        // SentencePiece-style BPE escapes spaces before splitting, as llama.cpp does.
        const text = rawUtf8 ? fragment.text.replaceAll(" ", "\u2581") : fragment.text;
        // Unlimited, the fragment is split in one go; limited, a window at a time, stopping at the limit.
        const words = limited ? windowedWords(this.wordSplitter!, text, SPLIT_WINDOW_UNITS, MAX_LIMITED_WORD_UNITS) : this.wordSplitter!.split(text);
        for (const word of words) {
          if (limited) {
            this.checkLowerBound(out.length, word, limit);
            // BPE over one word cannot stop early: a huge one would hold the thread for seconds.
            if (word.length > MAX_LIMITED_WORD_UNITS) throw new OversizedWordError(limit, word.length, MAX_LIMITED_WORD_UNITS);
          }
          tokenizeBpeWord(rawUtf8 ? word : byteLevelEncode(word), this.bpe!, out);
          check();
        }
      }
    }
    if (addSpecial && this.addEos) out.push(this.requireId(this.eosId, "EOS"));
    check();
    return out;
  }

  /** Throws TokenLimitError when `count` tokens plus the fewest that `text` can take exceed `limit`. */
  private checkLowerBound(count: number, text: string, limit: number): void {
    if (count + Math.ceil(text.length / this.longestPieceBytes()) > limit) throw new TokenLimitError(limit);
  }

  /**
   * Whether SentencePiece text can be cut before any "▁" that follows another character without changing its
   * tokens: true when no token holds such a pair (merges only make tokens, so none can then span the cut). True of
   * the Llama 2 and TinyStories vocabularies; computed once.
   */
  private spmCutsAtSpaces(): boolean {
    if (this.spmCuts === undefined) {
      this.spmCuts = !this.vocabulary.tokens.some((token) => /[^\u2581]\u2581/.test(token));
    }
    return this.spmCuts;
  }

  /**
   * Byte length of the longest token (computed once: on the first limited encode, or ahead of it by a caller that
   * warms the tokenizer before serving).
   */
  longestPieceBytes(): number {
    if (this.longestPiece === undefined) {
      let longest = 1;
      for (let id = 0; id < this.vocabSize; id++) longest = Math.max(longest, utf8Length(this.vocabulary.tokens[id]), tokenPiece(this.vocabulary, id, true).length);
      this.longestPiece = longest;
    }
    return this.longestPiece;
  }

  /**
   * Token ids to text, as llama.cpp's `llama_detokenize` (remove_special = false): for "llama" vocabularies the
   * leading space of the first token is dropped, and vocabularies with `clean_spaces` get llama.cpp's clean-ups.
   * Bytes that do not form valid UTF-8 become U+FFFD.
   */
  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    const special = !options.skipSpecial;
    const pieces: Uint8Array[] = [];
    let length = 0;
    let removeSpace = this.vocabulary.addSpacePrefix;
    for (const id of ids) {
      let piece: Uint8Array = this.piece(id, special);
      if (removeSpace && piece.length > 0 && piece[0] === 0x20) piece = piece.subarray(1);
      removeSpace = false;
      pieces.push(piece);
      length += piece.length;
    }
    let bytes: Uint8Array = new Uint8Array(length);
    let offset = 0;
    for (const piece of pieces) {
      bytes.set(piece, offset);
      offset += piece.length;
    }
    if (this.vocabulary.cleanSpaces) bytes = cleanUpSpaces(bytes);
    return UTF8.decode(bytes);
  }

  /** A decoder for streaming output: push ids as they are sampled, get text in whole characters. */
  createStreamDecoder(options: DecodeOptions = {}): StreamDecoder {
    const special = !options.skipSpecial;
    return createStreamDecoderFor((id) => this.piece(id, special));
  }

  /** The token's text as stored in the vocabulary (e.g. "▁the" or "Ġthe"). */
  tokenText(id: number): string {
    this.checkId(id);
    return this.vocabulary.tokens[id];
  }

  /**
   * The raw bytes the token stands for: a byte token `<0x0A>` is one byte, SentencePiece's "▁" is a space, byte-level
   * characters map back to their bytes, and control tokens give their text. Do not modify the returned array.
   */
  tokenBytes(id: number): Uint8Array {
    return this.piece(id, true);
  }

  /** The id of a token text, if the vocabulary has it. */
  tokenId(text: string): number | undefined {
    return this.vocabulary.tokenToId.get(text);
  }

  /** Whether the token is a control or unknown token (hidden by `skipSpecial`). */
  isSpecial(id: number): boolean {
    this.checkId(id);
    return (this.vocabulary.attributes[id] & (TokenAttribute.CONTROL | TokenAttribute.UNKNOWN)) !== 0;
  }

  /** Whether sampling this token ends generation. */
  isEndOfGeneration(id: number): boolean {
    return this.endOfGenerationIds.has(id);
  }

  /** The token's {@link TokenAttribute} bits, as llama.cpp's `llama_token_get_attr` reports them. */
  tokenAttributes(id: number): number {
    this.checkId(id);
    return this.vocabulary.attributes[id];
  }

  private piece(id: number, special: boolean): Uint8Array {
    this.checkId(id);
    if (!special && this.vocabulary.attributes[id] & (TokenAttribute.CONTROL | TokenAttribute.UNKNOWN)) return NOTHING;
    return (this.pieceCache[id] ??= tokenPiece(this.vocabulary, id, true));
  }

  private checkId(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
      throw new TokenizerInputError(this.source, `token id ${id} is outside the vocabulary (0..${this.vocabSize - 1})`);
    }
  }

  private requireId(id: number | undefined, what: string): number {
    if (id === undefined) throw new TokenizerInputError(this.source, `the model asks for a ${what} token but its vocabulary names none`);
    return id;
  }
}
