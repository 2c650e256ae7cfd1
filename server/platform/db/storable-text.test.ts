// The database layer's last guard against text it cannot store, on PGlite and on the real PostgreSQL: U+0000 and lone
// surrogates in any statement parameter (plain, prepared, in a transaction; raw, or escaped in JSON for jsonb) are an
// UnstorableTextError naming the parameter, which the HTTP surfaces answer with a 400; and the checks themselves.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { ProtocolError } from "../../protocol/internal.js";
import { type Database, UnstorableTextError } from "../contract.js";
import { read } from "../route-helpers.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { hasUnstorableEscape, unstorableCharacter, unstorableInJson } from "./storable-text.js";

describe("unstorableCharacter", () => {
  it("finds U+0000 and lone surrogates, and passes any other text, surrogate pairs included", () => {
    for (const text of ["", "plain", "tab\tnewline\n\u0001\u007f", "é漢字", "emoji \ud83d\ude00 pair", "\uffff\ufffd"]) expect(unstorableCharacter(text), JSON.stringify(text)).toBeUndefined();
    expect(unstorableCharacter("ab\u0000")).toEqual({ index: 2, what: "U+0000 (NUL)" });
    expect(unstorableCharacter("a\ud800b")).toEqual({ index: 1, what: "a lone surrogate U+D800" });
    expect(unstorableCharacter("\ud83d\ude00\udc00")).toEqual({ index: 2, what: "a lone surrogate U+DC00" });
    // A high surrogate at the end, and two highs in a row.
    expect(unstorableCharacter("a\udbff")?.index).toBe(1);
    expect(unstorableCharacter("\ud800\ud83d\ude00")?.index).toBe(0);
  });
});

describe("hasUnstorableEscape", () => {
  it("reads JSON text's escapes as jsonb does, escaped backslashes included", () => {
    for (const value of ["a\u0000b", "a\ud800", "\udc00z", "\ud800\ud800\udc00", { ["k\u0000"]: 1 }]) expect(hasUnstorableEscape(JSON.stringify(value)), JSON.stringify(value)).toBe(true);
    // Literal backslashes and pairs are text: "\\u0000" is six characters, "\ud83d\ude00" one emoji.
    for (const value of ["\\u0000", "\\\\u0000", "\\ud800", "\ud83d\ude00", "line\nquote\"", { a: ["\\u0000x"] }]) expect(hasUnstorableEscape(JSON.stringify(value)), JSON.stringify(value)).toBe(false);
    // The escapes themselves, as a client might write them.
    expect(hasUnstorableEscape('"\\ud83d\\ude00"')).toBe(false);
    expect(hasUnstorableEscape('"\\ud83d\\n"')).toBe(true);
  });
});

describe("unstorableInJson", () => {
  it("names the path of the first bad string, or the object whose key is bad", () => {
    expect(unstorableInJson({ a: [{ b: "fine" }, { b: "x\u0000" }] }, "input.schema")).toEqual({ field: "input.schema.a[1].b", found: { index: 1, what: "U+0000 (NUL)" }, inKey: false });
    expect(unstorableInJson({ properties: { ["\ud800"]: {} } }, "input.schema")).toMatchObject({ field: "input.schema.properties", inKey: true });
    expect(unstorableInJson({ a: 1, b: [true, null, "ok"] }, "x")).toBeUndefined();
  });
});

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`statement parameters the database cannot store on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let database: Database;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      database = test.database;
      await database.query("CREATE TABLE storable_probe (name text, detail jsonb)");
    }, 60_000);
    afterAll(async () => test?.dispose());

    /** What `work` threw. */
    const thrown = (work: () => Promise<unknown>) => work().then(() => undefined, (error: unknown) => error);
    const prepared = { name: "storable_probe_insert", text: "INSERT INTO storable_probe (name, detail) VALUES ($1, $2::jsonb)" };

    it("refuses U+0000 and lone surrogates in text parameters, plain, prepared and in a transaction, naming the parameter", async () => {
      for (const bad of ["a\u0000b", "a\ud800b", "\udc00"]) {
        const plain = await thrown(() => database.query("SELECT $1::int AS n, $2::text AS t", [1, bad]));
        expect(plain, JSON.stringify(bad)).toBeInstanceOf(UnstorableTextError);
        expect((plain as UnstorableTextError).parameter).toBe(2);
        expect((plain as Error).message).toMatch(/^statement parameter \$2 holds /);
        const viaPrepared = await thrown(() => database.queryPrepared(prepared, [bad, "{}"]));
        expect((viaPrepared as UnstorableTextError).parameter, JSON.stringify(bad)).toBe(1);
        const inTransaction = await thrown(() => database.transaction((tx) => tx.query("INSERT INTO storable_probe (name) VALUES ($1)", [bad])));
        expect((inTransaction as UnstorableTextError).parameter, JSON.stringify(bad)).toBe(1);
        // Inside an array parameter too.
        expect(await thrown(() => database.query("SELECT $1::text[] AS a", [["fine", bad]]))).toBeInstanceOf(UnstorableTextError);
      }
      // The database is usable after each, and nothing was written.
      expect(await database.query("SELECT count(*)::int AS n FROM storable_probe")).toEqual([{ n: 0 }]);
    });

    it("turns jsonb's refusal of escaped U+0000 and lone surrogates into an UnstorableTextError naming the parameter", async () => {
      for (const bad of ["a\u0000b", "a\ud800b", "\udc00"]) {
        for (const json of [JSON.stringify({ text: bad }), JSON.stringify({ [bad]: 1 })]) {
          const plain = await thrown(() => database.query("INSERT INTO storable_probe (name, detail) VALUES ($1, $2::jsonb)", ["fine", json]));
          expect(plain, json).toBeInstanceOf(UnstorableTextError);
          expect((plain as UnstorableTextError).parameter, json).toBe(2);
          const viaPrepared = await thrown(() => database.queryPrepared(prepared, ["fine", json]));
          expect((viaPrepared as UnstorableTextError).parameter, json).toBe(2);
          const inTransaction = await thrown(() => database.transaction((tx) => tx.query("INSERT INTO storable_probe (detail) VALUES ($1::jsonb)", [json])));
          expect((inTransaction as UnstorableTextError).parameter, json).toBe(1);
        }
      }
      // A literal backslash-u is text; a bad number is the statement's own error, not text the database cannot store.
      await database.query("INSERT INTO storable_probe (name, detail) VALUES ($1, $2::jsonb)", ["\\u0000", JSON.stringify({ text: "\\u0000 \\ud800" })]);
      const number = await thrown(() => database.query("SELECT $1::int AS n", ["twelve"]));
      expect(number).toBeInstanceOf(Error);
      expect(number).not.toBeInstanceOf(UnstorableTextError);
      expect(await database.query("SELECT name, detail FROM storable_probe")).toEqual([{ name: "\\u0000", detail: { text: "\\u0000 \\ud800" } }]);
    });

    it("is a 400 where an HTTP surface reads the database (read())", async () => {
      const refused = await thrown(() => read("the probe could not be written", () => database.query("INSERT INTO storable_probe (name) VALUES ($1)", ["a\u0000b"])));
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).status).toBe(400);
    });
  });
}
