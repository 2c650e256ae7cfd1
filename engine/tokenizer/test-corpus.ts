// Text the tokenizer tests run through both loom and llama.cpp: several scripts, emoji (ZWJ sequences, flags, skin
// tones), code, digit runs, whitespace runs, contractions, special-token text, control characters and lone
// surrogates (which UTF-8 encoding turns into U+FFFD on both sides). Plain data, no test-runner imports.

export const CORPUS: readonly string[] = [
  // empty and whitespace
  "", " ", "  ", "   ", "\t", "\n", "\n\n\n", " \n ", "\r\n", "\r\n\r\n", " \t\n \t", "hello   ", "   hello", "  hello  world  ",
  "          many spaces          ", "end with newline\n", "\n\nstart with newlines", "tab\tin\tmiddle", "a  =  b\t\t+\t\tc",
  // English, contractions, punctuation
  "Hello world", "Hello, world! How are you?", "Once upon a time, there was a little girl named Lily.",
  "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX.",
  "I'm fine, don't worry. WE'LL see. it'S ok. You'Ve they'RE I'D 'tis 's", "''''''", "'", "'t", "a'b'c", "''s'",
  " ,  .  ?  !  ' s ' ve", "Hello , world . Is it ? Yes ! It 's , I 'm , we 're , don 't", "------======= ......!!!!!!?????? ```````\"\"\"\"",
  "__init__ __main__ ____", "$100 + 50% = ^~|` #hashtag @mention", "x==y!=z<=w>=v->u=>t", "!!!!!!!!!!!!!!!!!!!!!!!!",
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  // digits
  "1234567890", "3.14159", "1,000,000.00", "12 123 1234 12345 123456 1234567", "٣٤٥ ١٢", "²³ ½ Ⅻ ⅷ", "１２３ ＡＢＣ", "0x1F 0b1010 1e-9",
  // scripts
  "你好，世界！我想在apple工作1314151天～", "日本語のテキスト、カタカナとひらがな。", "한국어 텍스트입니다", "مرحبا بالعالم", "שלום עולם",
  "नमस्ते दुनिया", "สวัสดีชาวโลก", "Привет, мир! нещо на Български", "Γειά σου Κόσμε", "გამარჯობა", "Բարեւ", "កាន់តែពិសេសអាច", "தமிழ்",
  "Tiếng Việt có dấu", "Tie\u0302\u0301ng Vie\u0323\u0302t decomposed", "e\u0301 vs é", "ﬁ ﬂ Å Å", "straße STRASSE", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕓𝕠𝕝𝕕",
  // emoji
  "🚀 (normal) 😶‍🌫️ (multiple emojis concatenated) ✅ 🦙🦙", "👩‍👩‍👧‍👦 family 👍🏽 🇺🇸🇯🇵 1️⃣ ❤️ 🏳️‍🌈", "😀😃😄😁😆😅🤣😂", "\u{1fae9}\u{1f9cc}",
  // code
  "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
  "function f(x) {\n\treturn x.map((y) => y * 2).filter(Boolean);\n}\n", "{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
  "<html><body class=\"x\">&nbsp;&amp;</body></html>", "SELECT * FROM users WHERE id = 42;",
  // unusual whitespace and control characters, invalid UTF-16
  "\u00a0nbsp\u00a0 \u3000ideographic\u3000 \u2009thin\u2009 \u200bzero\u200bwidth \ufeffbom", "\u0085next line\u2028line sep\u2029para",
  "\u0000nul\u0001\u001f\u007f", "\u0080\u009f", "\ud800lone high", "lone low\udfff", "\udfff\ud800 reversed pair", "\ufffd replacement",
  "\uffff\ufffe nonchar", "\ue000\uf8ff private", "\u{10ffff}",
  // text that looks like vocabulary internals
  "▁ lower one eighth ▁▁", "Ġ ĠĠ Ċ", "<0x0A> <0xFF>", "[PAD151650]",
  // special and added tokens
  "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
  "<s>hello</s>", "<s> hello </s>", "<unk>", "<|endoftext|>", "<|endoftext|><|endoftext|>", "<|im_start", "|>", "<|im_start|><|im_end|>",
  " <|im_end|> ", "<think>\nreasoning\n</think>\n\nanswer", "<tool_call>{\"a\":1}</tool_call>", "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",
  "<|reserved_special_token_0|>", "<repo_name>x<file_sep>y", "a<|im_end|>b<|im_end|>c",
  "</s>\n\n  next <|endoftext|>  after <unk>\t<s>  end",
  "<|start|>user<|message|>What is 2+2?<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>", "<|call|><|constrain|>json",
  "<s>[INST] Hello [/INST] Hi there</s>[INST]What's up?[/INST]", "[AVAILABLE_TOOLS][{\"type\": \"function\"}][/AVAILABLE_TOOLS]",
  "<|turn>system\n<|think|>Be brief.<turn|>\n<|turn>user\nWeather?<turn|>\n<|turn>model\n<|channel>thought\nplan\n<channel|>" +
    "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|><|tool_response>response:get_weather{temp:20}<tool_response|>",
  "<|tool>declaration:f{}<tool|> <|image> <|audio>\n\n\n<turn|>\n\n",
  // letter case inside words (gpt-4o / Tekken split at case changes), contractions after words
  "camelCase PascalCase HTTPServer iPhone XMLHttpRequest snake_case SCREAMING_CASE", "I'M YOU'RE they'Ve it'S don'T",
  "ÀÉÎõü ĞüNaydın приветМИР ΑθήναΚόσμε", "1/2 a/b\n/c 12/34/56",
  // convert_hf_to_gguf.py's pre-tokenizer check text
  "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) 😶\u200d🌫️ (multiple emojis concatenated) ✅ 🦙🦙 3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 កាន់តែពិសេសអាច😁 ?我想在apple工作1314151天～ ------======= нещо на Български ''''''```````\"\"\"\"......!!!!!!?????? I've been 'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like some tea? We'Ve a'lL",
];

/** A 10,000-character prompt mixing everything above. */
export const LONG_PROMPT: string = CORPUS.join(" ").repeat(4).slice(0, 10_000);

/** Pieces for random strings: characters and fragments that sit on the tokenizers' decision boundaries. */
const FUZZ_PIECES: readonly string[] = [
  ..."abcXYZ  \t\n\r'.,!?0123456789_-<>|/\\$+=^~`",
  "é", "ß", "中", "文", "🦙", "👩‍👧", "\u200d", "\u00a0", "\u3000", "\u2028", "ا", "ب", "ก", "ा", "\u0301", "１", "²", "٣", "Ⅻ", "…", "—", "€",
  "<|im_start|>", "<|im_end|>", "<s>", "</s>", "<think>", "'s", "'RE", "'lL", "▁", "Ġ", "\ud800",
];

/** `count` random strings from a fixed seed, so failures reproduce. */
export function fuzzCorpus(count: number, seed = 12345): string[] {
  let state = seed;
  const random = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const texts: string[] = [];
  for (let k = 0; k < count; k++) {
    let text = "";
    const length = Math.floor(random() * 40);
    for (let i = 0; i < length; i++) text += FUZZ_PIECES[Math.floor(random() * FUZZ_PIECES.length)];
    texts.push(text);
  }
  return texts;
}
