// checkConstraint's memo of specs it has compiled: a repeated schema is compiled once, the memo keeps at most 256
// specs (the oldest goes first), and a spec over 64 KiB of JSON is not kept (it is compiled each time). Compilations
// are counted by wrapping the grammar automaton's constructor.
import { describe, expect, it, vi } from "vitest";
import { checkConstraint } from "./constraint.js";
import type { InternalRequest } from "./internal.js";

const compilations = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../engine/grammar/automaton.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../engine/grammar/automaton.js")>();
  class CountedAutomaton extends original.GrammarAutomaton {
    constructor(...args: ConstructorParameters<typeof original.GrammarAutomaton>) {
      super(...args);
      compilations.count++;
    }
  }
  return { ...original, GrammarAutomaton: CountedAutomaton };
});

const base: InternalRequest = {
  format: "openai", model: "m", messages: [{ role: "user", content: "hi" }], sampling: {}, stop: [], stream: false,
  includeUsage: false, thinking: { enabled: false }, autoCompaction: true,
};
const params = { tool: (index: number) => `tools[${index}].function.parameters`, responseFormat: "response_format.json_schema.schema" };

/** A request whose schema is told apart by `name` (a property name), optionally padded with a long description. */
function withSchema(name: string, description = ""): InternalRequest {
  const schema = { type: "object", description, properties: { [name]: { type: "integer" } }, required: [name] };
  return { ...base, responseFormat: { type: "json_schema", schema } };
}

/** How many compilations checking `request` took. */
function compilationsOf(request: InternalRequest): number {
  const before = compilations.count;
  checkConstraint(request, params);
  return compilations.count - before;
}

describe("checkConstraint's memo", () => {
  it("compiles a repeated schema once, and another schema again", () => {
    expect(compilationsOf(withSchema("repeated"))).toBe(1);
    expect(compilationsOf(withSchema("repeated"))).toBe(0);
    expect(compilationsOf({ ...withSchema("repeated"), thinking: { enabled: true } })).toBe(1); // another spec: reasoning first
    expect(compilationsOf(withSchema("other"))).toBe(1);
    expect(compilationsOf(withSchema("repeated"))).toBe(0);
  });

  it("never keeps a schema that failed, so it fails every time", () => {
    const bad: InternalRequest = { ...base, responseFormat: { type: "json_schema", schema: { type: "array", uniqueItems: true } } };
    expect(() => checkConstraint(bad, params)).toThrow(/uniqueItems/);
    expect(() => checkConstraint(bad, params)).toThrow(/uniqueItems/);
  });

  it("keeps at most 256 specs, dropping the oldest first", () => {
    expect(compilationsOf(withSchema("first"))).toBe(1);
    const later = Array.from({ length: 256 }, (_, i) => withSchema(`later${i}`));
    for (const request of later) expect(compilationsOf(request)).toBe(1);
    // 257 specs were checked since "first": it was dropped, the latest 256 are kept.
    expect(compilationsOf(later[255]!)).toBe(0);
    expect(compilationsOf(later[1]!)).toBe(0);
    expect(compilationsOf(withSchema("first"))).toBe(1);
    // Checking "first" again pushed out the oldest of the others.
    expect(compilationsOf(later[0]!)).toBe(1);
  });

  it("does not keep a spec over 64 KiB of JSON", () => {
    const large = withSchema("large", "x".repeat(64 * 1024));
    expect(compilationsOf(large)).toBe(1);
    expect(compilationsOf(large)).toBe(1);
    const small = withSchema("large", "x".repeat(60 * 1024));
    expect(compilationsOf(small)).toBe(1);
    expect(compilationsOf(small)).toBe(0);
  });
});
