// Tokens per UTC day per model, one uPlot line per model. The canvas is described by its aria-label; the same
// numbers are in the tables beside it.
import uPlot from "uplot";
import { useEffect, useRef } from "preact/hooks";
import { formatDay, formatInteger } from "./format";

/** Series colours: distinct, each at least 3:1 against the white plot background. */
export const SERIES_COLOURS = ["#1f5fbf", "#b4450c", "#1d7a3a", "#8e2fa3", "#a1214a", "#0d6f7a", "#6b5a00", "#4a4a9c"];

export interface ChartData {
  /** UTC days, YYYY-MM-DD, consecutive. */
  days: string[];
  series: Array<{ label: string; values: number[] }>;
}

export function TokensChart({ data, label }: { data: ChartData; label: string }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const xs = data.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
    const options: uPlot.Options = {
      width: Math.max(280, element.clientWidth),
      height: element.clientWidth < 500 ? 220 : 300,
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      scales: { x: { time: true }, y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { stroke: "#333", grid: { stroke: "#e3e6ea" }, ticks: { stroke: "#c5cad1" }, values: (_plot, splits) => splits.map((split) => formatDay(new Date(split * 1000).toISOString().slice(0, 10), true)) },
        { stroke: "#333", grid: { stroke: "#e3e6ea" }, ticks: { stroke: "#c5cad1" }, size: 70, values: (_plot, splits) => splits.map((split) => compact(split)) },
      ],
      series: [
        { label: "Day (UTC)", value: (_plot, value) => (value == null ? "—" : formatDay(new Date(value * 1000).toISOString().slice(0, 10))) },
        ...data.series.map((series, index) => ({
          label: series.label,
          stroke: SERIES_COLOURS[index % SERIES_COLOURS.length],
          width: 2,
          points: { show: data.days.length <= 45, size: 5 },
          value: (_plot: uPlot, value: number | null) => (value == null ? "—" : `${formatInteger(value)} tokens`),
        })),
      ],
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
    };
    const plot = new uPlot(options, [xs, ...data.series.map((series) => series.values)], element);
    const observer = new ResizeObserver(() => {
      const width = Math.max(280, element.clientWidth);
      if (Math.abs(width - plot.width) > 2) plot.setSize({ width, height: width < 500 ? 220 : 300 });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [data]);
  return (
    <figure class="chart-figure">
      <div ref={container} class="chart" role="img" aria-label={label} data-testid="usage-chart" />
    </figure>
  );
}

const compactFormat = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });
function compact(value: number): string {
  return compactFormat.format(value);
}
