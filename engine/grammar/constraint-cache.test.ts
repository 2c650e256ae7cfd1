// The engine's cache of compiled constraints: equal specs share one compiled constraint, the least recently used spec
// goes once the cache is full, and an automaton that grew past the state limit is replaced for the next request while
// the requests already on it go on. A byte-level toy vocabulary keeps compilation instant.
import { describe, expect, it } from "vitest";
import { Tokenizer } from "../tokenizer/tokenizer.js";
import { TokenType } from "../tokenizer/vocabulary.js";
import type { ConstraintSpec } from "./answer.js";
import { ConstraintCache } from "./constraint-cache.js";

/** <unk>, <s>, </s>, then one token per byte: every text is spelled byte by byte. */
const tokenizer = new Tokenizer({
  source: "bytes",
  model: "llama",
  tokens: ["<unk>", "<s>", "</s>", ...Array.from({ length: 256 }, (_, byte) => `<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`)],
  tokenTypes: [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL, ...new Array<number>(256).fill(TokenType.BYTE)],
  scores: new Array<number>(259).fill(0),
  addSpacePrefix: false,
});
const byteToken = (byte: number) => 3 + byte;

/** A spec per name: an object with one required integer property of that name. */
const spec = (name: string): ConstraintSpec => ({
  format: { type: "json_schema", schema: { type: "object", properties: { [name]: { type: "integer" } }, required: [name], additionalProperties: false } },
});

describe("ConstraintCache", () => {
  it("gives equal specs one compiled constraint, and another spec its own", () => {
    const cache = new ConstraintCache(tokenizer, tokenizer.vocabSize);
    const first = cache.get(spec("a"));
    expect(cache.get(spec("a"))).toBe(first); // an equal spec, not the same object
    expect(cache.get(spec("b"))).not.toBe(first);
    expect(cache.size).toBe(2);
  });

  it("drops the least recently used spec past its capacity", () => {
    const cache = new ConstraintCache(tokenizer, tokenizer.vocabSize, 2);
    const a = cache.get(spec("a"));
    const b = cache.get(spec("b"));
    expect(cache.get(spec("a"))).toBe(a); // a is now the most recently used
    const c = cache.get(spec("c")); // full: b goes
    expect(cache.size).toBe(2);
    expect(cache.get(spec("a"))).toBe(a);
    expect(cache.get(spec("c"))).toBe(c);
    const bAgain = cache.get(spec("b")); // compiled again; a, the least recently used now, goes
    expect(bAgain).not.toBe(b);
    expect(cache.get(spec("c"))).toBe(c);
    expect(cache.get(spec("a"))).not.toBe(a);
    expect(cache.size).toBe(2);
  });

  it("replaces an automaton that grew past the state limit for new requests; a request already on it finishes", () => {
    const cache = new ConstraintCache(tokenizer, tokenizer.vocabSize, 32, 20);
    const compiled = cache.get(spec("n"));
    expect(compiled.automaton.stateCount).toBeLessThanOrEqual(20);
    expect(cache.get(spec("n"))).toBe(compiled);
    // A request walks the output byte by byte, asking for the mask at each step as the engine does.
    const running = compiled.start();
    const walk = (text: string) => {
      for (const byte of new TextEncoder().encode(text)) {
        expect(running.allows(byteToken(byte)), text).toBe(true);
        running.accept(byteToken(byte));
      }
    };
    walk('{"n":12');
    expect(compiled.automaton.stateCount).toBeGreaterThan(20);
    const fresh = cache.get(spec("n"));
    expect(fresh).not.toBe(compiled);
    expect(fresh.automaton.stateCount).toBeLessThanOrEqual(20);
    expect(cache.get(spec("n"))).toBe(fresh);
    expect(cache.size).toBe(1);
    walk("3}");
    expect(running.complete).toBe(true);
    expect(running.finished).toBe(true);
  });
});
