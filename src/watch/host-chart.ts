// One chart per host with every GPU (small multiples, as a Grafana row of panels or nvitop's per-device
// bars): each panel the GPU's memory used against its capacity and its utilisation on a second axis, all
// on one time range, so a team sees at a glance which cards are full, idle-but-held or busy. `/gpu chart
// HOST all [hours]` asks for it; the per-GPU chart (chart.ts) stays the one with processes and the fit.
import * as echarts from 'echarts';
import { FONT_FAMILY } from './chart-fonts.js';
import { chartPoints, MAX_CHART_MIB, type ChartStyle } from './chart-data.js';
import { chartTheme, memoryUnit, wallLabel, zoneAbbreviation, zoneOffsetMs, type ChartTheme, type MemoryPoint } from './chart.js';
import { isHostSample, type Sample } from './types.js';

/** Panels a host chart draws at most: a 16-GPU host fits the size bound; GPUs past it are named in the text. */
export const MAX_HOST_PANELS = 16;

export interface HostPanel {
  gpu: number;
  /** memory.total at the latest sample; null when none reported it. */
  capacityMiB: number | null;
  /** memory.used of the whole GPU, one point per poll (chart-ready: gaps and decimation applied). */
  used: MemoryPoint[];
  /** utilization.gpu in %, one point per poll; null where the driver gave none. */
  util: MemoryPoint[];
}

export interface HostChartSpec {
  kind: 'host';
  title: string;
  timeZone: string;
  fromMs: number;
  toMs: number;
  panels: HostPanel[];
  theme?: ChartTheme;
}

const msOf = (ts: string | number) => (typeof ts === 'number' ? ts : Date.parse(ts));
const inRange = (v: number | null | undefined, hi: number): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= hi ? v : null);

/**
 * Every GPU of `host` between fromMs and toMs, one panel each in GPU order (at most MAX_HOST_PANELS, the
 * lowest indices). Each poll counts once per GPU, from its GPU row or the first process row that carries it.
 */
export function hostPanels(
  samples: Iterable<Sample>,
  host: string,
  fromMs: number,
  toMs: number,
  style: Pick<ChartStyle, 'sampleIntervalSec'>,
): { panels: HostPanel[]; gpus: number[] } {
  const byGpu = new Map<number, { used: Map<number, number | null>; util: Map<number, number | null>; capacity: { ms: number; mib: number } | null }>();
  for (const s of samples) {
    if (isHostSample(s) || s.host !== host) continue;
    const ms = msOf(s.ts);
    if (!Number.isFinite(ms) || ms < fromMs || ms > toMs) continue;
    let g = byGpu.get(s.gpu);
    if (!g) byGpu.set(s.gpu, (g = { used: new Map(), util: new Map(), capacity: null }));
    const total = inRange(s.gpuTotalMiB, MAX_CHART_MIB);
    // A process row without its GPU row (store) reports total 0: unknown, not an empty GPU.
    if (!total) continue;
    if (!g.used.has(ms)) {
      g.used.set(ms, inRange(s.gpuUsedMiB, MAX_CHART_MIB));
      g.util.set(ms, inRange(s.utilizationPct, 100));
    }
    if (!g.capacity || ms >= g.capacity.ms) g.capacity = { ms, mib: total };
  }
  const gpus = [...byGpu.keys()].sort((a, b) => a - b);
  const gapMs = 3 * (style.sampleIntervalSec ?? 60) * 1000;
  const sorted = (m: Map<number, number | null>) => [...m].sort((a, b) => a[0] - b[0]) as MemoryPoint[];
  const panels = gpus.slice(0, MAX_HOST_PANELS).map((gpu) => {
    const g = byGpu.get(gpu)!;
    // Fewer points per panel than a full chart's: a panel is a quarter of its width or less.
    return { gpu, capacityMiB: g.capacity?.mib ?? null, used: chartPoints(sorted(g.used), gapMs, 400), util: chartPoints(sorted(g.util), gapMs, 400) };
  });
  return { panels, gpus };
}

/** Columns of the panel grid: one for one GPU, two up to 8 (a DGX in four rows), four beyond. */
const columnsFor = (n: number) => (n <= 1 ? 1 : n <= 8 ? 2 : 4);
const PANEL_HEIGHT = 120;
const PANEL_GAP = 52;
const HEADER = 58;
const FOOTER = 44;

export function hostChartSize(spec: HostChartSpec): { width: number; height: number } {
  const cols = columnsFor(spec.panels.length);
  const rows = Math.max(1, Math.ceil(spec.panels.length / cols));
  return { width: cols === 4 ? 1200 : 800, height: HEADER + rows * (PANEL_HEIGHT + PANEL_GAP) + FOOTER - PANEL_GAP / 2 };
}

const latest = (points: readonly MemoryPoint[]) => {
  for (let i = points.length - 1; i >= 0; i--) if (points[i][1] !== null) return points[i][1];
  return null;
};

/** A panel's heading: the GPU, its memory now against capacity, its utilisation now. */
export function panelHeading(p: HostPanel): string {
  const used = latest(p.used);
  const util = latest(p.util);
  const gib = (mib: number) => (mib / 1024).toFixed(1);
  const mem = used === null ? 'no reading' : p.capacityMiB ? `${gib(used)} / ${gib(p.capacityMiB)} GiB` : `${gib(used)} GiB`;
  return `GPU ${p.gpu} · ${mem}${util === null ? '' : ` · util ${Math.round(util)}%`}`;
}

/** The ECharts option: one grid per GPU, memory on the left axis (one scale for every panel), utilisation on the right. */
export function hostChartOption(spec: HostChartSpec): echarts.EChartsOption {
  const theme = chartTheme(spec.theme ?? 'light');
  const { width } = hostChartSize(spec);
  const cols = columnsFor(spec.panels.length);
  const offset = zoneOffsetMs(spec.timeZone, spec.toMs);
  const x = (ms: number) => ms + offset;
  // One memory scale for every panel: a glance compares cards (capacity or the highest reading).
  const topMiB = Math.max(1, ...spec.panels.map((p) => Math.max(p.capacityMiB ?? 0, ...p.used.map((q) => q[1] ?? 0))));
  const unit = memoryUnit(topMiB);
  const y = (mib: number) => Math.round((mib / unit.div) * 1000) / 1000;
  const left = 64;
  const right = 44;
  const colWidth = (width - 16) / cols;
  const text = { color: theme.muted, fontFamily: FONT_FAMILY, fontSize: 11 };
  const grids: echarts.GridComponentOption[] = [];
  const xAxes: echarts.XAXisComponentOption[] = [];
  const yAxes: echarts.YAXisComponentOption[] = [];
  const series: echarts.SeriesOption[] = [];
  const titles: echarts.TitleComponentOption[] = [
    {
      text: spec.title,
      subtext: `time (${spec.timeZone}, ${zoneAbbreviation(spec.timeZone, spec.toMs)}) · memory used (line, left axis) · utilisation (dashed, right axis)`,
      left: 12,
      top: 8,
      textStyle: { color: theme.text, fontFamily: FONT_FAMILY, fontSize: 15, fontWeight: 'bold' },
      subtextStyle: { color: theme.muted, fontFamily: FONT_FAMILY, fontSize: 11 },
    },
  ];
  spec.panels.forEach((p, i) => {
    const col = i % cols;
    const row = Math.floor(i / cols);
    const panelTop = HEADER + 20 + row * (PANEL_HEIGHT + PANEL_GAP);
    const gridLeft = 8 + col * colWidth + left;
    grids.push({ left: gridLeft, width: colWidth - left - right, top: panelTop, height: PANEL_HEIGHT - 20 });
    titles.push({
      text: panelHeading(p),
      left: gridLeft,
      top: panelTop - 20,
      textStyle: { color: theme.text, fontFamily: FONT_FAMILY, fontSize: 12, fontWeight: 'normal' },
    });
    xAxes.push({
      type: 'time',
      gridIndex: i,
      min: x(spec.fromMs),
      max: x(spec.toMs),
      splitNumber: cols === 4 ? 2 : 4,
      axisLine: { lineStyle: { color: theme.muted } },
      splitLine: { show: false },
      axisLabel: { ...text, hideOverlap: true, formatter: (v: number) => wallLabel(v) },
    });
    yAxes.push(
      {
        type: 'value',
        gridIndex: i,
        min: 0,
        max: y(topMiB),
        splitNumber: 2,
        splitLine: { lineStyle: { color: theme.grid } },
        axisLabel: { ...text, formatter: (v: number) => `${Number(v.toFixed(1))} ${unit.name}` },
      },
      {
        type: 'value',
        gridIndex: i,
        min: 0,
        max: 100,
        splitNumber: 2,
        position: 'right',
        splitLine: { show: false },
        axisLabel: { ...text, formatter: (v: number) => `${v}%` },
      },
    );
    const axes = { xAxisIndex: i, yAxisIndex: 2 * i };
    series.push({
      type: 'line',
      name: `GPU ${p.gpu} used`,
      ...axes,
      data: p.used.map(([t, v]) => [x(t), v === null ? null : y(v)]),
      showSymbol: false,
      smooth: false,
      connectNulls: false,
      lineStyle: { width: 1.5, color: theme.total },
      itemStyle: { color: theme.total },
      areaStyle: { color: theme.total, opacity: 0.08 },
      z: 3,
    });
    if (p.capacityMiB)
      series.push({
        type: 'line',
        name: `GPU ${p.gpu} capacity`,
        ...axes,
        data: [
          [x(spec.fromMs), y(p.capacityMiB)],
          [x(spec.toMs), y(p.capacityMiB)],
        ],
        showSymbol: false,
        lineStyle: { width: 1.5, color: theme.capacity },
        itemStyle: { color: theme.capacity },
        z: 2,
      });
    series.push({
      type: 'line',
      name: `GPU ${p.gpu} utilisation`,
      xAxisIndex: i,
      yAxisIndex: 2 * i + 1,
      data: p.util.map(([t, v]) => [x(t), v]),
      showSymbol: false,
      smooth: false,
      connectNulls: false,
      lineStyle: { width: 1, type: 'dashed', color: theme.fit },
      itemStyle: { color: theme.fit },
      z: 4,
    });
  });
  return {
    backgroundColor: theme.bg,
    animation: false,
    textStyle: { fontFamily: FONT_FAMILY },
    title: titles,
    grid: grids,
    xAxis: xAxes,
    yAxis: yAxes,
    series,
  };
}

/** Years 1970..2286 in ms: a time outside is a corrupt row. */
const MAX_TIME_MS = 1e13;
const finiteIn = (v: number, lo: number, hi: number) => typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi;

/** Why a host chart must not be drawn, or null: panel count, text, times and values bounded and finite (resvg panics on what it did not expect). */
export function hostSpecProblem(spec: HostChartSpec): string | null {
  if (!Array.isArray(spec.panels) || spec.panels.length === 0 || spec.panels.length > MAX_HOST_PANELS) return 'the panel count is out of range';
  if (typeof spec.title !== 'string' || spec.title.length > 400 || typeof spec.timeZone !== 'string' || spec.timeZone.length > 100)
    return 'a title is too long';
  if (!finiteIn(spec.fromMs, 0, MAX_TIME_MS) || !finiteIn(spec.toMs, spec.fromMs, MAX_TIME_MS)) return 'the window is out of range';
  for (const p of spec.panels) {
    if (!finiteIn(p.gpu, 0, 1023)) return 'a GPU index is out of range';
    if (p.capacityMiB !== null && !finiteIn(p.capacityMiB, 0, MAX_CHART_MIB)) return 'the capacity is out of range';
    for (const [line, hi] of [
      [p.used, MAX_CHART_MIB],
      [p.util, 100],
    ] as const) {
      if (line.length > 1000) return `a panel has ${line.length} points`;
      for (const [t, v] of line) {
        if (!finiteIn(t, 0, MAX_TIME_MS)) return 'a time is out of range';
        if (v !== null && !finiteIn(v, 0, hi)) return 'a value is out of range';
      }
    }
  }
  return null;
}
