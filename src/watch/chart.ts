// Memory charts as a Grafana panel draws them: Apache ECharts rendered server-side to SVG (no DOM, no
// canvas), then to PNG by resvg with the fonts shipped in assets/fonts (the image has no system fonts).
// What is drawn comes in as a MemoryChartSpec (src/watch/chart-data.ts builds one from samples and a
// finding): one line per process, the GPU total, the capacity, the fitted creep with its forecast to
// full (dashed) and the window the finding is based on (shaded).
import * as echarts from 'echarts';
import { Resvg } from '@resvg/resvg-js';
import { FONT_FAMILY, fontFiles, measureText } from './chart-fonts.js';
import { maxOf, minOf } from '../core/extremes.js';

export { FONT_FAMILY };

export type ChartTheme = 'light' | 'dark';

/** [epoch ms, MiB]; a null value is a gap (unknown, never drawn as 0). */
export type MemoryPoint = readonly [number, number | null];

export interface MemoryLine {
  /** Legend text: `alice · pid 4242` for a process. */
  name: string;
  points: readonly MemoryPoint[];
}

export interface MemoryChartSpec {
  /** Host, GPU and what grew. */
  title: string;
  /** A second line: time to full, how it grows (cut to the chart's width). */
  subtitle?: string;
  /** IANA zone the time axis is labelled in (the digest's or the bot's). */
  timeZone: string;
  processes: readonly MemoryLine[];
  /** All memory used on the GPU (or host RAM used), drawn thicker. */
  total?: MemoryLine;
  capacity?: { mib: number; name: string };
  /** The fitted creep: a straight line from its start to where it meets the capacity (or the edge). */
  fit?: { name: string; from: readonly [number, number]; to: readonly [number, number] };

  /** The GPU's utilisation in % (points [epoch ms, %]), a thin line on a second axis (0-100 %) at the right. */
  utilization?: MemoryLine;

  /** The window the finding is based on. */
  window?: { fromMs: number; toMs: number; name: string };
  theme?: ChartTheme;
  /**
   * The line that grew (a process, or the total) and the fit in its terms (the main fit is the GPU's
   * total, which meets the capacity): shown in a second, zoomed panel when its rise is small.
   */
  zoom?: { name: string; fit: Fit };
  /** CSS pixels of the SVG; the PNG is pixelRatio times larger. */
  width?: number;
  height?: number;
}

export interface RenderedChart {
  svg: string;
  png: Buffer;
  /** PNG size in pixels. */
  width: number;
  height: number;
}

export const CHART_WIDTH = 800;
export const CHART_HEIGHT = 400;
/** The PNG is drawn at twice the CSS size: crisp when Slack or Discord scale it for a high-density screen. */
export const PIXEL_RATIO = 2;

// Grafana's light and dark panel colours; process lines take the palette in order.
const THEMES = {
  light: {
    bg: '#ffffff',
    text: '#1f2328',
    muted: '#5b6470',
    grid: '#e3e6ea',
    total: '#1f2328',
    capacity: '#d7263d',
    fit: '#e8590c',
    util: '#0b7285',
    band: 'rgba(250, 176, 5, 0.16)',
    bandText: '#8a5a00',
  },
  dark: {
    bg: '#181b1f',
    text: '#d8d9da',
    muted: '#9fa7b3',
    grid: '#2c3235',
    total: '#f0f0f0',
    capacity: '#f2495c',
    fit: '#ff9830',
    util: '#66d9e8',
    band: 'rgba(250, 176, 5, 0.14)',
    bandText: '#fade2a',
  },
} as const;
/** The colours of a theme (panels of other charts share them). */
export const chartTheme = (theme: ChartTheme) => THEMES[theme];

const PALETTE = {
  light: ['#1f77b4', '#2ca02c', '#9467bd', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22'],
  dark: ['#73bf69', '#5794f2', '#b877d9', '#8ab8ff', '#96d98d', '#ffb357', '#c4a2e8', '#4ec9d6'],
} as const;

// Layout widths from the bundled font's own metrics (see chart-fonts.ts), set once per process.
let platformSet = false;
function usePlatform(): void {
  if (platformSet) return;
  echarts.setPlatformAPI({ measureText });
  platformSet = true;
}

/** GiB when the chart reaches 10 GiB, MiB below: axis labels stay short and whole. */
export function memoryUnit(maxMiB: number): { name: 'GiB' | 'MiB'; div: number } {
  return maxMiB >= 10 * 1024 ? { name: 'GiB', div: 1024 } : { name: 'MiB', div: 1 };
}

/** The zone's UTC offset (ms) at `ms`, from Intl (no tz database of our own). */
export function zoneOffsetMs(timeZone: string, ms: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(ms));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(ms / 1000) * 1000;
}

const pad2 = (n: number) => String(n).padStart(2, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * Wall-clock text of a shifted time value (UTC fields of ms + offset): "14:30", "Nov 20" at midnight, and
 * "14:30:30" for a tick between minutes (a window of a few minutes has ticks every 10 or 30 s, which
 * read "14:30" twice without their seconds).
 */
export function wallLabel(shifted: number): string {
  const d = new Date(shifted);
  const seconds = d.getUTCSeconds();
  if (d.getUTCHours() === 0 && d.getUTCMinutes() === 0 && seconds === 0) return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
  const hm = `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
  return seconds === 0 ? hm : `${hm}:${pad2(seconds)}`;
}

/** The zone's short name at `ms` (CET, GMT+2, UTC), for the axis title. */
export function zoneAbbreviation(timeZone: string, ms: number): string {
  return (
    new Intl.DateTimeFormat('en-GB', { timeZone, timeZoneName: 'short' }).formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? timeZone
  );
}

type Fit = NonNullable<MemoryChartSpec['fit']>;

/** The extent of a spec's lines, fit and window: time range and the memory axis' top. */
function extent(spec: MemoryChartSpec): { t0: number; t1: number; top: number } {
  const lines = [...spec.processes, ...(spec.total ? [spec.total] : [])];
  const times = lines.flatMap((l) => l.points.map((p) => p[0]));
  const values = lines.flatMap((l) => l.points.map((p) => p[1]).filter((v): v is number => v !== null));
  return {
    t0: minOf(times, spec.window?.fromMs ?? Infinity, spec.fit?.from[0] ?? Infinity),
    t1: maxOf(times, spec.window?.toMs ?? -Infinity, spec.fit?.to[0] ?? -Infinity),
    top: maxOf(values, 1, spec.capacity?.mib ?? 0, spec.fit ? Math.max(spec.fit.from[1], spec.fit.to[1]) : 0),
  };
}

/**
 * The zoom panel, when the finding's growth is too small to see at the capacity's scale: the grown
 * line from the growth's start (warm-up left out) with the fit in that line's terms.
 */
function zoomPlan(spec: MemoryChartSpec): { line: MemoryLine; fit: Fit; values: number[] } | undefined {
  if (!spec.zoom) return undefined;
  const { top } = extent(spec);
  const line = [...spec.processes, ...(spec.total ? [spec.total] : [])].find((l) => l.name === spec.zoom!.name);
  const fit = spec.zoom.fit;
  if (!line) return undefined;
  const values = line.points.filter((p) => p[1] !== null && p[0] >= fit.from[0]).map((p) => p[1]!);
  if (!values.length) return undefined;
  const rise = maxOf(values, fit.to[1]) - minOf(values, fit.from[1]);
  // Under a fifth of the axis (about 50 px here) a creep reads as flat: repeat it on its own scale.
  return rise < 0.2 * top ? { line, fit, values } : undefined;
}

/** Round axis bounds around [lo, hi] with about `ticks` intervals of 1, 2 or 5 x 10^n. */
export function niceRange(lo: number, hi: number, ticks: number): { min: number; max: number; interval: number } {
  const span = Math.max(hi - lo, Math.abs(hi) * 1e-3, 1e-3);
  const raw = span / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const interval = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const min = Math.max(0, Math.floor(lo / interval) * interval);
  let max = Math.ceil(hi / interval) * interval;
  if (max <= min) max = min + interval;
  return { min, max, interval };
}

/** CSS size of the chart: taller when it has a zoom panel. */
export function chartSize(spec: MemoryChartSpec): { width: number; height: number } {
  return { width: spec.width ?? CHART_WIDTH, height: spec.height ?? (zoomPlan(spec) ? CHART_HEIGHT + 120 : CHART_HEIGHT) };
}

const GRID_LEFT = 80;
const GRID_RIGHT = 28;
/** Room for the utilisation axis's labels (`100%`) at the right. */
const GRID_RIGHT_WITH_UTIL = 56;

/**
 * The ECharts option for a spec. ECharts labels a time axis in the process's own zone, so times are
 * shifted by the chart zone's offset and the axis runs in UTC: its ticks then fall on the zone's round
 * hours and midnights, and the labels read that zone's wall clock.
 *
 * One panel: capacity, total, every process, the fit and the window. When the growth is too small to
 * see at that scale (50 MiB/h on an 80 GiB card), a second panel below repeats the grown line, the fit
 * and the window on an axis of their own, as a Grafana row would with a zoomed panel.
 */
export function chartOption(spec: MemoryChartSpec): echarts.EChartsOption {
  const theme = THEMES[spec.theme ?? 'light'];
  const palette = PALETTE[spec.theme ?? 'light'];
  const { width, height } = chartSize(spec);
  const { t0, t1, top } = extent(spec);
  const offset = zoneOffsetMs(spec.timeZone, t1);
  const x = (ms: number) => ms + offset;
  const unit = memoryUnit(top);
  const scaled = (div: number) => (mib: number) => Math.round((mib / div) * 1000) / 1000;
  const y = scaled(unit.div);
  const toData = (points: readonly MemoryPoint[], f = y) => points.map(([t, v]) => [x(t), v === null ? null : f(v)]);
  const zoom = zoomPlan(spec);
  const zoomed = zoom?.line;
  // A second axis at the right only where some utilisation was reported (a MIG GPU or an old driver has none).
  const util = spec.utilization?.points.some(([, v]) => v !== null) ? spec.utilization : undefined;
  const gridRight = util ? GRID_RIGHT_WITH_UTIL : GRID_RIGHT;

  const colorOf = new Map<string, string>();
  const series: echarts.SeriesOption[] = [];
  const band = (w: NonNullable<MemoryChartSpec['window']>, labelled = true) => ({
    markArea: {
      silent: true,
      itemStyle: { color: theme.band },
      label: { show: labelled, position: 'insideTop' as const, color: theme.bandText, fontSize: 12, fontFamily: FONT_FAMILY, distance: 4 },
      data: [[{ name: w.name, xAxis: x(w.fromMs) }, { xAxis: x(w.toMs) }]] as [object, object][],
    },
  });
  spec.processes.forEach((p, i) => {
    const color = palette[i % palette.length];
    colorOf.set(p.name, color);
    series.push({
      type: 'line',
      name: p.name,
      data: toData(p.points),
      showSymbol: false,
      // Every sample is drawn: no smoothing and no LTTB sampling, so a validation saw-tooth stays one.
      smooth: false,
      connectNulls: false,
      lineStyle: { width: 1.5, color },
      itemStyle: { color },
      z: 3,
    });
  });
  if (spec.total) {
    colorOf.set(spec.total.name, theme.total);
    series.push({
      type: 'line',
      name: spec.total.name,
      data: toData(spec.total.points),
      showSymbol: false,
      smooth: false,
      connectNulls: false,
      // Wide and translucent under the process lines: where one process is all the GPU holds, both show.
      lineStyle: { width: 5, color: theme.total, opacity: 0.28 },
      itemStyle: { color: theme.total, opacity: 0.5 },
      z: 1,
      ...(spec.window ? band(spec.window) : {}),
    });
  }
  if (spec.capacity)
    series.push({
      type: 'line',
      name: spec.capacity.name,
      data: [
        [x(t0), y(spec.capacity.mib)],
        [x(t1), y(spec.capacity.mib)],
      ],
      showSymbol: false,
      lineStyle: { width: 2, color: theme.capacity },
      itemStyle: { color: theme.capacity },
      z: 2,
    });
  const fitSeries = (fit: Fit, f = y, axis = 0, yAxis = axis): echarts.SeriesOption => ({
    type: 'line',
    name: fit.name,
    data: [
      [x(fit.from[0]), f(fit.from[1])],
      [x(fit.to[0]), f(fit.to[1])],
    ],
    showSymbol: false,
    lineStyle: { width: 2.2, type: 'dashed', color: theme.fit },
    itemStyle: { color: theme.fit },
    xAxisIndex: axis,
    yAxisIndex: yAxis,
    z: 5,
  });
  if (spec.fit) series.push(fitSeries(spec.fit));

  if (util)
    series.push({
      type: 'line',
      name: util.name,
      data: util.points.map(([t, v]) => [x(t), v]),
      showSymbol: false,
      smooth: false,
      connectNulls: false,
      // yAxisIndex 1 is the utilisation axis (pushed right after the memory axis below, before any zoom axis).
      yAxisIndex: 1,
      // Solid and thin: dashes are the fitted creep's.
      lineStyle: { width: 1.2, color: theme.util, opacity: 0.85 },
      itemStyle: { color: theme.util },
      z: 4,
    });
  const legendNames = [...new Set(series.map((s) => String(s.name)))];
  const legendHeight = 14 + 22 * legendRows(legendNames, width);
  const header = spec.subtitle ? 84 : 62;
  const axisBelow = 50;
  const plot = height - header - legendHeight - axisBelow;
  const zoomGap = 34;
  const mainHeight = zoomed ? Math.round((plot - zoomGap) * 0.56) : plot;
  const grids: echarts.GridComponentOption[] = [{ left: GRID_LEFT, right: gridRight, top: header, height: mainHeight }];

  const axisText = { color: theme.text, fontSize: 12, fontFamily: FONT_FAMILY };
  const nameText = { color: theme.muted, fontSize: 12, fontFamily: FONT_FAMILY };
  const timeAxis = (gridIndex: number, labelled: boolean): echarts.XAXisComponentOption => ({
    type: 'time',
    gridIndex,
    min: x(t0),
    max: x(t1),
    ...(labelled
      ? { name: `time (${spec.timeZone}, ${zoneAbbreviation(spec.timeZone, t1)})`, nameLocation: 'middle' as const, nameGap: 28, nameTextStyle: nameText }
      : {}),
    axisLine: { lineStyle: { color: theme.muted } },
    axisTick: { lineStyle: { color: theme.muted } },
    axisLabel: { ...axisText, show: labelled, hideOverlap: true, formatter: (v: number) => wallLabel(v) },
    splitLine: { show: true, lineStyle: { color: theme.grid } },
  });
  const memoryAxis = (
    gridIndex: number,
    name: string,
    unitName: string,
    range?: { min: number; max: number; interval: number },
  ): echarts.YAXisComponentOption => ({
    type: 'value',
    gridIndex,
    ...(range ?? { min: 0, splitNumber: 4 }),
    name,
    nameLocation: 'end',
    nameGap: 8,
    nameTextStyle: { ...nameText, align: 'left', padding: [0, 0, 0, -GRID_LEFT + 16] },
    axisLine: { show: true, lineStyle: { color: theme.muted } },
    axisLabel: { ...axisText, formatter: (v: number) => `${Number(v.toFixed(2))} ${unitName}` },
    splitLine: { lineStyle: { color: theme.grid } },
  });
  const xAxes = [timeAxis(0, !zoomed)];
  const yAxes = [memoryAxis(0, `memory (${unit.name})`, unit.name)];
  if (util)
    yAxes.push({
      type: 'value',
      gridIndex: 0,
      position: 'right',
      min: 0,
      max: 100,
      interval: 25,
      name: 'util (%)',
      nameLocation: 'end',
      nameGap: 8,
      nameTextStyle: { ...nameText, align: 'right' },
      axisLine: { show: true, lineStyle: { color: theme.muted } },
      axisLabel: { ...axisText, formatter: (v: number) => `${v}%` },
      splitLine: { show: false },
    });
  if (zoom && zoomed) {
    const vals = zoom.values;
    const zoomUnit = memoryUnit(maxOf(vals, zoom.fit.to[1]));
    const z = scaled(zoomUnit.div);
    grids.push({ left: GRID_LEFT, right: gridRight, top: header + mainHeight + zoomGap, height: plot - mainHeight - zoomGap });
    xAxes.push(timeAxis(1, true));
    const lo = z(minOf(vals, zoom.fit.from[1], zoom.fit.to[1]));
    const hi = z(maxOf(vals, zoom.fit.from[1], zoom.fit.to[1]));
    yAxes.push(memoryAxis(1, `${zoomed.name}, zoomed (${zoomUnit.name})`, zoomUnit.name, niceRange(lo, hi, 3)));
    const zoomAxis = yAxes.length - 1;
    const color = colorOf.get(zoomed.name) ?? theme.total;
    series.push({
      type: 'line',
      name: zoomed.name,
      data: toData(zoomed.points, z),
      showSymbol: false,
      smooth: false,
      connectNulls: false,
      xAxisIndex: 1,
      yAxisIndex: zoomAxis,
      lineStyle: { width: 1.5, color, opacity: 1 },
      itemStyle: { color },
      z: 3,
      ...(spec.window ? band(spec.window, false) : {}),
    });
    series.push(fitSeries(zoom.fit, z, 1, zoomAxis));
  }

  const text = { color: theme.text, fontFamily: FONT_FAMILY };
  return {
    animation: false,
    useUTC: true,
    backgroundColor: theme.bg,
    textStyle: { ...text, fontSize: 13 },
    title: {
      text: spec.title,
      subtext: spec.subtitle,
      left: 16,
      top: 10,
      textStyle: { ...text, fontSize: 16, fontWeight: 'bold', width: width - 32, overflow: 'truncate' },
      subtextStyle: { color: theme.muted, fontFamily: FONT_FAMILY, fontSize: 13, width: width - 32, overflow: 'truncate' },
      itemGap: 6,
    },
    legend: {
      bottom: 8,
      left: 16,
      right: 16,
      icon: 'roundRect',
      itemWidth: 18,
      itemHeight: 4,
      itemGap: 16,
      textStyle: { ...text, fontSize: 12 },
      data: legendNames,
    },
    grid: grids,
    xAxis: xAxes,
    yAxis: yAxes,
    series,
  };
}

/** Rows the legend wraps to at this width, from the font's own widths (item: icon, gap, text, gap). */
function legendRows(names: string[], width: number): number {
  const avail = width - 32;
  let rows = 1;
  let used = 0;
  for (const n of names) {
    const w = 18 + 5 + measureText(n, `12px ${FONT_FAMILY}`).width + 16;
    if (used > 0 && used + w > avail) {
      rows++;
      used = 0;
    }
    used += w;
  }
  return rows;
}

/** The chart as an SVG document (ECharts' server-side renderer). */
export function renderChartSvg(spec: MemoryChartSpec): string {
  return renderOptionSvg(chartOption(spec), chartSize(spec));
}

/** Any ECharts option of ours as an SVG document, with the bundled font's metrics. */
export function renderOptionSvg(option: echarts.EChartsOption, size: { width: number; height: number }): string {
  usePlatform();
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, ...size });
  try {
    chart.setOption(option);
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

/** SVG to PNG with the bundled fonts only (loadSystemFonts off: the same pixels on every machine). */
export function svgToPng(svg: string, widthPx: number): { png: Buffer; width: number; height: number } {
  const r = new Resvg(svg, {
    fitTo: { mode: 'width', value: widthPx },
    font: { loadSystemFonts: false, fontFiles: fontFiles(), defaultFontFamily: FONT_FAMILY },
  }).render();
  return { png: r.asPng(), width: r.width, height: r.height };
}

export function renderChart(spec: MemoryChartSpec, pixelRatio = PIXEL_RATIO): RenderedChart {
  const svg = renderChartSvg(spec);
  const { png, width, height } = svgToPng(svg, Math.round(chartSize(spec).width * pixelRatio));
  return { svg, png, width, height };
}
