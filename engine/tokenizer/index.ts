// Public surface of the tokenizer module: the Tokenizer, its loaders, and GGUF metadata for generated models.
export { Tokenizer, type DecodeOptions, type EncodeOptions } from "./tokenizer.js";
export type { StreamDecoder } from "./stream-decoder.js";
export { tokenizerFromGguf, vocabularySpecFromGguf } from "./gguf.js";
export { tokenizerFromHuggingFace, vocabularySpecFromHuggingFace, type HuggingFaceTokenizerOptions } from "./huggingface.js";
export { tokenizerFromLlama2c, vocabularySpecFromLlama2c } from "./llama2c.js";
export {
  ggufMetadataFromVocabulary,
  ggufTokenizerMetadata,
  padVocabulary,
  vocabularySpecFromPath,
  type GgufTokenizerMetadataOptions,
} from "./gguf-metadata.js";
export { TokenAttribute, TokenType, type SpecialTokenRole, type VocabularySpec } from "./vocabulary.js";
export { PRE_TOKENIZERS } from "./pre-tokenizers.js";
export { OversizedWordError, TokenLimitError, TokenizerInputError } from "./errors.js";
