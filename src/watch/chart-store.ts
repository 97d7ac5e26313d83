// Charts from the leak watch's store: the digest's chart of a finding and `/gpu chart HOST [GPU] [hours]`.
import type { Reply, ReplyFile } from '../core/reply.js';
import { renderChart, memoryUnit, type ChartTheme } from './chart.js';
import { findingChartSpec, gpuChartSpec, gpuSeries, hostRamSeries, processLabel, type ChartStyle } from './chart-data.js';
import { LeakDetector } from './detector.js';
import { formatHours, type ChartOf } from './digest.js';
import type { WatchStore } from './store.js';
import { isHostSample, type DetectorOptions, type Finding, type Sample } from './types.js';

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

/** The digest's chart of a finding, drawn from the stored samples of its host (and GPU). */
export function findingChartFromStore(store: WatchStore, style: ChartStyle, nowMs = Date.now()): ChartOf {
  return (f) => {
    const { fromMs, toMs } = findingRange(f, nowMs);
    const samples = [...store.samplesSince(fromMs, f.host)];
    const data = f.gpu === undefined ? hostRamSeries(samples, f.host, fromMs, toMs) : gpuSeries(samples, f.host, f.gpu, fromMs, toMs);
    if (!data) return undefined;
    const { png: image } = renderChart(findingChartSpec(f, data, style));
    return png(`${safe(f.host)}-${f.gpu === undefined ? 'ram' : `gpu${f.gpu}`}${f.pid === undefined ? '' : `-${f.pid}`}.png`, image);
  };
}

export interface ChartRequest {
  host: string;
  gpu?: number;
  hours: number;
  theme?: ChartTheme;
}

const sizeText = (mib: number) => (memoryUnit(mib).name === 'GiB' ? `${(mib / 1024).toFixed(1)} GiB` : `${Math.round(mib)} MiB`);

/**
 * `/gpu chart`: one GPU of one host over the last `hours`, with the creep the detector finds on it
 * (over its usual history) drawn as a fit and a shaded window. `knownHosts` (the registry) lets an
 * unknown host be told from a known one without samples.
 */
export function gpuChartReply(
  store: { samplesSince(sinceMs: number, host: string): Iterable<Sample> },
  req: ChartRequest,
  style: ChartStyle,
  detector: Partial<DetectorOptions>,
  knownHosts: string[] | undefined,
  nowMs = Date.now(),
): Reply {
  const title = `Chart ${req.host}`;
  const fromMs = nowMs - req.hours * HOUR;
  const d = new LeakDetector(detector);
  // The detector reads its own history (72 h by default) so the chart's finding is the digest's.
  const historyFrom = Math.min(fromMs, nowMs - d.options.maxHistoryHours * HOUR);
  const samples: Sample[] = [...store.samplesSince(historyFrom, req.host)];
  const recent = samples.filter((s) => !isHostSample(s) && (typeof s.ts === 'number' ? s.ts : Date.parse(s.ts)) >= fromMs);
  if (!recent.length) {
    if (knownHosts && !knownHosts.includes(req.host) && !samples.length)
      return {
        title,
        severity: 'warning',
        sections: [
          {
            text: `Unknown host "${req.host}": it is not registered and the leak watch has no samples of it. Known hosts: ${knownHosts.join(', ') || 'none'}.`,
          },
        ],
      };
    return {
      title,
      severity: 'info',
      sections: [
        {
          text: `No GPU samples for ${req.host} in the last ${req.hours} h${samples.length ? ' (older ones exist: ask for more hours)' : ''}. The leak watch samples each host every poll; check that it is reachable (/gpu status ${req.host}).`,
        },
      ],
    };
  }
  const gpus = [...new Set(recent.map((s) => (s as { gpu: number }).gpu))].sort((a, b) => a - b);
  d.addAll(samples);
  const growth = d.findings().filter((f) => (f.kind === 'leak' || f.kind === 'rank0_growth') && f.host === req.host);
  // No GPU named: the one with a creep, else the one holding the most now.
  const gpu = req.gpu ?? growth[0]?.gpu ?? busiest(recent as { gpu: number; gpuUsedMiB: number; ts: string | number }[]);
  if (!gpus.includes(gpu))
    return {
      title,
      severity: 'info',
      sections: [{ text: `No samples for GPU ${gpu} of ${req.host} in the last ${req.hours} h. GPUs with samples: ${gpus.join(', ')}.` }],
    };
  const data = gpuSeries(recent, req.host, gpu, fromMs, nowMs)!;
  const finding = growth.find((f) => f.gpu === gpu);
  const { png: image } = renderChart(gpuChartSpec(data, { ...style, theme: req.theme ?? style.theme, hours: req.hours, finding }));
  const usedNow = data.total.at(-1)?.[1];
  const peak = Math.max(...data.total.map((p) => p[1] ?? 0));
  const lines = [
    `GPU ${gpu} of ${req.host}, last ${req.hours} h (times in ${style.timeZone}): ${data.processes.length} process${data.processes.length === 1 ? '' : 'es'}` +
      (data.processes.length ? ` (${data.processes.map(processLabel).join(', ')})` : '') +
      (usedNow != null ? `; ${sizeText(usedNow)}${data.capacityMiB ? ` of ${sizeText(data.capacityMiB)}` : ''} used now, peak ${sizeText(peak)}.` : '.'),
    finding
      ? `${finding.user ?? '?'} pid ${finding.pid} grows +${finding.slopeMiBPerHour} MiB/h${finding.hoursToFull !== null ? `, full in ${formatHours(finding.hoursToFull)}` : ''} (dashed: the fitted creep and its forecast; shaded: the growth it is fitted on).`
      : 'No memory creep found on this GPU.',
  ];
  if (req.gpu === undefined && gpus.length > 1)
    lines.push(`Other GPUs with samples: ${gpus.filter((g) => g !== gpu).join(', ')} (/gpu chart ${req.host} GPU).`);
  return {
    title: `Chart ${req.host} · GPU ${gpu} (last ${req.hours} h)`,
    severity: finding ? 'warning' : 'info',
    sections: [{ text: lines.join('\n') }],
    files: [png(`${safe(req.host)}-gpu${gpu}-${req.hours}h.png`, image)],
  };
}

function busiest(samples: { gpu: number; gpuUsedMiB: number; ts: string | number }[]): number {
  const latest = new Map<number, number>();
  for (const s of samples) latest.set(s.gpu, s.gpuUsedMiB);
  return [...latest].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
}
