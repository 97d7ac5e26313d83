// From stored samples (and a finding) to what a chart draws: one line per process on a GPU, the GPU's
// used total and capacity, host RAM; the fitted creep and its forecast to full; the finding's window.
import { t } from '../core/i18n.js';
import { formatHours } from './digest.js';
import type { CreepPattern } from './creep-shape.js';
import { memoryUnit, zoneAbbreviation, type ChartTheme, type MemoryChartSpec, type MemoryLine, type MemoryPoint } from './chart.js';
import { isHostSample, isProcessSample, type Finding, type Sample } from './types.js';

const HOUR = 3_600_000;
/** More points than this per line are min/max decimated (about two per pixel column of an 800 px chart). */
export const MAX_POINTS = 1600;

export interface ProcessLine {
  pid: number;
  user: string;
  command: string;
  startMs: number;
  points: MemoryPoint[];
}

/** One GPU's series over a time range, as the store holds them. */
export interface GpuSeries {
  host: string;
  gpu: number;
  /** memory.total at the latest sample that reported it; null when none did. */
  capacityMiB: number | null;
  processes: ProcessLine[];
  /** memory.used of the whole GPU, one point per poll. */
  total: MemoryPoint[];
  /** utilization.gpu in %, one point per poll; null where the driver gave none (MIG, older cards). */
  util: MemoryPoint[];
  firstMs: number;
  lastMs: number;
}

export interface HostRamSeries {
  host: string;
  capacityMiB: number;
  used: MemoryPoint[];
  firstMs: number;
  lastMs: number;
}

const msOf = (ts: string | number) => (typeof ts === 'number' ? ts : Date.parse(ts));

/** Above this (1 PiB) a memory figure is not one a GPU or host holds: a corrupt row, drawn as a gap. */
export const MAX_CHART_MIB = 2 ** 30;
/** A stored figure as a chart draws it: null (a gap) unless finite and within 0..MAX_CHART_MIB. */
const mibOrNull = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_CHART_MIB ? v : null);

/** A stored utilisation as a chart draws it: null (a gap) unless finite and within 0..100 %. */
const pctOrNull = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 100 ? v : null);

/**
 * The samples of one GPU of one host between fromMs and toMs (inclusive), grouped by process (host +
 * pid + start: a reused pid is another line). Null when there are none.
 */
export function gpuSeries(samples: Iterable<Sample>, host: string, gpu: number, fromMs = -Infinity, toMs = Infinity): GpuSeries | null {
  const procs = new Map<string, ProcessLine>();
  const total = new Map<number, number>();
  const util = new Map<number, number | null>();
  let capacity: { ms: number; mib: number } | null = null;
  let first = Infinity;
  let last = -Infinity;
  for (const s of samples) {
    if (isHostSample(s) || s.host !== host || s.gpu !== gpu) continue;
    const ms = msOf(s.ts);
    if (!Number.isFinite(ms) || ms < fromMs || ms > toMs) continue;
    first = Math.min(first, ms);
    last = Math.max(last, ms);
    // A process row without its GPU row (store) reports total 0: unknown, not an empty GPU.
    const totalMiB = mibOrNull(s.gpuTotalMiB);
    if (totalMiB) {
      const used = mibOrNull(s.gpuUsedMiB);
      if (used !== null) total.set(ms, used);
      util.set(ms, pctOrNull(s.utilizationPct));
      if (!capacity || ms >= capacity.ms) capacity = { ms, mib: totalMiB };
    }
    if (isProcessSample(s)) {
      const startMs = msOf(s.processStart);
      const key = `${s.pid}|${startMs}`;
      let p = procs.get(key);
      if (!p)
        procs.set(key, (p = { pid: s.pid, user: String(s.user), command: String(s.command), startMs: Number.isFinite(startMs) ? startMs : 0, points: [] }));
      p.points.push([ms, mibOrNull(s.processMiB)]);
    }
  }
  if (first === Infinity) return null;
  const byTime = (a: MemoryPoint, b: MemoryPoint) => a[0] - b[0];
  return {
    host,
    gpu,
    capacityMiB: capacity?.mib ?? null,
    processes: [...procs.values()].map((p) => ({ ...p, points: p.points.sort(byTime) })).sort((a, b) => a.startMs - b.startMs || a.pid - b.pid),
    total: [...total].sort((a, b) => a[0] - b[0]),
    util: [...util].sort((a, b) => a[0] - b[0]),
    firstMs: first,
    lastMs: last,
  };
}

/** Host RAM used (total - available) between fromMs and toMs; null when the host has no RAM samples. */
export function hostRamSeries(samples: Iterable<Sample>, host: string, fromMs = -Infinity, toMs = Infinity): HostRamSeries | null {
  const used: MemoryPoint[] = [];
  let capacity = 0;
  for (const s of samples) {
    if (!isHostSample(s) || s.host !== host) continue;
    const ms = msOf(s.ts);
    if (!Number.isFinite(ms) || ms < fromMs || ms > toMs) continue;
    used.push([ms, mibOrNull((s.memTotalBytes - s.memAvailableBytes) / 2 ** 20)]);
    capacity = mibOrNull(s.memTotalBytes / 2 ** 20) ?? capacity;
  }
  if (!used.length) return null;
  used.sort((a, b) => a[0] - b[0]);
  return { host, capacityMiB: capacity, used, firstMs: used[0][0], lastMs: used[used.length - 1][0] };
}

/**
 * Chart-ready points: a null (a break in the line) wherever no sample came for longer than gapMs, as
 * Grafana does, and at most maxPoints by min/max decimation, which keeps each bucket's lowest and
 * highest sample in time order, so validation peaks and empty_cache dips survive (an average or LTTB
 * would shave them off).
 */
export function chartPoints(points: readonly MemoryPoint[], gapMs: number, maxPoints = MAX_POINTS): MemoryPoint[] {
  const withGaps: MemoryPoint[] = [];
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    const prev = points[i - 1];
    if (prev && p[0] - prev[0] > gapMs) withGaps.push([(p[0] + prev[0]) / 2, null]);
    withGaps.push(p);
  }
  if (withGaps.length <= maxPoints) return withGaps;
  const buckets = Math.floor(maxPoints / 2);
  const t0 = withGaps[0][0];
  const span = withGaps[withGaps.length - 1][0] - t0 || 1;
  const out: MemoryPoint[] = [];
  let i = 0;
  for (let b = 0; b < buckets && i < withGaps.length; b++) {
    const end = t0 + (span * (b + 1)) / buckets;
    let lo: MemoryPoint | null = null;
    let hi: MemoryPoint | null = null;
    let gap: MemoryPoint | null = null;
    for (; i < withGaps.length && (withGaps[i][0] <= end || b === buckets - 1); i++) {
      const p = withGaps[i];
      if (p[1] === null) gap = p;
      else {
        if (!lo || p[1] < lo[1]!) lo = p;
        if (!hi || p[1] > hi[1]!) hi = p;
      }
    }
    const keep = [lo, hi, gap].filter((p): p is MemoryPoint => p !== null).sort((a, c) => a[0] - c[0]);
    for (const p of keep) if (out[out.length - 1] !== p) out.push(p);
  }
  return out;
}

function lastValue(points: readonly MemoryPoint[]): number | undefined {
  for (let i = points.length - 1; i >= 0; i--) if (points[i][1] !== null) return points[i][1]!;
  return undefined;
}

const round1 = (v: number) => Math.round(v * 10) / 10;
const sizeText = (mib: number) => {
  const u = memoryUnit(mib);
  return u.name === 'GiB' ? `${round1(mib / 1024)} GiB` : `${Math.round(mib)} MiB`;
};
/** Longest user name a label shows (a host's ps may report any length); longer ones end in "…". */
const MAX_USER_CHARS = 24;
export const processLabel = (p: Pick<ProcessLine, 'user' | 'pid'>) =>
  `${p.user.length > MAX_USER_CHARS ? `${p.user.slice(0, MAX_USER_CHARS - 1)}…` : p.user} · pid ${p.pid}`;

/** "14:20 CET" (same day) or "Nov 21 14:20 CET" in the chart's zone. */
function clockText(ms: number, timeZone: string, refMs: number): string {
  const day = (t: number) => new Intl.DateTimeFormat('en-US', { timeZone, month: 'short', day: 'numeric' }).format(new Date(t));
  const hm = new Intl.DateTimeFormat('en-US', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(ms));
  return `${day(ms) === day(refMs) ? '' : `${day(ms)} `}${hm} ${zoneAbbreviation(timeZone, ms)}`;
}

export interface ChartStyle {
  timeZone: string;
  theme?: ChartTheme;
  /** Sampling interval: no sample for 3x this is a gap. */
  sampleIntervalSec?: number;
}

const gapOf = (o: ChartStyle) => 3 * (o.sampleIntervalSec ?? 60) * 1000;

/**
 * Process lines a chart draws at most: the rest are summed into one "others" line. Hundreds of lines
 * (and their legend) leave no room for the plot, and drew resvg into a panic that aborted the bot.
 */
export const MAX_PROCESS_LINES = 12;

/** The highest value of a line (its peak), -Infinity when it has none. */
function peakOf(points: readonly MemoryPoint[]): number {
  let m = -Infinity;
  for (const p of points) if (p[1] !== null && p[1] > m) m = p[1];
  return m;
}

/**
 * The processes a chart draws: the `max` with the highest peak (the one a finding names always among
 * them), in their usual order, and the others as one line of their summed memory at each sample time.
 */
export function boundedProcesses(
  processes: readonly ProcessLine[],
  max = MAX_PROCESS_LINES,
  keepPid?: number,
): { shown: ProcessLine[]; others: { count: number; points: MemoryPoint[] } | null } {
  if (processes.length <= max) return { shown: [...processes], others: null };
  const ranked = processes.map((p, i) => ({ p, i, peak: peakOf(p.points) })).sort((a, b) => b.peak - a.peak || a.i - b.i);
  const kept = new Set(ranked.slice(0, max).map((r) => r.i));
  const grown = keepPid === undefined ? -1 : processes.findIndex((p) => p.pid === keepPid);
  if (grown >= 0 && !kept.has(grown)) {
    kept.delete(ranked[max - 1].i);
    kept.add(grown);
  }
  const sum = new Map<number, number>();
  let count = 0;
  processes.forEach((p, i) => {
    if (kept.has(i)) return;
    count++;
    for (const [ms, v] of p.points) if (v !== null) sum.set(ms, (sum.get(ms) ?? 0) + v);
  });
  return {
    shown: processes.filter((_, i) => kept.has(i)),
    others: { count, points: [...sum].sort((a, b) => a[0] - b[0]) },
  };
}

const lines = (data: GpuSeries, o: ChartStyle, keepPid?: number): { processes: MemoryLine[]; total: MemoryLine; utilization: MemoryLine } => {
  const { shown, others } = boundedProcesses(data.processes, MAX_PROCESS_LINES, keepPid);
  const drawn = shown.map((p) => ({ name: processLabel(p), points: chartPoints(p.points, gapOf(o)) }));
  // The image's labels are English like the rest of it (its font has no CJK glyphs); the text reply is localised.
  if (others) drawn.push({ name: t('en', 'chart.others', { n: others.count }), points: chartPoints(others.points, gapOf(o)) });
  return {
    processes: drawn,
    total: { name: `GPU ${data.gpu} used (all processes)`, points: chartPoints(data.total, gapOf(o)) },
    utilization: { name: `GPU ${data.gpu} utilisation (right axis)`, points: chartPoints(data.util, gapOf(o)) },
  };
};

const capacityOf = (mib: number | null, what: string) => (mib ? { mib, name: `${what} capacity ${sizeText(mib)}` } : undefined);

/** `/gpu chart`: one GPU's recent memory, with the fit and window of a finding on it when there is one. */
export function gpuChartSpec(data: GpuSeries, o: ChartStyle & { hours: number; finding?: Finding }): MemoryChartSpec {
  if (o.finding) return findingChartSpec(o.finding, data, o);
  const now = data.total[data.total.length - 1]?.[1];
  const n = data.processes.length;
  return {
    title: `${data.host} · GPU ${data.gpu}: memory over the last ${o.hours} h`,
    subtitle: `${n} process${n === 1 ? '' : 'es'}${now != null ? ` · ${sizeText(now)}${data.capacityMiB ? ` of ${sizeText(data.capacityMiB)}` : ''} used now` : ''} · no creep found`,
    timeZone: o.timeZone,
    theme: o.theme,
    ...lines(data, o),
    capacity: capacityOf(data.capacityMiB, `GPU ${data.gpu}`),
  };
}

/** How a creep grows, short enough for a subtitle (the digest's text has the long form). */
const PATTERN_SHORT: Record<CreepPattern, string> = {
  steady: 'steady creep',
  validation_steps: 'grows at each validation',
  despite_empty_cache: 'grows despite empty_cache (dips seen)',
};

const WHAT_GREW: Record<Finding['kind'], string> = {
  leak: 'memory creep',
  rank0_growth: 'one rank growing',
  host_ram: 'host RAM creep',
  idle_held: 'idle memory held',
};

/**
 * A growth finding drawn over its samples: the fitted creep is a line at the finding's slope that meets
 * the capacity at the finding's own forecast (now + hours to full), so the chart and the text agree;
 * drawn from the growth's onset, and cut at twice the shown history when full is further off.
 */
export function findingChartSpec(f: Finding, data: GpuSeries | HostRamSeries, o: ChartStyle): MemoryChartSpec {
  const isGpu = 'gpu' in data;
  const endMs = data.lastMs;
  const startMs = data.firstMs;
  const sinceMs = f.since ? Date.parse(f.since) : NaN;
  const capacityMiB = (isGpu ? data.capacityMiB : data.capacityMiB) ?? f.totalMiB;
  const who = f.pid !== undefined ? ` · ${f.user ?? '?'} pid ${f.pid}` : '';
  const where = isGpu ? `${f.host} · GPU ${data.gpu}${who}` : `${f.host} · host RAM`;
  const grown = isGpu ? data.processes.find((p) => p.pid === f.pid) : undefined;
  const title = `${where}: ${WHAT_GREW[f.kind]}${f.slopeMiBPerHour > 0 ? ` +${round1(f.slopeMiBPerHour)} MiB/h` : ''}`;
  const details: string[] = [];
  if (f.hoursToFull !== null) details.push(`full in ${formatHours(f.hoursToFull)} (${clockText(endMs + f.hoursToFull * HOUR, o.timeZone, endMs)})`);
  if (f.pattern) details.push(PATTERN_SHORT[f.pattern]);
  if (f.detail && !f.pattern) details.push(f.detail.split(';')[0]);
  const spec: MemoryChartSpec = {
    title,
    subtitle: details.join(' · ') || undefined,
    timeZone: o.timeZone,
    theme: o.theme,
    ...(isGpu ? lines(data, o, f.pid) : { processes: [], total: { name: 'host RAM used', points: chartPoints(data.used, gapOf(o)) } }),
    capacity: capacityOf(capacityMiB, isGpu ? `GPU ${data.gpu}` : 'host RAM'),
  };
  if (Number.isFinite(sinceMs) && f.slopeMiBPerHour > 0) {
    spec.window = { fromMs: Math.max(startMs, sinceMs), toMs: endMs, name: `growth since ${clockText(Math.max(startMs, sinceMs), o.timeZone, endMs)}` };
    // Through (full time, capacity) at the finding's slope: at endMs it stands at what the GPU used then.
    const fullMs = f.hoursToFull !== null ? endMs + f.hoursToFull * HOUR : endMs;
    const fullMiB = f.hoursToFull !== null ? capacityMiB : ((data as GpuSeries).total?.at(-1)?.[1] ?? f.currentMiB);
    const at = (ms: number) => fullMiB - (f.slopeMiBPerHour * (fullMs - ms)) / HOUR;
    const horizonMs = endMs + Math.max((endMs - startMs) / 2, 2 * HOUR);
    const toMs = Math.min(fullMs, horizonMs);
    const fromMs = Math.max(startMs, sinceMs);
    spec.fit = {
      name: `fitted creep +${round1(f.slopeMiBPerHour)} MiB/h${f.hoursToFull !== null ? ` → full ${clockText(fullMs, o.timeZone, endMs)}` : ''}`,
      from: [fromMs, at(fromMs)],
      to: [toMs, at(toMs)],
    };
    // The same fit on the grown process's own line: less what the GPU's other holders had at the end.
    const grownLast = grown ? lastValue(grown.points) : undefined;
    const usedLast = isGpu ? lastValue(data.total) : undefined;
    if (!isGpu) spec.zoom = { name: 'host RAM used', fit: spec.fit };
    else if (grown && grownLast != null && usedLast != null) {
      const others = usedLast - grownLast;
      spec.zoom = { name: processLabel(grown), fit: { ...spec.fit, from: [fromMs, at(fromMs) - others], to: [toMs, at(toMs) - others] } };
    }
  }
  return spec;
}
