// Turns series summaries into findings: GPU memory creep (leak), one rank of a multi-GPU job growing
// while its peers stay flat (rank0_growth), host RAM creep / pressure under DataLoader jobs (host_ram),
// and memory held by an idle process (idle_held). Worst first.
import { analyzeGrowth, type Growth } from './growth.js';
import { creepPattern } from './creep-shape.js';
import { HostSeries, SeriesIndex, type HostState, type ProcessSeries } from './series.js';
import { downsampleMax, theilSen } from './stats.js';
import { DEFAULT_OPTIONS, WATCH_RULES, type DetectorOptions, type Finding, type Sample } from './types.js';
import { t, type MessageKey, type Vars } from '../core/i18n.js';
import { minOf } from '../core/extremes.js';

/** A finding's line of why: in English for the JSON and logs, and as its message for a digest in another language. */
const why = (key: MessageKey, vars: Vars): Pick<Finding, 'detail' | 'why'> => ({ detail: t('en', key, vars), why: { key, vars } });

const HOUR = 3_600_000;
/** Ranks of one job start within this of each other (torchrun / mp.spawn). */
const SAME_JOB_START_MS = 2 * 60_000;

/** Streaming use: add samples as they come, ask for findings whenever a digest is due. */
export class LeakDetector {
  readonly options: DetectorOptions;
  readonly index: SeriesIndex;

  constructor(options: Partial<DetectorOptions> = {}) {
    this.options = { ...DEFAULT_OPTIONS, ...options };
    this.index = new SeriesIndex(this.options);
  }

  add(sample: Sample): void {
    this.index.add(sample);
  }

  addAll(samples: Iterable<Sample>): this {
    this.index.addAll(samples);
    return this;
  }

  findings(): Finding[] {
    return findingsOf(this.index, this.options);
  }
}

export function detectLeaks(samples: Iterable<Sample>, options: Partial<DetectorOptions> = {}): Finding[] {
  return new LeakDetector(options).addAll(samples).findings();
}

export function findingsOf(index: SeriesIndex, o: DetectorOptions): Finding[] {
  const out: Finding[] = [];
  for (const h of index.hosts.values()) {
    const live: { ps: ProcessSeries; g: Growth }[] = [];
    for (const ps of index.processes(h)) {
      if (!o.includeEnded && ps.lastMs < h.lastMs - index.config.gapMs) continue; // exited
      live.push({ ps, g: analyzeGrowth(ps.windows, ps.processStartMs, ps.lastMs, o) });
      const idle = idleFinding(h, ps, o);
      if (idle) out.push(idle);
    }
    const rank0 = asymmetricRanks(live);
    for (const { ps, g } of live) if (g.growing) out.push(growthFinding(h, ps, g, rank0.has(ps) ? 'rank0_growth' : 'leak', o));
    // Host RAM is only reported where DataLoader jobs run (without them it is not a training problem).
    const loaders = live.filter(({ ps }) => o.isDataLoaderJob(ps.command)).map(({ ps }) => ps);
    if (h.ram && loaders.length) {
      const f = hostRamFinding(h.ram, o, loaders);
      if (f) out.push(f);
    }
  }
  return out.sort((a, b) => b.severity - a.severity || b.slopeMiBPerHour - a.slopeMiBPerHour);
}

/**
 * Ranks of one job: the processes linked, directly or through each other, by the same user and the same command
 * or a start within 2 min (a launcher that starts rank after rank 90 s apart still makes one job, and the answer
 * does not depend on which rank is seen first). When only a minority grows while the others' floors stay flat,
 * the growers are rank-asymmetric growth, the pattern of rank 0 accumulating validation / metric state, not a
 * leak every rank shares.
 */
function asymmetricRanks(list: { ps: ProcessSeries; g: Growth }[]): Set<ProcessSeries> {
  const out = new Set<ProcessSeries>();
  for (const job of jobsOf(list)) {
    if (new Set(job.map((b) => b.ps.gpu)).size < 2) continue;
    const growers = job.filter((b) => b.g.growing);
    if (!growers.length || growers.length * 2 > job.length) continue;
    const minGrowth = minOf(growers.map((b) => b.g.riseMiB));
    const peersFlat = job.every((b) => b.g.growing || b.g.totalRiseMiB < 0.25 * minGrowth);
    if (peersFlat) for (const b of growers) out.add(b.ps);
  }
  return out;
}

const sameJob = (a: ProcessSeries, b: ProcessSeries) =>
  a.user === b.user && (a.command === b.command || Math.abs(a.processStartMs - b.processStartMs) <= SAME_JOB_START_MS);

/** The connected groups of `sameJob` (a host's processes: tens at most, so pairwise is fine). */
function jobsOf<T extends { ps: ProcessSeries }>(list: T[]): T[][] {
  const parent = list.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) if (sameJob(list[i].ps, list[j].ps)) parent[root(j)] = root(i);
  const groups = new Map<number, T[]>();
  list.forEach((x, i) => {
    const r = root(i);
    const g = groups.get(r);
    if (g) g.push(x);
    else groups.set(r, [x]);
  });
  return [...groups.values()];
}

/**
 * Severity of growth (leak, rank-0, host RAM creep): 40..100 by hours left, 100 when full now, 70 at
 * 12 h, ~50 at 2.5 days. Idle memory scores 5..40, so waste ranks below anything that will run out.
 */
const urgency = (hoursToFull: number | null): number => (hoursToFull === null ? 40 : 40 + Math.round((60 * 12) / (12 + Math.max(0, hoursToFull))));

function gpuOf(h: HostState, ps: ProcessSeries): { usedMiB: number; totalMiB: number } {
  return h.gpus.get(ps.gpu) ?? { usedMiB: ps.lastMiB, totalMiB: ps.lastMiB };
}

function growthFinding(h: HostState, ps: ProcessSeries, g: Growth, kind: 'leak' | 'rank0_growth', o: DetectorOptions): Finding {
  const gpu = gpuOf(h, ps);
  const pattern = creepPattern(ps.windows, ps.processStartMs, g, ps.lastMiB, o);
  const free = Math.max(0, gpu.totalMiB - gpu.usedMiB);
  const hoursToFull = g.slopeMiBPerHour > 0 ? free / g.slopeMiBPerHour : null;
  const hours = (ps.lastMs - g.onsetMs) / HOUR;
  return {
    kind,
    host: ps.host,
    gpu: ps.gpu,
    pid: ps.pid,
    user: ps.user,
    command: ps.command,
    slopeMiBPerHour: round1(g.slopeMiBPerHour),
    hoursToFull: hoursToFull === null ? null : round1(hoursToFull),
    currentMiB: ps.lastMiB,
    totalMiB: gpu.totalMiB,
    series: downsampleMax(ps.windows.hiValues()),
    rule: WATCH_RULES[kind],
    severity: urgency(hoursToFull),
    since: new Date(g.onsetMs).toISOString(),
    runs: ps.run,
    pattern,
    ...why('finding.growth', { rise: Math.round(g.riseMiB), hours: hours.toFixed(1), steps: g.steps, free: Math.round(free) }),
  };
}

function idleFinding(h: HostState, ps: ProcessSeries, o: DetectorOptions): Finding | null {
  if (ps.idleSinceMs === null || ps.idleObservedMs < o.idleHours * HOUR) return null;
  const gpu = gpuOf(h, ps);
  const hours = ps.idleObservedMs / HOUR;
  const heldGiB = ps.lastMiB / 1024;
  return {
    kind: 'idle_held',
    host: ps.host,
    gpu: ps.gpu,
    pid: ps.pid,
    user: ps.user,
    command: ps.command,
    slopeMiBPerHour: 0,
    hoursToFull: null,
    currentMiB: ps.lastMiB,
    totalMiB: gpu.totalMiB,
    series: downsampleMax(ps.windows.hiValues()),
    rule: WATCH_RULES.idle_held,
    // Waste, not urgency: 5..40, below anything that is running out.
    severity: Math.min(40, Math.round(5 + (heldGiB * hours) / 10)),
    since: new Date(ps.idleSinceMs).toISOString(),
    runs: ps.run,
    ...why('finding.idle', { held: heldGiB.toFixed(1), hours: hours.toFixed(1) }),
  };
}

/** Host RAM: pressure now (available < ramAvailablePct) or sustained creep that runs out soon. */
function hostRamFinding(hs: HostSeries, o: DetectorOptions, loaders: ProcessSeries[]): Finding | null {
  const w = hs.windows;
  if (w.length < 2) return null;
  const total = hs.totalMiB;
  // Pressure must hold over the last two windows, not one spike.
  const availPct = (p: number) => (100 * (total - w.mean(p))) / total;
  const pressure = availPct(w.length - 1) < o.ramAvailablePct && availPct(w.length - 2) < o.ramAvailablePct;

  const wMs = o.windowMinutes * 60_000;
  const tH = Array.from(w.idx.subarray(0, w.length), (i) => ((i + 0.5) * wMs) / HOUR);
  const used = Array.from({ length: w.length }, (_, p) => w.mean(p));
  let slope = 0;
  let creep = false;
  if (w.length >= 12) {
    slope = theilSen(tH, used);
    const mid = w.length >> 1;
    const a = theilSen(tH.slice(0, mid), used.slice(0, mid));
    const b = theilSen(tH.slice(mid), used.slice(mid));
    const hoursLeft = slope > 0 ? hs.availableMiB / slope : Infinity;
    creep = slope >= o.minRamSlopeMiBPerHour && a > 0.3 * slope && b > 0.3 * slope && hoursLeft <= o.ramFullWithinHours;
  }
  if (!pressure && !creep) return null;
  const hoursToFull = slope > 0 ? hs.availableMiB / slope : null;
  const jobs = [...new Set(loaders.map((ps) => `${ps.user}: ${ps.command}`))].slice(0, 3).join('; ');
  return {
    kind: 'host_ram',
    host: hs.host,
    slopeMiBPerHour: round1(Math.max(0, slope)),
    hoursToFull: hoursToFull === null ? null : round1(hoursToFull),
    currentMiB: Math.round(total - hs.availableMiB),
    totalMiB: Math.round(total),
    series: downsampleMax(used.map(Math.round)),
    rule: WATCH_RULES.host_ram,
    severity: pressure ? Math.max(90, urgency(hoursToFull)) : urgency(hoursToFull),
    user: loaders.length === 1 ? loaders[0].user : undefined,
    ...(creep
      ? why('finding.hostRamRising', { pct: ((100 * hs.availableMiB) / total).toFixed(1), rate: Math.round(slope), jobs })
      : why('finding.hostRam', { pct: ((100 * hs.availableMiB) / total).toFixed(1), jobs })),
  };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
