// Token-level constraints on the real Qwen3 vocabulary (151,669 tokens, 151,936 logits): seeded random generations
// that pick uniformly among the allowed tokens never find the mask empty, every complete output validates, tokens
// outside the mask are refused, end-of-generation tokens are allowed exactly when the output is complete; and the
// masks agree with stepping every token's bytes through the automaton one by one.
import { beforeAll, describe, expect, it } from "vitest";
import { tokenizerFromHuggingFace } from "../tokenizer/huggingface.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import type { Tokenizer } from "../tokenizer/tokenizer.js";
import type { ConstraintSpec } from "./answer.js";
import type { MatchState } from "./automaton.js";
import { CompiledConstraint, ConstraintViolationError, type TokenConstraint } from "./constraint.js";
import { type TokenMask, maskHas } from "./token-masks.js";
import { seededRandom } from "../testing/seeded-random.js";
import { SCHEMA_CORPUS } from "./testing/schema-corpus.js";
import { newValidator } from "./testing/validator.js";

/** Qwen3's logits width: more than its tokenizer's ids. */
const VOCABULARY_SIZE = 151_936;
const SCHEMAS = [
  "object-required-optional",
  "tool-get-weather",
  "tool-web-search",
  "pattern-semver",
  "format-date-time",
  "number-exclusive-decimal",
  "integer-multiple-of-bounded",
  "array-of-objects",
  "oneof-discriminated-shapes",
  "anyof-nullable-ref",
  "enum-escaped-strings",
  "object-unusual-property-names",
];
const SEEDS = [1, 2, 3, 4, 5];
const MAX_TOKENS = 160;

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function countOf(mask: TokenMask): number {
  let count = 0;
  for (let word = 0; word < mask.length; word++) count += popcount(mask[word]!);
  return count;
}

/** The ids in both masks. */
function intersection(a: TokenMask, b: TokenMask): TokenMask {
  return a.map((word, index) => word & b[index]!);
}

/** A token of `mask` (not empty), uniformly. */
function pickUniform(mask: TokenMask, random: () => number): number {
  let index = Math.floor(random() * countOf(mask));
  for (let word = 0; word < mask.length; word++) {
    const count = popcount(mask[word]!);
    if (index >= count) {
      index -= count;
      continue;
    }
    let bits = mask[word]!;
    for (; index > 0; index--) bits &= bits - 1;
    return (word << 5) | (31 - Math.clz32(bits & -bits));
  }
  throw new Error("empty mask");
}

function maskOf(ids: Iterable<number>): TokenMask {
  const mask = new Uint32Array((VOCABULARY_SIZE + 31) >>> 5);
  for (const id of ids) mask[id >>> 5]! |= 1 << (id & 31);
  return mask;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

interface Generation {
  tokens: number[];
  /** Ended with an end-of-generation token, or finished with nothing allowed to follow. */
  complete: boolean;
  /** Bytes of the output after some of its tokens (for the brute-force mask check). */
  prefixes: Uint8Array[];
}

const reason = missingFixtureReason(FIXTURES.qwen3Directory);

describe.skipIf(skipOutsideCi(reason))(titled("constraints on the Qwen3 vocabulary", reason), () => {
  let tokenizer: Tokenizer;
  let endTokens: number[];
  /** Ids a constraint must refuse everywhere: control tokens that do not end generation. */
  let control: number[];
  /** End-of-generation tokens and tokens of at most 2 bytes; of those, the ones with a closing byte (`"`, `}`, `]`). */
  let short: TokenMask;
  let closing: TokenMask;
  const ajv = newValidator();

  beforeAll(() => {
    failIfMissing(reason);
    tokenizer = tokenizerFromHuggingFace(FIXTURES.qwen3Directory);
    endTokens = [...tokenizer.endOfGenerationIds];
    control = [];
    for (let id = 0; id < tokenizer.vocabSize; id++) if (tokenizer.isSpecial(id) && !tokenizer.isEndOfGeneration(id)) control.push(id);
    expect(control.length).toBeGreaterThan(0);
    const shortIds: number[] = [...endTokens];
    const closingIds: number[] = [...endTokens];
    for (let id = 0; id < tokenizer.vocabSize; id++) {
      const bytes = tokenizer.tokenBytes(id);
      if (bytes.length > 2 || tokenizer.isSpecial(id)) continue;
      shortIds.push(id);
      if (bytes.some((byte) => byte === 0x22 || byte === 0x7d || byte === 0x5d)) closingIds.push(id);
    }
    short = maskOf(shortIds);
    closing = maskOf(closingIds);
  });

  /** Checks that `token`, outside the mask, is refused, and that refusing it changes nothing. */
  function expectRefusal(constraint: TokenConstraint, token: number): void {
    const before = constraint.allowed();
    const complete = constraint.complete;
    expect(() => constraint.accept(token), `token ${token} ${JSON.stringify(tokenizer.decode([token]))}`).toThrow(ConstraintViolationError);
    expect(constraint.allowed()).toBe(before);
    expect(constraint.complete).toBe(complete);
  }

  /**
   * One generation: uniform among the allowed tokens; or, half of the time, among the allowed tokens of at most two
   * bytes and the end-of-generation tokens, and a fifth of the time among those of them with a closing byte (so that
   * unbounded strings close and outputs end).
   */
  function generate(compiled: CompiledConstraint, seed: number): Generation {
    const random = seededRandom(seed);
    const constraint = compiled.start();
    const tokens: number[] = [];
    const pieces: Uint8Array[] = [];
    const prefixes: Uint8Array[] = [];
    for (let step = 0; step < MAX_TOKENS; step++) {
      if (constraint.finished) return { tokens, complete: true, prefixes };
      const mask = constraint.allowed();
      const count = countOf(mask);
      if (count === 0) expect.fail(`empty mask after ${JSON.stringify(tokenizer.decode(tokens))}`);
      for (let id = tokenizer.vocabSize; id < VOCABULARY_SIZE; id++) if (maskHas(mask, id)) expect.fail(`id ${id} is past the tokenizer's`);
      for (const id of endTokens) if (maskHas(mask, id) !== constraint.complete) expect.fail(`end token ${id} in the mask: ${maskHas(mask, id)}, complete: ${constraint.complete}`);
      if (step % 5 === 0) {
        // Something outside the mask: a control token, an end token before the output is complete, a random one.
        expectRefusal(constraint, control[Math.floor(random() * control.length)]!);
        if (!constraint.complete) expectRefusal(constraint, endTokens[Math.floor(random() * endTokens.length)]!);
        for (let tries = 0; tries < 20; tries++) {
          const id = Math.floor(random() * tokenizer.vocabSize);
          if (maskHas(mask, id)) continue;
          expectRefusal(constraint, id);
          break;
        }
        prefixes.push(concat(pieces));
      }
      let pool = mask;
      const mode = random();
      if (mode >= 0.5) {
        const narrowed = intersection(mask, mode >= 0.8 ? closing : short);
        if (countOf(narrowed) > 0) pool = narrowed;
      }
      const token = pickUniform(pool, random);
      constraint.accept(token); // throws if the mask let through a token the constraint refuses
      if (tokenizer.isEndOfGeneration(token)) {
        expect(constraint.finished).toBe(true);
        return { tokens, complete: true, prefixes };
      }
      tokens.push(token);
      pieces.push(tokenizer.tokenBytes(token));
    }
    return { tokens, complete: constraint.finished, prefixes };
  }

  /** For every id: in the mask exactly when the automaton takes its bytes (control tokens never, end tokens when complete). */
  function expectMaskMatchesBruteForce(compiled: CompiledConstraint, state: MatchState, label: string): void {
    const mask = compiled.masks.mask(state);
    const wrong: string[] = [];
    for (let id = 0; id < VOCABULARY_SIZE; id++) {
      let expected: boolean;
      if (id >= tokenizer.vocabSize) expected = false;
      else if (tokenizer.isEndOfGeneration(id)) expected = state.accepting;
      else if (tokenizer.isSpecial(id)) expected = false;
      else expected = compiled.automaton.stepBytes(state, tokenizer.tokenBytes(id)) !== null;
      if (maskHas(mask, id) !== expected) wrong.push(`${id} ${JSON.stringify(tokenizer.decode([id]))}: expected ${expected}`);
      if (wrong.length >= 10) break;
    }
    expect(wrong, label).toEqual([]);
  }

  for (const name of SCHEMAS) {
    it(`${name}: random generations never meet an empty mask, and complete ones validate`, () => {
      const entry = SCHEMA_CORPUS.find((candidate) => candidate.name === name)!;
      const compiled = new CompiledConstraint({ format: { type: "json_schema", schema: entry.schema } }, tokenizer, VOCABULARY_SIZE);
      const validate = ajv.compile(entry.schema as object);
      let complete = 0;
      for (const seed of SEEDS) {
        const generation = generate(compiled, seed * 1009 + name.length);
        if (!generation.complete) continue;
        complete++;
        const text = tokenizer.decode(generation.tokens);
        let document: unknown;
        expect(() => (document = JSON.parse(text)), text).not.toThrow();
        expect(validate(document), `${text}: ${JSON.stringify(validate.errors)}`).toBe(true);
        // The last prefix recorded, replayed: its mask matches a token-by-token check.
        if (seed === SEEDS[0]) {
          const prefix = generation.prefixes[generation.prefixes.length - 1]!;
          const state = compiled.automaton.stepBytes(compiled.automaton.initial, prefix)!;
          expect(state).not.toBeNull();
          expectMaskMatchesBruteForce(compiled, state, `${name} after ${JSON.stringify(new TextDecoder().decode(prefix))}`);
        }
      }
      expect(complete, "some generations complete").toBeGreaterThan(0);
    });
  }

  it("json_object: random generations are objects (with members)", () => {
    const compiled = new CompiledConstraint({ format: { type: "json_object" } }, tokenizer, VOCABULARY_SIZE);
    let members = 0;
    for (const seed of SEEDS) {
      const generation = generate(compiled, seed * 7 + 3);
      if (!generation.complete) continue;
      const document: unknown = JSON.parse(tokenizer.decode(generation.tokens));
      expect(typeof document === "object" && document !== null && !Array.isArray(document)).toBe(true);
      members += Object.keys(document as object).length;
    }
    expect(members, "some object has members").toBeGreaterThan(0);
  });

  it("masks agree with a token-by-token check in a few states of each kind", () => {
    const schema = {
      type: "object",
      properties: { name: { type: "string", maxLength: 8 }, score: { type: "number", minimum: -1, maximum: 1 }, tags: { type: "array", items: { enum: ["a", "b"] } } },
      required: ["name", "score"],
      additionalProperties: false,
    };
    const compiled = new CompiledConstraint({ format: { type: "json_schema", schema } }, tokenizer, VOCABULARY_SIZE);
    // String content takes the plain-token shortcut (a precomputed mask by length, plus a walk of the other tokens).
    for (const prefix of ["", "{", '{"name": "', '{"name": "abcdefg', '{"name": "日本語', '{"name": "a\\n', '{"name": "x", "score": ', '{"name": "x", "score": -0.', '{"name": "x", "score": 1',
      '{"name": "x", "score": 1, "tags": [', '{"name": "x", "score": 1}']) {
      const state = compiled.automaton.stepBytes(compiled.automaton.initial, new TextEncoder().encode(prefix))!;
      expect(state, prefix).not.toBeNull();
      expectMaskMatchesBruteForce(compiled, state, prefix);
    }
    // Tool calls after reasoning: the tags are plain (non-control) tokens in Qwen3's vocabulary.
    const spec: ConstraintSpec = {
      format: { type: "tool_calls", tools: [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }], choice: "auto", tags: { open: "<tool_call>", close: "</tool_call>" } },
      thinking: { close: "</think>" },
    };
    const tools = new CompiledConstraint(spec, tokenizer, VOCABULARY_SIZE);
    for (const prefix of ["", "Let me think</think>\n\n", "ok</think>\n\nSure <tool_", 'ok</think><tool_call>{"name": "get_weather", "arguments": {"city": "Os', 'ok</think><tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>']) {
      const state = tools.automaton.stepBytes(tools.automaton.initial, new TextEncoder().encode(prefix))!;
      expect(state, prefix).not.toBeNull();
      expectMaskMatchesBruteForce(tools, state, prefix);
    }
    const toolCall = tokenizer.tokenId("<tool_call>")!;
    const afterReasoning = tools.start();
    for (const id of tokenizer.encode("ok</think>\n\n")) afterReasoning.accept(id);
    expect(afterReasoning.allows(toolCall)).toBe(true);
    expect(afterReasoning.complete).toBe(true); // "auto": no answer at all is an answer
  });
});
