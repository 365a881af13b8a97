/**
 * Bar charts drawn by uPlot (a maintained, dependency-free chart library, bundled with
 * the console: nothing is fetched from another host). One series per stack layer; the
 * x axis is a list of category labels. Its legend is uPlot's own, in the labels given.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface BarSeries {
  label: string;
  values: number[];
  color: string;
}

/**
 * `categories` label the x axis, `short` replaces them where the chart is narrower than
 * 480 px (a phone); `xLabel` names them in the legend; `counts` keeps the y axis on whole
 * numbers. `title` is the chart's accessible name (its panel shows the heading).
 */
export function BarChart({ categories, short, xLabel, series, title, height = 220, stacked = false, counts = false }: { categories: string[]; short?: string[]; xLabel: string; series: BarSeries[]; title: string; height?: number; stacked?: boolean; counts?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = categories.map((_, i) => i);
    // Stacked bars: each layer is drawn as the running sum, widest (total) first.
    const drawn = stacked ? series.map((_, k) => xs.map((i) => series.slice(0, k + 1).reduce((sum, s) => sum + (s.values[i] ?? 0), 0))) : series.map((s) => s.values);
    const order = stacked ? [...series.keys()].reverse() : [...series.keys()];
    const bars = uPlot.paths.bars!({ size: [stacked ? 0.6 : 0.8 / Math.max(1, series.length), 64], align: 0 });
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height,
        cursor: { drag: { x: false, y: false }, points: { show: false } },
        scales: { x: { time: false, range: [-0.5, categories.length - 0.5] } },
        axes: [
          // The short labels once the chart is narrow (a phone): decided at each draw, so a resize switches them.
          { values: (u, ticks) => ticks.map((v) => (short && u.width < 480 ? short : categories)[Math.round(v)] ?? ''), splits: () => xs, gap: 4 },
          counts ? { size: 48, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 100000] } : { size: 48 },
        ],
        series: [
          { label: xLabel, value: (_u: uPlot, v: number | null) => (v === null ? '—' : (categories[Math.round(v)] ?? '—')) },
          ...order.map((k, n) => ({
            label: series[k]!.label,
            stroke: series[k]!.color,
            fill: series[k]!.color,
            paths: bars,
            points: { show: false },
            value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) => (idx === null ? '—' : String(series[k]!.values[idx] ?? 0)),
          })),
        ],
      },
      [xs, ...order.map((k) => drawn[k]!)],
      el,
    );
    return followWidth(plot, el, height);
  }, [JSON.stringify({ categories, short, xLabel, series, title, stacked, counts })]);
  return <div class="chart" ref={box} role="img" aria-label={title} />;
}

export interface StatePoint {
  /** Epoch seconds of the report that changed the state. */
  at: number;
  online: boolean;
  relayOn: boolean | null;
}

/**
 * A telegestor's state over time as two step lines: its connection (offline/online,
 * the lower band) and its lamp's relay (off/on, the upper band; a gap while unknown).
 * `points` oldest first; the last state is drawn on to `until` (epoch seconds).
 * `levels` names the four levels bottom to top: offline, online, relay off, relay on.
 */
export function StateChart({ points, until, levels, connection, relay, timeLabel, time, tick, title, height = 200 }: { points: StatePoint[]; until: number; levels: [string, string, string, string]; connection: string; relay: string; timeLabel: string; time: (epochSeconds: number) => string; tick: (epochSeconds: number) => string; title: string; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || points.length === 0) return;
    const last = points[points.length - 1]!;
    const all = [...points, { ...last, at: Math.max(until, last.at + 60) }];
    const xs = all.map((p) => p.at);
    const online = all.map((p) => (p.online ? 1 : 0));
    const relayLine = all.map((p) => (p.relayOn === null ? null : p.relayOn ? 3 : 2));
    const stepped = uPlot.paths.stepped!({ align: 1 });
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height,
        cursor: { drag: { x: false, y: false } },
        scales: { y: { range: [-0.4, 3.4] } },
        // Times in the operator's language (uPlot's own are English).
        axes: [{ values: (_u, ticks) => ticks.map((v) => tick(v)), space: 90 }, { size: 118, splits: () => [0, 1, 2, 3], values: (_u, ticks) => ticks.map((v) => levels[Math.round(v)] ?? '') }],
        series: [
          { label: timeLabel, value: (_u: uPlot, v: number | null) => (v === null ? '—' : time(v)) },
          { label: connection, stroke: '#1d4ed8', width: 2, paths: stepped, points: { show: false }, value: (_u: uPlot, v: number | null) => (v === null ? '—' : levels[v]!) },
          { label: relay, stroke: '#c2410c', width: 2, paths: stepped, points: { show: false }, spanGaps: false, value: (_u: uPlot, v: number | null) => (v === null ? '—' : levels[v]!) },
        ],
      },
      [xs, online, relayLine],
      el,
    );
    return followWidth(plot, el, height);
  }, [JSON.stringify({ points, until, levels, connection, relay, timeLabel, title })]);
  return <div class="chart" ref={box} role="img" aria-label={title} />;
}

/** Keeps a plot as wide as its box (at least 280 px); the cleanup stops that and removes the plot. */
function followWidth(plot: uPlot, el: HTMLElement, height: number): () => void {
  const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height }));
  resize.observe(el);
  return () => {
    resize.disconnect();
    plot.destroy();
  };
}
