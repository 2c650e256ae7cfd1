import { describe, expect, it } from "vitest";
import { barChart, escapeXml, formatValue, lineChart, niceTicks } from "./svg-chart.js";
import { checkWellFormed } from "./testing/well-formed-xml.js";

const count = (svg: string, pattern: RegExp) => svg.match(pattern)?.length ?? 0;

describe("niceTicks", () => {
  it("covers the range with round steps", () => {
    expect(niceTicks(0, 97)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0, 0.9)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(-3, 7)).toEqual([-4, -2, 0, 2, 4, 6, 8]);
    expect(niceTicks(0, 12)).toEqual([0, 2.5, 5, 7.5, 10, 12.5]);
    for (const [low, high] of [[0, 0.0037], [13, 4242], [-660, -12], [1, 64], [0.3, 0.31]]) {
      const ticks = niceTicks(low, high);
      expect(ticks[0]).toBeLessThanOrEqual(low);
      expect(ticks.at(-1)).toBeGreaterThanOrEqual(high);
      expect(ticks.length).toBeGreaterThanOrEqual(3);
      expect(ticks.length).toBeLessThanOrEqual(11);
    }
  });

  it("widens a range of one value", () => {
    expect(niceTicks(0, 0)).toEqual([-1, -0.5, 0, 0.5, 1]);
    const ticks = niceTicks(5, 5);
    expect(ticks[0]).toBeLessThan(5);
    expect(ticks.at(-1)).toBeGreaterThan(5);
  });
});

describe("barChart", () => {
  const spec = {
    title: `Decode <speed> & "loom"`,
    subtitle: "AMD EPYC, 2 threads",
    yLabel: "tokens/s",
    xLabel: "model",
    categories: ["smollm2-135m F32", "smollm2-135m Q8_0", "qwen3-0.6b Q8_0"],
    series: [
      { name: "loom", values: [{ y: 55.1, min: 50.2, max: 58 }, { y: 128.6, min: 120, max: 131 }, { y: 36.5 }] },
      { name: "llama.cpp <x64>", values: [34.6, undefined, { y: 28.3, min: 27, max: 29.9 }] },
    ],
  };

  it("is a standalone, accessible SVG with its text escaped", () => {
    const svg = barChart(spec);
    const names = checkWellFormed(svg);
    expect(names[0]).toBe("svg");
    expect(names[1]).toBe("title");
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" [^>]*role="img" aria-label="Decode &lt;speed&gt; &amp; &quot;loom&quot;\. AMD EPYC, 2 threads"/);
    expect(svg).toContain("<title>Decode &lt;speed&gt; &amp; &quot;loom&quot;. AMD EPYC, 2 threads</title>");
    expect(svg).toContain(">llama.cpp &lt;x64&gt;</text>");
    expect(svg).toContain("<desc>Bar chart of tokens/s by model. loom: smollm2-135m F32 55.1 (50.2 to 58); smollm2-135m Q8_0 129 (120 to 131); qwen3-0.6b Q8_0 36.5.");
    expect(svg).toContain("qwen3-0.6b Q8_0 28.3 (27 to 29.9).</desc>");
  });

  it("draws one bar per value, an error bar per spread, and y ticks over every value and spread", () => {
    const svg = barChart(spec);
    expect(count(svg, /<rect class="bar"/g)).toBe(5);
    expect(count(svg, /class="error-bar"/g)).toBe(3);
    const ticks = [...svg.matchAll(/<text [^>]*text-anchor="end" font-size="12" fill="#555555">([^<]+)<\/text>/g)].map((m) => Number(m[1]));
    expect(ticks[0]).toBe(0);
    expect(Math.max(...ticks)).toBeGreaterThanOrEqual(131);
  });

  it("draws a single value, a zero and negatives from the zero line", () => {
    const single = barChart({ title: "one", yLabel: "y", categories: ["a"], series: [{ name: "s", values: [7] }] });
    checkWellFormed(single);
    expect(count(single, /<rect class="bar"/g)).toBe(1);

    const signed = barChart({ title: "signed", yLabel: "change %", categories: ["a", "b", "c"], series: [{ name: "s", values: [-12, 0, 30] }] });
    checkWellFormed(signed);
    const bars = [...signed.matchAll(/<rect class="bar" x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)"/g)].map((m) => ({ y: Number(m[1]), height: Number(m[2]) }));
    expect(bars).toHaveLength(3);
    expect(bars[1].height).toBe(0);
    expect(bars[0].y).toBe(bars[1].y); // the negative bar hangs from the zero line
    expect(bars[2].y + bars[2].height).toBe(bars[1].y); // the positive one stands on it
    expect(signed).toMatch(/>-\d+<\/text>/); // a negative tick

    const zeros = barChart({ title: "zeros", yLabel: "y", categories: ["a"], series: [{ name: "s", values: [0] }] });
    checkWellFormed(zeros);
  });

  it("refuses series that do not match the categories", () => {
    expect(() => barChart({ title: "t", yLabel: "y", categories: ["a", "b"], series: [{ name: "s", values: [1] }] })).toThrow(/1 values for 2 categories/);
  });
});

describe("lineChart", () => {
  it("draws one marker per point and one line per series on a log2 axis", () => {
    const svg = lineChart({
      title: "Serving throughput", yLabel: "output tokens/s", xLabel: "concurrent clients", xScale: "log2",
      series: [
        { name: "loom", points: [{ x: 1, y: 90 }, { x: 4, y: 210 }, { x: 16, y: 380 }, { x: 64, y: 420, min: 400, max: 431 }] },
        { name: "llama.cpp", points: [{ x: 1, y: 60 }, { x: 4, y: 150 }, { x: 16, y: 200 }, { x: 64, y: 180 }] },
      ],
    });
    const names = checkWellFormed(svg);
    expect(names.filter((n) => n === "polyline")).toHaveLength(2);
    expect(count(svg, /class="point"/g)).toBe(8);
    expect(count(svg, /class="error-bar"/g)).toBe(1);
    // x ticks at the powers of two from 1 to 64
    for (const tick of ["1", "2", "4", "8", "16", "32", "64"]) expect(svg).toContain(`font-size="12">${tick}</text>`);
  });

  it("takes categorical x, a single point, negative values and a dashed reference line", () => {
    const categorical = lineChart({ title: "t", yLabel: "y", series: [{ name: "a", points: [{ x: "one", y: -2 }, { x: "two", y: 3 }] }, { name: "ideal", dashed: true, points: [{ x: "one", y: 1 }, { x: "two", y: 2 }] }] });
    checkWellFormed(categorical);
    expect(count(categorical, /class="point"/g)).toBe(4);
    expect(categorical).toContain('stroke-dasharray="6 4"');
    expect(categorical).toMatch(/>-\d+(\.\d+)?<\/text>/);

    const single = lineChart({ title: "one", yLabel: "y", xLabel: "workers", series: [{ name: "a", points: [{ x: 1, y: 0 }] }] });
    checkWellFormed(single);
    expect(count(single, /class="point"/g)).toBe(1);
    expect(single).not.toContain("<polyline");
  });

  it("refuses a log2 axis at zero", () => {
    expect(() => lineChart({ title: "t", yLabel: "y", xScale: "log2", series: [{ name: "a", points: [{ x: 0, y: 1 }] }] })).toThrow(/x > 0/);
  });
});

describe("checkWellFormed", () => {
  it("finds the faults it looks for", () => {
    expect(checkWellFormed('<svg a="1"><g><text>x &amp; y</text></g><line/></svg>')).toEqual(["svg", "g", "text", "line"]);
    expect(() => checkWellFormed("<svg><g></svg>")).toThrow(/closes <g>/);
    expect(() => checkWellFormed("<svg><text>a < b</text></svg>")).toThrow(/raw </);
    expect(() => checkWellFormed("<svg><text>a & b</text></svg>")).toThrow(/unescaped &/);
    expect(() => checkWellFormed('<svg a="x & y"></svg>')).toThrow(/unescaped &/);
    expect(() => checkWellFormed("<svg><g>")).toThrow(/unclosed/);
  });
});

describe("text", () => {
  it("escapes markup and formats values", () => {
    expect(escapeXml(`a<b & "c" 'd'>`)).toBe("a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
    expect(formatValue(128.64)).toBe("129");
    expect(formatValue(36.54)).toBe("36.5");
    expect(formatValue(0.01234)).toBe("0.0123");
    expect(formatValue(4242.4)).toBe("4242");
  });
});
