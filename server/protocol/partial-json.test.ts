// Partial JSON against the reader it must agree with: the Anthropic SDK's, which turns a streamed tool_use block's
// input_json_delta text into its `input`.
import { partialParse } from "@anthropic-ai/sdk/_vendor/partial-json-parser/parser";
import { describe, expect, it } from "vitest";
import { closePartialJson, parsePartialJson } from "./partial-json.js";

const DOCUMENTS = [
  '{"city": "Paris", "unit": "c"}',
  '{\r\n\t\t"city":" wors万分雌",\n        "unit":"f"}',
  '{"s": "a}\\"]{\\\\", "n": -12.5e+3, "ok": true, "no": false, "none": null}',
  '{"x": [1, 2, [3, {"y": "z"}]], "e": {}, "a": [], "u": "\\u00e9\\n"}',
  '{ "deep" : { "er" : [ { } , [ ] , "s" , 0 ] } }',
];

describe("parsePartialJson", () => {
  it("reads every prefix of a JSON object as the Anthropic SDK reads it", () => {
    for (const document of DOCUMENTS) {
      for (let end = 1; end <= document.length; end++) {
        const prefix = document.slice(0, end);
        expect(parsePartialJson(prefix), JSON.stringify(prefix)).toEqual(partialParse(prefix));
      }
    }
  });

  it("keeps complete members, drops a cut one, and closes what is open", () => {
    expect(closePartialJson('{"a": 1, "b": "x')).toBe('{"a": 1}');
    expect(closePartialJson('{"a": [1, 2')).toBe('{"a": [1]}');
    expect(closePartialJson('{"a": tr')).toBe("{}");
    expect(closePartialJson('{"a": true')).toBe('{"a": true}');
    expect(parsePartialJson('{"a": {"b": "c"}, "d')).toEqual({ a: { b: "c" } });
  });

  it("is undefined before anything complete, and for what is not JSON", () => {
    for (const text of ["", "  ", '"abc', "12", "nul", "}", "{]", "<tool_call>", '{"a": oops', '{"a": 1x, "b": 2}', '{"a": nulled}']) expect(parsePartialJson(text), text).toBeUndefined();
  });
});
