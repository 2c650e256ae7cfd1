// The usage page's CSV: RFC 4180 quoting, numbers as they are, and formulas kept as text.
import { describe, expect, it } from "vitest";
import { toCsv } from "./csv";

describe("toCsv", () => {
  it("writes a header and rows with CRLF lines, quoting fields with commas, quotes or line breaks", () => {
    expect(toCsv(["day", "model", "tokens"], [["2032-03-01", "service/tim-a-27b", 1200], ["2032-03-02", 'a "b", c\nd', 0.000123]])).toBe(
      'day,model,tokens\r\n2032-03-01,service/tim-a-27b,1200\r\n2032-03-02,"a ""b"", c\nd",0.000123\r\n',
    );
  });

  it("keeps text a spreadsheet would run as a formula as text, but not negative numbers", () => {
    expect(toCsv(["name"], [["=HYPERLINK(\"x\")"], ["+1"], ["-2"], ["@SUM(A1)"], ["\tx"], ["plain = fine"], [-3]])).toBe(
      'name\r\n"\'=HYPERLINK(""x"")"\r\n\'+1\r\n\'-2\r\n\'@SUM(A1)\r\n\'\tx\r\nplain = fine\r\n-3\r\n',
    );
  });

  it("writes an empty cell for a number that is not finite", () => {
    expect(toCsv(["a", "b"], [[Number.NaN, Number.POSITIVE_INFINITY]])).toBe("a,b\r\n,\r\n");
  });
});
