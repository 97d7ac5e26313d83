// Charts from the leak watch's store: the digest's chart of a finding and `/gpu chart HOST [GPU] [hours]`.
import { t, type Locale } from '../core/i18n.js';
import type { Reply, ReplyFile } from '../core/reply.js';
import { renderChart, memoryUnit, type ChartTheme, type MemoryChartSpec } from './chart.js';
import { boundedProcesses, findingChartSpec, gpuChartSpec, gpuSeries, hostRamSeries, MAX_PROCESS_LINES, processLabel, type ChartStyle } from './chart-data.js';
import { LeakDetector } from './detector.js';
import { formatHours, type ChartOf } from './digest.js';
import { isHostSample, type DetectorOptions, type Finding, type Sample } from './types.js';
import { drawAnyChart, type AnyChartSpec } from './chart-draw.js';
import { hostPanels, MAX_HOST_PANELS, panelHeading, type HostChartSpec } from './host-chart.js';

const HOUR = 3_600_000;

const png = (filename: string, data: Buffer): ReplyFile => ({ filename, contentType: 'image/png', data });
/** File names carry host names: kept to the registry's own characters. */
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * What a finding's chart shows: from a quarter of the growth's age before its onset (at least the last
 * 6 h, at most the detector's 72 h of history) to the newest sample.
 */
export function findingRange(f: Finding, nowMs: number, historyHours = 72): { fromMs: number; toMs: number } {
  const since = f.since ? Date.parse(f.since) : NaN;
  const lead = Number.isFinite(since) ? since - Math.max(HOUR, (nowMs - since) / 4) : -Infinity;
  return { fromMs: Math.max(nowMs - historyHours * HOUR, Math.min(nowMs - 6 * HOUR, lead)), toMs: nowMs };
}

/** What a finding's chart draws, from the stored samples of its host (and GPU), and its file name; none without samples. */
export function findingChartPlan(
  store: { samplesSince(sinceMs: number, host: string): Iterable<Sample> },
  f: Finding,
  style: ChartStyle,
  nowMs = Date.now(),
): { spec: MemoryChartSpec; filename: string } | undefined {
  const { fromMs, toMs } = findingRange(f, nowMs);
  const samples = [...store.samplesSince(fromMs, f.host)];
  const data = f.gpu === undefined ? hostRamSeries(samples, f.host, fromMs, toMs) : gpuSeries(samples, f.host, f.gpu, fromMs, toMs);
  if (!data) return undefined;
  return {
    spec: findingChartSpec(f, data, style),
    filename: `${safe(f.host)}-${f.gpu === undefined ? 'ram' : `gpu${f.gpu}`}${f.pid === undefined ? '' : `-${f.pid}`}.png`,
  };
}

/**
 * The digest's chart of a finding, drawn in this process (the README's pictures, tests). The bot draws
 * them in a child process instead (chart-render.ts), where a renderer crash cannot end it.
 */
export function findingChartFromStore(
  store: { samplesSince(sinceMs: number, host: string): Iterable<Sample> },
  style: ChartStyle,
  nowMs = Date.now(),
): ChartOf {
  return (f) => {
    const plan = findingChartPlan(store, f, style, nowMs);
    return plan ? png(plan.filename, renderChart(plan.spec).png) : undefined;
  };
}

export interface ChartRequest {
  host: string;
  /** 'all': every GPU of the host, a panel each (host-chart.ts). */
  gpu?: number | 'all';
  hours: number;
  theme?: ChartTheme;
  /** The reply's language (English when unset). */
  locale?: Locale;
}

/** `/gpu chart`'s text reply and, where there is something to draw, the chart and its file name. */
export interface ChartPlan {
  reply: Reply;
  chart?: { spec: AnyChartSpec; filename: string };
}
const reply = (r: Reply): ChartPlan => ({ reply: r });

const sizeText = (mib: number) => (memoryUnit(mib).name === 'GiB' ? `${(mib / 1024).toFixed(1)} GiB` : `${Math.round(mib)} MiB`);

/**
 * `/gpu chart`: one GPU of one host over the last `hours`, with the creep the detector finds on it
 * (over its usual history) drawn as a fit and a shaded window. `knownHosts` (the registry) lets an
 * unknown host be told from a known one without samples.
 */
export function gpuChartPlan(
  store: { samplesSince(sinceMs: number, host: string): Iterable<Sample> },
  req: ChartRequest,
  style: ChartStyle,
  detector: Partial<DetectorOptions>,
  knownHosts: string[] | undefined,
  nowMs = Date.now(),
): ChartPlan {
  // The reply in the asker's language; the PNG's own labels stay English (DejaVu Sans, the font shipped for charts, has no CJK glyphs).
  const loc = req.locale;
  const title = t(loc, 'chart.title', { host: req.host });
  const fromMs = nowMs - req.hours * HOUR;
  const d = new LeakDetector(detector);
  // The detector reads its own history (72 h by default) so the chart's finding is the digest's.
  const historyFrom = Math.min(fromMs, nowMs - d.options.maxHistoryHours * HOUR);
  const samples: Sample[] = [...store.samplesSince(historyFrom, req.host)];
  const recent = samples.filter((s) => !isHostSample(s) && (typeof s.ts === 'number' ? s.ts : Date.parse(s.ts)) >= fromMs);
  if (!recent.length) {
    if (knownHosts && !knownHosts.includes(req.host) && !samples.length)
      return reply({
        title,
        severity: 'warning',
        sections: [
          {
            text: t(loc, 'chart.unknownHost', { host: req.host, known: knownHosts.join(', ') || t(loc, 'chart.none') }),
          },
        ],
      });
    return reply({
      title,
      severity: 'info',
      sections: [
        {
          text: t(loc, 'chart.noSamples', { host: req.host, hours: req.hours, older: samples.length ? t(loc, 'chart.olderExist') : '' }),
        },
      ],
    });
  }
  if (req.gpu === 'all') return hostChartPlan(recent, req, style, fromMs, nowMs);
  const gpus = [...new Set(recent.map((s) => (s as { gpu: number }).gpu))].sort((a, b) => a - b);
  d.addAll(samples);
  const growth = d.findings().filter((f) => (f.kind === 'leak' || f.kind === 'rank0_growth') && f.host === req.host);
  // No GPU named: the one with a creep, else the one holding the most now.
  const gpu = req.gpu ?? growth[0]?.gpu ?? busiest(recent as { gpu: number; gpuUsedMiB: number; ts: string | number }[]);
  if (!gpus.includes(gpu))
    return reply({
      title,
      severity: 'info',
      sections: [{ text: t(loc, 'chart.noGpuSamples', { gpu, host: req.host, hours: req.hours, gpus: gpus.join(', ') }) }],
    });
  const data = gpuSeries(recent, req.host, gpu, fromMs, nowMs)!;
  const finding = growth.find((f) => f.gpu === gpu);
  const spec = gpuChartSpec(data, { ...style, theme: req.theme ?? style.theme, hours: req.hours, finding });
  const usedNow = data.total.at(-1)?.[1];
  const peak = data.total.reduce((m, p) => Math.max(m, p[1] ?? 0), 0);
  // The text names the processes the chart draws; the rest are counted.
  const { shown, others } = boundedProcesses(data.processes, MAX_PROCESS_LINES, finding?.pid);
  const listed = shown.map(processLabel).join(', ') + (others ? t(loc, 'chart.andOthers', { n: others.count }) : '');
  const lines = [
    t(loc, 'chart.summary', {
      gpu,
      host: req.host,
      hours: req.hours,
      zone: style.timeZone,
      processes: t(loc, data.processes.length === 1 ? 'chart.processes.one' : 'chart.processes', { n: data.processes.length }),
      list: data.processes.length ? ` (${listed})` : '',
      used:
        usedNow != null
          ? t(loc, 'chart.usedNow', {
              used: sizeText(usedNow),
              of: data.capacityMiB ? t(loc, 'chart.of', { total: sizeText(data.capacityMiB) }) : '',
              peak: sizeText(peak),
            })
          : '',
    }),
    finding
      ? t(loc, 'chart.grows', {
          user: finding.user ?? '?',
          pid: String(finding.pid),
          rate: finding.slopeMiBPerHour,
          full: finding.hoursToFull !== null ? t(loc, 'owner.full', { when: formatHours(finding.hoursToFull) }) : '',
        })
      : t(loc, 'chart.noCreep'),
  ];
  if (req.gpu === undefined && gpus.length > 1) lines.push(t(loc, 'chart.otherGpus', { gpus: gpus.filter((g) => g !== gpu).join(', '), host: req.host }));
  return {
    reply: {
      title: t(loc, 'chart.titleGpu', { host: req.host, gpu, hours: req.hours }),
      severity: finding ? 'warning' : 'info',
      sections: [{ text: lines.join('\n') }],
    },
    chart: { spec, filename: `${safe(req.host)}-gpu${gpu}-${req.hours}h.png` },
  };
}

/** `/gpu chart HOST all`: a panel per GPU (memory used, capacity, utilisation) and each GPU's reading now in the text. */
function hostChartPlan(recent: Sample[], req: ChartRequest, style: ChartStyle, fromMs: number, nowMs: number): ChartPlan {
  const loc = req.locale;
  const { panels, gpus } = hostPanels(recent, req.host, fromMs, nowMs, style);
  const now = panels.map(panelHeading).join('\n');
  const lines = [t(loc, 'chart.hostSummary', { host: req.host, hours: req.hours, zone: style.timeZone, gpus: gpus.join(', ') }), now];
  const left = gpus.slice(MAX_HOST_PANELS);
  if (left.length) lines.push(t(loc, 'chart.hostNotDrawn', { gpus: left.join(', '), max: MAX_HOST_PANELS, host: req.host }));
  const spec: HostChartSpec = {
    kind: 'host',
    title: `${req.host} · GPUs ${panels.map((p) => p.gpu).join(', ')} (last ${req.hours} h)`,
    timeZone: style.timeZone,
    fromMs,
    toMs: nowMs,
    panels,
    theme: req.theme ?? style.theme,
  };
  return {
    reply: { title: t(loc, 'chart.titleHost', { host: req.host, hours: req.hours }), severity: 'info', sections: [{ text: lines.join('\n') }] },
    chart: { spec, filename: `${safe(req.host)}-gpus-${req.hours}h.png` },
  };
}

/** `/gpu chart` drawn in this process (the README's pictures, tests); the bot draws in a child process (chart-render.ts). */
export function gpuChartReply(...args: Parameters<typeof gpuChartPlan>): Reply {
  const { reply: text, chart } = gpuChartPlan(...args);
  return chart ? { ...text, files: [png(chart.filename, drawAnyChart(chart.spec).png)] } : text;
}

function busiest(samples: { gpu: number; gpuUsedMiB: number; ts: string | number }[]): number {
  const latest = new Map<number, number>();
  for (const s of samples) latest.set(s.gpu, s.gpuUsedMiB);
  return [...latest].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
}
