// The pre-tokenizer regexes that cut words where letter case changes: gpt-4o's (o200k, gpt-oss) and Tekken's (Mistral
// Nemo, Ministral, Mistral 3), as tokenizer.json files write them and as llama.cpp rewrites them for std::regex.
//
// llama.cpp has no hand-written splitter for these: it runs its rewrite through std::regex on the "collapsed" text
// (split-regex.ts), which loom reproduces with a JavaScript RegExp. The rewrite spells `(?i:'s|...)` out as
// `(?:'[sS]|...)` and each case class as a lookahead for a letter plus an ASCII-case exclusion:
// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` becomes `((?=[\p{L}])([^a-z]))` and `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` becomes
// `((?=[\p{L}])([^A-Z]))`.
// NOTE: in the collapsed text every non-ASCII letter is one placeholder, which passes both exclusions, so llama.cpp (and
// loom, for GGUF files) tell case apart for ASCII letters only ("приветМИР" stays one word, where Hugging Face cuts it
// before "М"), and combining marks (\p{M}) no longer join a word: they are not letters for the lookahead.

/** gpt-4o (o200k_base / o200k_harmony) as tokenizer.json writes it. */
export const GPT4O_REGEX_ORIGINAL =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
  "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** gpt-4o as llama.cpp's llama-vocab.cpp writes it (LLAMA_VOCAB_PRE_TYPE_GPT4O). */
export const GPT4O_REGEX =
  "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|" +
  "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|" +
  "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** Tekken as tokenizer.json writes it: gpt-4o's without contractions, and single digits. */
export const TEKKEN_REGEX_ORIGINAL =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|" +
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|" +
  "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** Tekken as llama.cpp's llama-vocab.cpp writes it (LLAMA_VOCAB_PRE_TYPE_TEKKEN). */
export const TEKKEN_REGEX =
  "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|" +
  "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|" +
  "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
