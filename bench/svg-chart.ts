// Charts for the bench scripts' figures as standalone SVG text, without dependencies: a grouped bar chart and a line
// chart, each with a title, a y axis of round ticks and its label, a legend, optional min-max error bars, a
// colour-blind-safe palette (Okabe-Ito; lines also differ by marker shape) and an accessible name and description.
// Everything here is a pure function from figures to text, except writeChart.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** One measured value, with the smallest and largest of its repeats when there were several (an error bar). */
export interface ChartValue {
  y: number;
  min?: number;
  max?: number;
  /** Said with the value in its tooltip and in the chart's description (which build it was, say). */
  note?: string;
}

/** What every chart has. */
export interface ChartFrame {
  title: string;
  /** A smaller line under the title: the machine and date the figures come from, say. */
  subtitle?: string;
  yLabel: string;
  xLabel?: string;
  /** Pixels; default 720 x 420. */
  width?: number;
  height?: number;
}

/** Bars side by side in each category, one per series. */
export interface BarChartSpec extends ChartFrame {
  categories: readonly string[];
  /** Each series' values in category order; undefined leaves that bar out (a contender that failed). */
  series: ReadonlyArray<{ name: string; values: ReadonlyArray<ChartValue | number | undefined> }>;
}

/** One point of a line: x is a number (linear or log2 axis) or a category name. */
export interface LinePoint extends ChartValue {
  x: number | string;
}

/** One line per series. */
export interface LineChartSpec extends ChartFrame {
  series: ReadonlyArray<{ name: string; points: readonly LinePoint[]; /** Drawn dashed: a reference, not a measurement. */ dashed?: boolean }>;
  /** Default: "category" when any x is a string, else "linear". log2 suits doublings (concurrency 1, 4, 16, 64). */
  xScale?: "linear" | "log2" | "category";
}

/** Okabe-Ito colours readable on white (their yellow is left out), in the order series take them. */
export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"] as const;

const MARKERS = ["circle", "square", "triangle", "diamond"] as const;
const FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif";
const TEXT = "#1a1a1a";
const MUTED = "#555555";
const GRID = "#dddddd";

/** `text` safe in XML character data and in double- or single-quoted attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!);
}

/**
 * Round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) from at or below `low` to at or above `high`,
 * about `target` intervals. A range of one value is widened around it.
 */
export function niceTicks(low: number, high: number, target = 5): number[] {
  if (!Number.isFinite(low) || !Number.isFinite(high)) throw new RangeError(`ticks need finite bounds, got ${low} and ${high}`);
  if (low > high) [low, high] = [high, low];
  if (low === high) {
    const pad = low === 0 ? 1 : Math.abs(low) / 2;
    low -= pad;
    high += pad;
  }
  const raw = (high - low) / target;
  const exponent = Math.floor(Math.log10(raw));
  const fraction = raw / 10 ** exponent;
  const mantissa = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
  const step = mantissa * 10 ** exponent;
  const decimals = Math.max(0, -exponent + (mantissa === 2.5 ? 1 : 0));
  const first = Math.floor(low / step + 1e-9);
  const last = Math.ceil(high / step - 1e-9);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(Number((i * step).toFixed(decimals)));
  return ticks;
}

/** A tick's label: as many decimals as its step needs, and no more. */
function tickLabels(ticks: readonly number[]): string[] {
  const decimals = Math.max(0, ...ticks.map((t) => (String(t).split(".")[1] ?? "").length));
  return ticks.map((t) => t.toFixed(decimals));
}

/** A figure for a label or the description: three significant digits, whole numbers from 1000 up. */
export function formatValue(value: number): string {
  if (Math.abs(value) >= 1000) return value.toFixed(0);
  return String(Number(value.toPrecision(3)));
}

/** Width in pixels of `text` at `size`, estimated (no font metrics here): wide enough for most sans-serif faces. */
function textWidth(text: string, size: number): number {
  return text.length * size * 0.6;
}

/** `content` in lines of at most `maxWidth` pixels at `size`, broken at spaces (a longer word stays whole). */
export function wrap(content: string, maxWidth: number, size: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of content.split(/\s+/).filter((w) => w !== "")) {
    const longer = line === "" ? word : `${line} ${word}`;
    if (line !== "" && textWidth(longer, size) > maxWidth) {
      lines.push(line);
      line = word;
    } else line = longer;
  }
  if (line !== "") lines.push(line);
  return lines;
}

const px = (value: number) => String(Math.round(value * 10) / 10);

function attrs(attributes: Record<string, string | number | undefined>): string {
  return Object.entries(attributes).filter(([, v]) => v !== undefined).map(([k, v]) => ` ${k}="${escapeXml(typeof v === "number" ? px(v) : v!)}"`).join("");
}

function text(x: number, y: number, content: string, options: Record<string, string | number | undefined> = {}): string {
  return `<text${attrs({ x, y, ...options })}>${escapeXml(content)}</text>`;
}

function normalise(value: ChartValue | number | undefined): ChartValue | undefined {
  if (value === undefined) return undefined;
  const v = typeof value === "number" ? { y: value } : value;
  return Number.isFinite(v.y) ? v : undefined;
}

function span(value: ChartValue): [number, number] {
  const ends = [value.y, value.min, value.max].filter((v): v is number => v !== undefined && Number.isFinite(v));
  return [Math.min(...ends), Math.max(...ends)];
}

/** The parts both kinds of chart share: frame, title, legend, y axis; the plot area is what is left. */
interface Layout {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
  y: (value: number) => number;
  parts: string[];
}

type LegendKey = { name: string; colour: string; kind: "bar" | "line"; marker?: (typeof MARKERS)[number]; dashed?: boolean };

function frame(spec: ChartFrame, legend: readonly LegendKey[], values: readonly ChartValue[], xLabelHeight: number): Layout {
  const width = spec.width ?? 720;
  const height = spec.height ?? 420;
  const parts: string[] = [];
  parts.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  let y = 4;
  for (const line of wrap(spec.title, width - 32, 16)) {
    y += 20;
    parts.push(text(width / 2, y, line, { "text-anchor": "middle", "font-size": 16, "font-weight": "bold" }));
  }
  for (const line of spec.subtitle ? wrap(spec.subtitle, width - 32, 12) : []) {
    y += 16;
    parts.push(text(width / 2, y, line, { "text-anchor": "middle", "font-size": 12, fill: MUTED }));
  }
  // The legend: keys left to right, a new row when the next would not fit.
  y += 24;
  let x = 16;
  for (const key of legend) {
    const keyWidth = 28 + textWidth(key.name, 13);
    if (x > 16 && x + keyWidth > width - 16) {
      x = 16;
      y += 20;
    }
    parts.push(legendSwatch(key, x, y - 4));
    parts.push(text(x + 28, y, key.name, { "font-size": 13 }));
    x += keyWidth + 18;
  }
  // The y range: every value and spread, and zero (bars and throughputs are read from zero).
  let low = 0;
  let high = 0;
  for (const value of values) {
    const [a, b] = span(value);
    low = Math.min(low, a);
    high = Math.max(high, b);
  }
  const ticks = niceTicks(low, high);
  const labels = tickLabels(ticks);
  const left = 40 + Math.max(...labels.map((label) => textWidth(label, 12)));
  const top = y + 28;
  const bottom = height - 12 - xLabelHeight - (spec.xLabel ? 20 : 0);
  const right = width - 20;
  const yMin = ticks[0];
  const yMax = ticks[ticks.length - 1];
  const scale = (value: number) => bottom - ((value - yMin) / (yMax - yMin)) * (bottom - top);
  ticks.forEach((tick, i) => {
    parts.push(`<line${attrs({ x1: left, x2: right, y1: scale(tick), y2: scale(tick), stroke: tick === 0 ? "#888888" : GRID, "stroke-width": 1 })}/>`);
    parts.push(text(left - 6, scale(tick) + 4, labels[i], { "text-anchor": "end", "font-size": 12, fill: MUTED }));
  });
  const middle = (top + bottom) / 2;
  parts.push(text(16, middle, spec.yLabel, { "text-anchor": "middle", "font-size": 13, transform: `rotate(-90 16 ${px(middle)})` }));
  if (spec.xLabel) parts.push(text((left + right) / 2, height - 12, spec.xLabel, { "text-anchor": "middle", "font-size": 13 }));
  parts.push(`<line${attrs({ x1: left, x2: left, y1: top, y2: bottom, stroke: "#888888", "stroke-width": 1 })}/>`);
  return { width, height, left, right, top, bottom, y: scale, parts };
}

function legendSwatch(key: LegendKey, x: number, y: number): string {
  if (key.kind === "bar") return `<rect${attrs({ x, y: y - 6, width: 20, height: 12, fill: key.colour })}/>`;
  return `<line${attrs({ x1: x, x2: x + 20, y1: y, y2: y, stroke: key.colour, "stroke-width": 2, "stroke-dasharray": key.dashed ? "5 3" : undefined })}/>`
    + (key.marker ? marker(key.marker, x + 10, y, key.colour, "legend-marker") : "");
}

/** A point's marker; `tooltip` becomes its <title> (shown on hover, read by screen readers). */
function marker(shape: (typeof MARKERS)[number], x: number, y: number, colour: string, className: string, tooltip?: string): string {
  const r = 4.5;
  const [element, geometry] = shape === "circle" ? ["circle", { cx: x, cy: y, r }]
    : shape === "square" ? ["rect", { x: x - r, y: y - r, width: 2 * r, height: 2 * r }]
    : ["path", { d: shape === "triangle"
      ? `M${px(x)} ${px(y - r - 1)}L${px(x + r + 1)} ${px(y + r)}L${px(x - r - 1)} ${px(y + r)}Z`
      : `M${px(x)} ${px(y - r - 1)}L${px(x + r + 1)} ${px(y)}L${px(x)} ${px(y + r + 1)}L${px(x - r - 1)} ${px(y)}Z` }] as const;
  const open = `<${element}${attrs({ class: className, ...geometry, fill: colour })}`;
  return tooltip === undefined ? `${open}/>` : `${open}><title>${escapeXml(tooltip)}</title></${element}>`;
}

/** A min-max whisker at x, caps `cap` wide; nothing when the value has no spread. */
function errorBar(value: ChartValue, x: number, cap: number, y: (v: number) => number): string {
  if (value.min === undefined || value.max === undefined || value.min === value.max) return "";
  const [top, bottom] = [y(value.max), y(value.min)];
  const line = (x1: number, x2: number, y1: number, y2: number) => `<line${attrs({ x1, x2, y1, y2 })}/>`;
  return `<g class="error-bar" stroke="${TEXT}" stroke-width="1.2">${line(x, x, top, bottom)}${line(x - cap / 2, x + cap / 2, top, top)}${line(x - cap / 2, x + cap / 2, bottom, bottom)}</g>`;
}

function describeValue(value: ChartValue | undefined): string {
  if (value === undefined) return "no value";
  const spread = value.min !== undefined && value.max !== undefined && value.min !== value.max ? ` (${formatValue(value.min)} to ${formatValue(value.max)})` : "";
  return `${formatValue(value.y)}${spread}${value.note ? ` [${value.note}]` : ""}`;
}

function svgDocument(layout: Layout, spec: ChartFrame, description: string, body: string[]): string {
  const label = spec.subtitle ? `${spec.title}. ${spec.subtitle}` : spec.title;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg"${attrs({ width: layout.width, height: layout.height, viewBox: `0 0 ${layout.width} ${layout.height}`, role: "img", "aria-label": label })}>`,
    `<title>${escapeXml(label)}</title>`,
    `<desc>${escapeXml(description)}</desc>`,
    `<g font-family="${escapeXml(FONT)}" fill="${TEXT}">`,
    ...layout.parts,
    ...body,
    "</g>",
    "</svg>",
    "",
  ].join("\n");
}

/**
 * A grouped bar chart: per category one bar per series, from zero (down for negative values), each with its min-max
 * error bar and, where it fits, its value above it.
 * @returns the SVG document's text.
 */
export function barChart(spec: BarChartSpec): string {
  if (spec.categories.length === 0 || spec.series.length === 0) throw new RangeError("a bar chart needs at least one category and one series");
  for (const series of spec.series) {
    if (series.values.length !== spec.categories.length) throw new RangeError(`series ${series.name} has ${series.values.length} values for ${spec.categories.length} categories`);
  }
  const values = spec.series.map((series) => series.values.map(normalise));
  const keys: LegendKey[] = spec.series.map((series, i) => ({ name: series.name, colour: PALETTE[i % PALETTE.length], kind: "bar" }));
  const width = spec.width ?? 720;
  // Category labels turn when they are wider than their band.
  const band = (width - 120) / spec.categories.length;
  const widest = Math.max(...spec.categories.map((c) => textWidth(c, 12)));
  const turn = widest > band - 8;
  const xLabelHeight = turn ? Math.min(widest * 0.6 + 16, (spec.height ?? 420) * 0.35) : 22;
  const layout = frame(spec, keys, values.flat().filter((v): v is ChartValue => v !== undefined), xLabelHeight);
  const { left, right, bottom, y } = layout;
  const step = (right - left) / spec.categories.length;
  const barWidth = (step * 0.8) / spec.series.length;
  const zero = y(0);
  const body: string[] = [];
  spec.categories.forEach((category, c) => {
    const centre = left + step * (c + 0.5);
    const labelY = bottom + 18;
    body.push(turn
      ? text(centre, labelY, category, { "text-anchor": "end", "font-size": 12, transform: `rotate(-35 ${px(centre)} ${px(labelY)})` })
      : text(centre, labelY, category, { "text-anchor": "middle", "font-size": 12 }));
    values.forEach((seriesValues, s) => {
      const value = seriesValues[c];
      if (value === undefined) return;
      const x = left + step * (c + 0.1) + barWidth * s;
      const top = y(value.y);
      body.push(`<rect${attrs({ class: "bar", x: x + 0.5, y: Math.min(top, zero), width: Math.max(1, barWidth - 1), height: Math.abs(zero - top), fill: keys[s].colour })}><title>${escapeXml(`${spec.series[s].name}, ${category}: ${describeValue(value)}`)}</title></rect>`);
      body.push(errorBar(value, x + barWidth / 2, Math.min(10, barWidth / 2), y));
      const label = formatValue(value.y);
      if (textWidth(label, 11) <= barWidth + 2) {
        const above = value.y >= 0 ? y(Math.max(value.y, value.max ?? value.y)) - 4 : y(Math.min(value.y, value.min ?? value.y)) + 12;
        body.push(text(x + barWidth / 2, above, label, { "text-anchor": "middle", "font-size": 11 }));
      }
    });
  });
  const description = `Bar chart of ${spec.yLabel} by ${spec.xLabel ?? "category"}. `
    + spec.series.map((series, s) => `${series.name}: ${spec.categories.map((category, c) => `${category} ${describeValue(values[s][c])}`).join("; ")}.`).join(" ");
  return svgDocument(layout, spec, description, body);
}

/**
 * A line chart: one line per series through its points (in x order), each point a marker of the series' shape with
 * its min-max error bar. Numeric x is placed on a linear or log2 axis, string x on evenly spaced categories.
 * @returns the SVG document's text.
 */
export function lineChart(spec: LineChartSpec): string {
  const points = spec.series.flatMap((series) => series.points);
  if (points.length === 0) throw new RangeError("a line chart needs at least one point");
  const scaleKind = spec.xScale ?? (points.some((p) => typeof p.x === "string") ? "category" : "linear");
  if (scaleKind !== "category" && points.some((p) => typeof p.x !== "number")) throw new RangeError(`a ${scaleKind} x axis needs numeric x`);
  if (scaleKind === "log2" && points.some((p) => !((p.x as number) > 0))) throw new RangeError("a log2 x axis needs x > 0");
  const keys: LegendKey[] = spec.series.map((series, i) => ({
    name: series.name, colour: PALETTE[i % PALETTE.length], kind: "line", marker: MARKERS[i % MARKERS.length], dashed: series.dashed,
  }));
  const layout = frame(spec, keys, points.filter((p) => Number.isFinite(p.y)), 22);
  const { left, right, bottom, y, parts } = layout;
  const inset = 24; // the first and last x sit this far inside the plot, clear of the y axis
  let x: (value: number | string) => number;
  let ticks: Array<{ at: number | string; label: string }>;
  if (scaleKind === "category") {
    const categories = [...new Set(points.map((p) => String(p.x)))];
    const step = (right - left) / categories.length;
    x = (value) => left + step * (categories.indexOf(String(value)) + 0.5);
    ticks = categories.map((c) => ({ at: c, label: c }));
  } else {
    const xs = points.map((p) => p.x as number);
    const transform = scaleKind === "log2" ? Math.log2 : (v: number) => v;
    let values: number[];
    if (scaleKind === "log2") {
      const [a, b] = [Math.floor(Math.log2(Math.min(...xs))), Math.ceil(Math.log2(Math.max(...xs)))];
      const every = Math.max(1, Math.ceil((b - a) / 8));
      values = [];
      for (let e = a; e <= b; e += every) values.push(2 ** e);
    } else {
      values = niceTicks(Math.min(...xs), Math.max(...xs), 6);
    }
    const [low, high] = [transform(Math.min(...values, ...xs)), transform(Math.max(...values, ...xs))];
    x = (value) => (high === low ? (left + right) / 2 : left + inset + ((transform(value as number) - low) / (high - low)) * (right - left - 2 * inset));
    ticks = values.map((v) => ({ at: v, label: formatValue(v) }));
  }
  for (const tick of ticks) {
    parts.push(`<line${attrs({ x1: x(tick.at), x2: x(tick.at), y1: bottom, y2: bottom + 5, stroke: "#888888" })}/>`);
    parts.push(text(x(tick.at), bottom + 18, tick.label, { "text-anchor": "middle", "font-size": 12 }));
  }
  const body: string[] = [];
  spec.series.forEach((series, s) => {
    const key = keys[s];
    const drawn = series.points.filter((p) => Number.isFinite(p.y));
    const ordered = scaleKind === "category" ? drawn : [...drawn].sort((a, b) => (a.x as number) - (b.x as number));
    if (ordered.length > 1) {
      body.push(`<polyline${attrs({ class: "line", points: ordered.map((p) => `${px(x(p.x))},${px(y(p.y))}`).join(" "), fill: "none", stroke: key.colour, "stroke-width": 2, "stroke-dasharray": series.dashed ? "6 4" : undefined })}/>`);
    }
    for (const point of ordered) {
      body.push(errorBar(point, x(point.x), 8, y));
      body.push(marker(key.marker!, x(point.x), y(point.y), key.colour, "point", `${series.name}, ${spec.xLabel ?? "x"} ${point.x}: ${describeValue(point)}`));
    }
  });
  const description = `Line chart of ${spec.yLabel} against ${spec.xLabel ?? "x"}. `
    + spec.series.map((series) => `${series.name}: ${series.points.map((p) => `${p.x}: ${describeValue(Number.isFinite(p.y) ? p : undefined)}`).join("; ")}.`).join(" ");
  return svgDocument(layout, spec, description, body);
}


/** Writes a chart to `path` (its folder made if missing) and says so on stderr, apart from the bench's printed figures. */
export function writeChart(path: string, svg: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, svg);
  process.stderr.write(`chart written: ${path}\n`);
}
