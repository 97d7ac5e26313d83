// Early alert: a process whose GPU memory rises steadily and would fill its card within hours (config
// `watch.early_alert_hours`, default 1) is reported after minutes of samples, not at the next digest
// (the detector waits for 1.5 h of growth after 20 min of warm-up; a 7.5 GiB/h leak fills a card first).
//
// The same principles as the detector (growth.ts), on the samples of the last hour at their own times:
//   - the floor (median-of-3 of the samples, then the level memory never goes below again), so a
//     validation peak or a workspace that comes back down never raises it, and one stray dip never
//     lowers it;
//   - the caching allocator's steps are steps: a step over 4x the run's typical step (a validation
//     pass's activations, a dynamic-shape record) is taken out of the rate, a rise of fewer than
//     minSteps steps is a step change, and no step may hold half the rise;
//   - steady: the later half of the rise at least half the earlier's rate (warm-up and a job that
//     levels off decelerate; one slowing by less whose geometric remainder fits the card never fills it),
//     the earlier half not flat (then the rise began later: a later start is tried), the last quarter
//     still rising;
//   - at least minMinutes of it; its rate is the Theil–Sen slope of the floor.
// Time to full counts the headroom a recurring peak needs: memory the process reached in the last hour
// above where it is now will be needed again (the next validation pass).
import type { ChatPlatform } from '../core/platform.js';
import { creepPattern, type CreepPattern } from './creep-shape.js';
import type { Growth } from './growth.js';
import { Windows, toMs } from './series.js';
import { downsampleMax, median, theilSen } from './stats.js';
import { DEFAULT_OPTIONS, WATCH_RULES, isProcessSample, type Finding, type Sample } from './types.js';
import { digestReply, formatHours, type DigestPeople, type ReportedState } from './digest.js';
import { channelLocale, recipientLocale, t, type Locale } from '../core/i18n.js';
import type { Reply } from '../core/reply.js';
import type { PostTarget } from '../core/services.js';
import type { OwnersService } from '../owners/directory.js';
import type { RuleBase } from '../diagnose/rule-base.js';

const MIN = 60_000;
const HOUR = 3_600_000;
/** As the stores: two polls' estimates of one process's start (poll time - etimes) within this are one process. */
const START_SLACK_MS = 30_000;

export interface EarlyAlertOptions {
  /** Report when the card would be full within this many hours at the current rate (`watch.early_alert_hours`). */
  withinHours: number;
  /** The rise must have lasted this long (and as many minutes of samples must be at hand). */
  minMinutes: number;
  /** Samples further back than this are not kept nor read. */
  lookbackMinutes: number;
  /** Memory right after a process starts (context, weights, optimizer state) is not a rise. */
  warmupMinutes: number;
  /** A rise of fewer steps than this is a step change, not a ramp. */
  minSteps: number;
  /** A rise smaller than this is what a caching allocator reserves and gives back on its own (a segment set). */
  minRiseMiB: number;
}

export const DEFAULT_EARLY_OPTIONS: EarlyAlertOptions = {
  withinHours: 1,
  minMinutes: 8,
  lookbackMinutes: 60,
  warmupMinutes: 3,
  minSteps: 4,
  minRiseMiB: 256,
};

/** One process's recent samples on one GPU, oldest first, and its card now. */
export interface RecentProcess {
  processStartMs: number;
  times: readonly number[];
  mib: readonly number[];
  gpuTotalMiB: number;
  /** The whole card's used memory (every process on it) at the latest sample. */
  gpuUsedMiB: number;
}

export interface EarlyVerdict {
  alert: boolean;
  /** Why (not), for tests and logs: 'rising', 'too short', 'flat', 'too few steps', 'one step dominates', ... */
  reason: string;
  /** Theil–Sen slope of the floor over the rise (0 where no steady rise was found). */
  slopeMiBPerHour: number;
  /** Headroom / slope; null when not rising steadily. */
  hoursToFull: number | null;
  /** Minutes the rise has lasted. */
  riseMinutes: number;
  riseMiB: number;
  steps: number;
  pattern: CreepPattern;
  /** Per-sample peaks of the lookback, downsampled, for a sparkline. */
  series: number[];
}

const quiet = (reason: string, series: number[] = [], extra: Partial<EarlyVerdict> = {}): EarlyVerdict => ({
  alert: false,
  reason,
  slopeMiBPerHour: 0,
  hoursToFull: null,
  riseMinutes: 0,
  riseMiB: 0,
  steps: 0,
  pattern: 'steady',
  series,
  ...extra,
});

/** Is this process rising steadily toward a full card within `withinHours`? Pure: the samples decide. */
export function earlyCheck(p: RecentProcess, options: Partial<EarlyAlertOptions> = {}): EarlyVerdict {
  const o = { ...DEFAULT_EARLY_OPTIONS, ...options };
  const n = Math.min(p.times.length, p.mib.length);
  if (n === 0) return quiet('too short');
  const nowMs = p.times[n - 1];
  const from = lowerBound(p.times, Math.max(nowMs - o.lookbackMinutes * MIN, p.processStartMs + o.warmupMinutes * MIN), n);
  // The sparkline only where a rise is reported on: most checks end at the gate below.
  const series = () => downsampleMax(p.mib.slice(lowerBound(p.times, nowMs - o.lookbackMinutes * MIN, n), n));
  if (n - from < 6 || p.times[n - 1] - p.times[from] < o.minMinutes * MIN - 1) return quiet('too short');
  // Cheap gate first (a fleet's worth of processes is checked after every round, most of them flat): the
  // floor cannot rise more than the last two samples' higher stands above the lowest.
  let lowest = Infinity;
  for (let i = from; i < n; i++) if (p.mib[i] < lowest) lowest = p.mib[i];
  if (Math.max(p.mib[n - 1], p.mib[n - 2]) - lowest < o.minRiseMiB) return quiet('flat');
  const f = floorOf(p.times, p.mib, from, n);
  if (!f) return quiet('too short');
  const { t, E, noise } = f;
  const m = E.length;
  const minH = o.minMinutes / 60;
  // The polls' spacing as observed (the configured interval is what the sampler aims at, not what it got).
  const spacing = new Float64Array(m - 1);
  for (let i = 1; i < m; i++) spacing[i - 1] = t[i] - t[i - 1];
  const intervalH = median(spacing);
  if (E[m - 1] - E[0] < o.minRiseMiB) return quiet('flat');

  // Headroom: the card's free memory, less what a peak of the last hour above the present level will take again.
  let peak = -Infinity;
  for (let i = from; i < n; i++) if (p.mib[i] > peak) peak = p.mib[i];
  const headroom = Math.max(0, p.gpuTotalMiB - p.gpuUsedMiB - Math.max(0, peak - p.mib[n - 1]));
  // A steady rise of at least minMinutes is no steeper than the floor's whole rise over minMinutes (twice
  // that, for the estimator): if even that fills the headroom later than the horizon, nothing here will.
  if ((2 * (E[m - 1] - E[0]) * o.withinHours) / minH < headroom) return quiet('not full within the horizon');

  const stepMin = Math.max(1, noise);
  let reason = '';
  // Longest steady suffix of at least minMinutes first, as growth.ts: a rise that began later is tried from later starts.
  for (let k = 0; t[m - 1] - t[k] >= minH - 1e-9; k++) {
    // The rise starts where the floor starts to rise: a flat stretch before it would tilt its slope.
    if (!(E[k + 1] > E[k])) continue;
    const pos: number[] = [];
    const size: number[] = [];
    let carry = 0;
    for (let i = k + 1; i < m; i++) {
      carry += E[i] - E[i - 1];
      if (carry >= stepMin) {
        pos.push(i);
        size.push(carry);
        carry = 0;
      }
    }
    if (pos.length < o.minSteps) {
      reason ||= 'too few steps';
      continue;
    }
    // The steps themselves span the minimum (one interval short at most): a short rise and then flat samples is not enough.
    if (t[pos[pos.length - 1]] - t[pos[0]] < minH - intervalH - 1e-9) {
      reason ||= 'rise too short';
      continue;
    }
    const sorted = [...size].sort((a, b) => a - b);
    const p75 = sorted[Math.floor(0.75 * (sorted.length - 1))];
    const outlier = (j: number) => size[j] > 4 * p75;
    // The rise starts at a typical step, not at a one-off record.
    if (outlier(0)) {
      reason ||= 'starts at a one-off step';
      continue;
    }
    const kept = size.filter((_, j) => !outlier(j));
    if (kept.length < o.minSteps) {
      reason ||= 'too few steps';
      continue;
    }
    // The floor with one-off steps taken out: the ramp underneath, which went on by a typical step meanwhile.
    const typical = median(kept);
    const Ek = new Float64Array(m - k);
    let removed = 0;
    for (let i = k, j = 0; i < m; i++) {
      for (; j < pos.length && pos[j] <= i; j++) if (outlier(j)) removed += size[j] - typical;
      Ek[i - k] = E[i] - removed;
    }
    const len = Ek.length;
    const rise = Ek[len - 1] - Ek[0];
    if (rise < Math.max(o.minRiseMiB, 3 * noise)) {
      reason ||= 'rise too small';
      continue;
    }
    if (Math.max(...kept) > 0.5 * rise) {
      reason ||= 'one step dominates';
      continue;
    }
    // Rates of the halves by time (samples jitter and gaps leave them unequal in length).
    const tMid = (t[k] + t[m - 1]) / 2;
    let mid = k + 1;
    while (mid < m - 2 && t[mid + 1] <= tMid) mid++;
    const rateA = (Ek[mid - k] - Ek[0]) / (t[mid] - t[k]);
    const rateB = (Ek[len - 1] - Ek[mid - k]) / (t[m - 1] - t[mid]);
    if (rateB < 0.5 * rateA) {
      reason ||= 'levelling off';
      continue;
    }
    if (rateA < 0.4 * rateB) {
      reason ||= 'flat start';
      continue;
    }
    // Still rising: the last quarter (two samples at least) at 30% of the average rate or more; a rise that stopped is not one.
    const tail = Math.max((t[m - 1] - t[k]) / 4, 2 * intervalH);
    let q = m - 1;
    while (q > k && t[q - 1] >= t[m - 1] - tail - 1e-9) q--;
    if (Ek[len - 1] - Ek[q - k] < (0.3 * rise * (t[m - 1] - t[q])) / (t[m - 1] - t[k])) {
      reason ||= 'stopped rising';
      continue;
    }
    const slope = theilSen(t.subarray(k), Ek);
    if (!(slope > 0)) {
      reason ||= 'not rising';
      continue;
    }
    const hoursToFull = headroom / slope;
    // Slowing down (the later half at 50-85% of the earlier's rate): a cache filling toward its size. Slowing
    // by the same ratio r every half, what is left to come is one half's rise * r / (1 - r); below the headroom it never fills.
    const r = rateB / rateA;
    const levelsBelowFull = r < 0.85 && (rateB * ((t[m - 1] - t[k]) / 2) * r) / (1 - r) < headroom;
    const g: Growth = {
      growing: true,
      reason: 'creep',
      slopeMiBPerHour: slope,
      onsetMs: t[k] * HOUR,
      steps: kept.length,
      riseMiB: rise,
      totalRiseMiB: E[m - 1] - E[0],
    };
    const w = windowsOf(p.times, p.mib, from, n, intervalH * HOUR);
    const verdict = {
      slopeMiBPerHour: slope,
      hoursToFull,
      riseMinutes: (t[m - 1] - t[k]) * 60,
      riseMiB: rise,
      steps: kept.length,
      pattern: creepPattern(w, p.processStartMs, g, p.mib[n - 1], { warmupMinutes: o.warmupMinutes, windowMinutes: intervalH * 60 }),
    };
    // The longest steady rise decides: a shorter one would only be a noisier estimate of the same slope.
    if (levelsBelowFull) return quiet('levels off below full', series(), { ...verdict, hoursToFull: null });
    if (hoursToFull > o.withinHours) return quiet('not full within the horizon', series(), verdict);
    return { alert: true, reason: 'rising', series: series(), ...verdict };
  }
  return quiet(reason || 'too short');
}

/**
 * The floor of samples [from, to) as growth.ts's floorEnvelope makes it of windows, on the samples at
 * their own times (a window per poll would misplace polls that jitter across window edges): median of
 * 3 (one sample's dip or peak is not a level), then the level memory never goes below again. Times in hours.
 */
function floorOf(times: readonly number[], mib: readonly number[], from: number, to: number): { t: Float64Array; E: Float64Array; noise: number } | null {
  const m = to - from;
  if (m < 6) return null;
  const low = new Float64Array(m);
  for (let i = 1; i < m - 1; i++) low[i] = med3(mib[from + i - 1], mib[from + i], mib[from + i + 1]);
  // The last sample has one neighbour: a dip there must not become the floor of everything before it.
  // The first is taken as it is (nothing comes before it; a dip there is a one-off step into the rise).
  low[0] = mib[from];
  low[m - 1] = Math.max(mib[to - 1], mib[to - 2]);
  const E = new Float64Array(m);
  const t = new Float64Array(m);
  let run = Infinity;
  for (let i = m - 1; i >= 0; i--) {
    run = Math.min(run, low[i]);
    E[i] = run;
    t[i] = times[from + i] / HOUR;
  }
  const diffs = new Float64Array(m - 1);
  for (let i = 1; i < m; i++) diffs[i - 1] = Math.abs(low[i] - low[i - 1]);
  return { t, E, noise: median(diffs) };
}

/** The samples as per-poll windows, for creep-shape.ts's pattern (releases above the floor, step sizes). */
function windowsOf(times: readonly number[], mib: readonly number[], from: number, to: number, wMs: number): Windows {
  const w = new Windows(to - from + 2, to - from);
  for (let i = from; i < to; i++) w.add(Math.floor(times[i] / wMs), mib[i]);
  return w;
}

function med3(a: number, b: number, c: number): number {
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}

/** First index in times[0..n) at or after ms (times ascending). */
function lowerBound(times: readonly number[], ms: number, n: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// ---- the live state: recent samples per process, and which processes were already reported ----

interface Track {
  key: string;
  host: string;
  gpu: number;
  pid: number;
  user: string;
  command: string;
  processStartMs: number;
  firstMs: number;
  times: number[];
  mib: number[];
  gpuTotalMiB: number;
  gpuUsedMiB: number;
}

/** A process found rising: the finding the digest's reply and fix are made from, and what the watch saw of it. */
export interface EarlyAlert {
  /** host|gpu|pid|start (s): reported once per process. */
  key: string;
  finding: Finding;
  verdict: EarlyVerdict;
  /** Minutes this process has been sampled (up to the lookback). */
  sampledMinutes: number;
}

/**
 * Recent samples of every process the sampler sees, fed by each round (bounded: the lookback, and
 * processes not seen for that long are dropped), and the check of the processes a round just sampled.
 * In memory: after a restart a process needs minMinutes of samples again before it can be reported.
 */
export class EarlyWatch {
  readonly options: EarlyAlertOptions;
  private tracks = new Map<string, Track>();
  /** host|gpu|pid -> key of its current track (a start within START_SLACK_MS is the same process). */
  private byPid = new Map<string, string>();
  private touched = new Set<string>();
  /** Keys alerted by this process: not checked again (the persistent record is the caller's). */
  private alerted = new Set<string>();

  constructor(options: Partial<EarlyAlertOptions> = {}) {
    this.options = { ...DEFAULT_EARLY_OPTIONS, ...options };
  }

  get size(): number {
    return this.tracks.size;
  }

  add(samples: Iterable<Sample>): void {
    for (const s of samples) {
      if (!isProcessSample(s) || s.processMiB === null || s.processMiB === undefined) continue;
      const ms = toMs(s.ts);
      const start = toMs(s.processStart);
      if (!Number.isFinite(ms) || !Number.isFinite(start)) continue;
      const pidKey = `${s.host}|${s.gpu}|${s.pid}`;
      let tr = this.tracks.get(this.byPid.get(pidKey) ?? '');
      if (!tr || Math.abs(tr.processStartMs - start) > START_SLACK_MS) {
        if (tr) this.drop(tr.key);
        const key = `${pidKey}|${Math.floor(start / 1000)}`;
        tr = {
          key,
          host: s.host,
          gpu: s.gpu,
          pid: s.pid,
          user: s.user,
          command: s.command,
          processStartMs: start,
          firstMs: ms,
          times: [],
          mib: [],
          gpuTotalMiB: s.gpuTotalMiB,
          gpuUsedMiB: s.gpuUsedMiB,
        };
        this.tracks.set(key, tr);
        this.byPid.set(pidKey, key);
      }
      const last = tr.times.length ? tr.times[tr.times.length - 1] : -Infinity;
      if (ms <= last) continue; // a repeated or late sample: the series stays in time order
      tr.times.push(ms);
      tr.mib.push(s.processMiB);
      tr.gpuTotalMiB = s.gpuTotalMiB;
      tr.gpuUsedMiB = s.gpuUsedMiB;
      // Bounded: samples older than the lookback go.
      const keepFrom = ms - this.options.lookbackMinutes * MIN;
      let cut = 0;
      while (cut < tr.times.length && tr.times[cut] < keepFrom) cut++;
      if (cut) {
        tr.times.splice(0, cut);
        tr.mib.splice(0, cut);
      }
      this.touched.add(tr.key);
    }
  }

  private drop(key: string): void {
    const tr = this.tracks.get(key);
    if (!tr) return;
    this.tracks.delete(key);
    this.touched.delete(key);
    this.alerted.delete(key);
    const pidKey = `${tr.host}|${tr.gpu}|${tr.pid}`;
    if (this.byPid.get(pidKey) === key) this.byPid.delete(pidKey);
  }

  /** The processes sampled since the last check that are rising toward a full card, not yet alerted here. */
  check(nowMs: number): EarlyAlert[] {
    const keys = [...this.touched];
    this.touched.clear();
    const out = this.checkKeys(keys);
    this.dropIdle(nowMs);
    return byUrgency(out);
  }

  /**
   * The same in slices of `slice` processes with a yield to the event loop between them: after a fleet's
   * round (thousands of processes, ~10 µs each where flat, more where a rise is analysed) no chat reply waits on it.
   */
  async checkYielding(nowMs: number, slice = 256): Promise<EarlyAlert[]> {
    const keys = [...this.touched];
    this.touched.clear();
    const out: EarlyAlert[] = [];
    for (let i = 0; i < keys.length; i += slice) {
      if (i) await new Promise((r) => setImmediate(r));
      out.push(...this.checkKeys(keys.slice(i, i + slice)));
    }
    this.dropIdle(nowMs);
    return byUrgency(out);
  }

  private checkKeys(keys: readonly string[]): EarlyAlert[] {
    const out: EarlyAlert[] = [];
    for (const key of keys) {
      const tr = this.tracks.get(key);
      if (!tr || this.alerted.has(key)) continue;
      const v = earlyCheck(tr, this.options);
      if (v.alert) out.push({ key, finding: findingOf(tr, v), verdict: v, sampledMinutes: (tr.times[tr.times.length - 1] - tr.firstMs) / MIN });
    }
    return out;
  }

  /** Processes not seen for the lookback have exited (or their host is gone). */
  private dropIdle(nowMs: number): void {
    for (const [key, tr] of this.tracks)
      if (tr.times.length === 0 || tr.times[tr.times.length - 1] < nowMs - this.options.lookbackMinutes * MIN) this.drop(key);
  }

  /** Recorded as reported (here; the caller keeps the persistent record): never alerted again by this watch. */
  markAlerted(key: string): void {
    if (this.tracks.has(key)) this.alerted.add(key);
  }
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** Soonest full first. */
const byUrgency = (alerts: EarlyAlert[]): EarlyAlert[] => alerts.sort((a, b) => (a.finding.hoursToFull ?? Infinity) - (b.finding.hoursToFull ?? Infinity));

/** The finding the digest's table, detail and fix are made from (kind leak: the same knowledge rule). */
function findingOf(tr: Track, v: EarlyVerdict): Finding {
  const current = tr.mib[tr.mib.length - 1];
  return {
    kind: 'leak',
    host: tr.host,
    gpu: tr.gpu,
    pid: tr.pid,
    user: tr.user,
    command: tr.command,
    slopeMiBPerHour: round1(v.slopeMiBPerHour),
    hoursToFull: v.hoursToFull === null ? null : Math.round(v.hoursToFull * 100) / 100,
    currentMiB: current,
    totalMiB: tr.gpuTotalMiB,
    series: v.series,
    rule: WATCH_RULES.leak,
    // Full within the horizon: as urgent as the detector's growth gets.
    severity: 100,
    since: new Date(tr.times[tr.times.length - 1] - v.riseMinutes * MIN).toISOString(),
    runs: 1,
    pattern: v.pattern,
    detail: t('en', 'early.why', { rise: Math.round(v.riseMiB), minutes: Math.round(v.riseMinutes), steps: v.steps }),
    why: { key: 'early.why', vars: { rise: Math.round(v.riseMiB), minutes: Math.round(v.riseMinutes), steps: v.steps } },
  };
}

/** Key of an early alert in the reported-state record (kept apart from the digest's finding keys). */
export const earlyReportedKey = (key: string): string => `early|${key}`;

/**
 * The post for one early alert, in `loc`: the digest's own table row (sparkline, current / total, full
 * in), detail and fix by shape, headed by the slope, the time to full and how long the watch has looked.
 */
export function earlyAlertReply(a: EarlyAlert, rules: RuleBase | undefined, people: DigestPeople, loc: Locale | undefined, withinHours: number): Reply {
  const f = a.finding;
  const when = formatHours(f.hoursToFull);
  const r = digestReply([f], { hosts: 1, processes: 1 }, rules, t(loc, 'early.title', { host: f.host, gpu: f.gpu ?? '?', when }), undefined, people, loc);
  r.severity = 'error';
  r.sections[0] = {
    text: t(loc, 'early.text', {
      pid: f.pid ?? '?',
      host: f.host,
      gpu: f.gpu ?? '?',
      rate: round1(f.slopeMiBPerHour / 1024),
      when,
      sampled: minutesText(a.sampledMinutes),
      rise: minutesText(a.verdict.riseMinutes),
      hours: withinHours,
    }),
  };
  r.footer = t(loc, 'early.footer');
  return r;
}

/**
 * `/gpu watch`'s line: how long the host has been sampled (firstMs: its first sample at hand) and when
 * each kind of finding becomes possible: the early alert after minMinutes of a rise, the digest's
 * growth findings after the detector's warm-up and minimum growth (src/watch/types.ts).
 */
export function coverageLine(firstMs: number | null, nowMs: number, early: Pick<EarlyAlertOptions, 'minMinutes' | 'withinHours'>, loc?: Locale): string {
  if (firstMs === null) return t(loc, 'early.coverage.none', { min: early.minMinutes });
  const sampled = Math.max(0, (nowMs - firstMs) / MIN);
  const digestNeeds = DEFAULT_OPTIONS.warmupMinutes + DEFAULT_OPTIONS.minDurationHours * 60;
  const possible = (needs: number) => (sampled >= needs ? t(loc, 'early.coverage.now') : t(loc, 'early.coverage.in', { min: Math.ceil(needs - sampled) }));
  return t(loc, 'early.coverage', {
    sampled: minutesText(sampled),
    hours: early.withinHours,
    early: possible(early.minMinutes),
    earlyMin: early.minMinutes,
    digest: possible(digestNeeds),
    digestMin: digestNeeds,
  });
}

function minutesText(min: number): string {
  return min < 90 ? `${Math.round(min)} min` : `${round1(min / 60)} h`;
}

// ---- posting: once per process, to every watch channel (and its owner where the channel asked for owner messages) ----

/** Where the watch posts: its digests' channels (watch.digests), each with its own reported-state record. */
export interface EarlyChannel {
  name: string;
  platform: ChatPlatform;
  channel: string;
  dm_owners?: boolean;
}

/** The watch's reported-state record (the SQLite store answers at once, Postgres with a promise). */
export interface EarlyReportedStore {
  reported(name: string): Map<string, ReportedState> | Promise<Map<string, ReportedState>>;
  saveReported(name: string, update: Map<string, ReportedState>): void | Promise<void>;
}

export interface EarlyPostDeps {
  channels: readonly EarlyChannel[];
  post: (target: PostTarget, reply: Reply) => Promise<void>;
  reported: EarlyReportedStore;
  rules?: RuleBase;
  owners?: Pick<OwnersService, 'lookup'>;
  withinHours: number;
  onError?: (e: unknown) => void;
}

/**
 * Posts each alert not yet reported to a channel there, and to its owner where that channel has
 * `dm_owners`. Recorded as reported before it is posted (as the digests do): a crash or a failed post
 * never leads to a second one. One owner message per process, however many channels ask for them.
 * Returns how many posts went out.
 */
export async function postEarlyAlerts(alerts: readonly EarlyAlert[], deps: EarlyPostDeps, now: number): Promise<number> {
  if (!alerts.length) return 0;
  const onError = deps.onError ?? (() => {});
  const messaged = new Set<string>();
  let sent = 0;
  for (const ch of deps.channels) {
    try {
      const reported = await deps.reported.reported(ch.name);
      const fresh = alerts.filter((a) => !reported.has(earlyReportedKey(a.key)));
      if (!fresh.length) continue;
      await deps.reported.saveReported(
        ch.name,
        new Map(
          fresh.map((a) => [earlyReportedKey(a.key), { slopeMiBPerHour: a.finding.slopeMiBPerHour, hoursToFull: a.finding.hoursToFull, reportedAt: now }]),
        ),
      );
      const link = ch.dm_owners === true;
      for (const a of fresh) {
        try {
          // In the channel's language; owners named (a mention that may notify only where the channel opted in to owner messages).
          await deps.post(
            { platform: ch.platform, channel: ch.channel, name: `early alert to ${ch.name}` },
            earlyAlertReply(a, deps.rules, { owners: deps.owners, link }, channelLocale(ch.channel), deps.withinHours),
          );
          sent++;
        } catch (e) {
          onError(e);
        }
        if (!link || !deps.owners || !a.finding.user) continue;
        const owner = deps.owners.lookup(a.finding.host, a.finding.user);
        const to = owner ? (ch.platform === 'console' ? owner.unixUser : owner[ch.platform]) : undefined;
        if (!owner || !to || messaged.has(`${ch.platform}|${to}|${a.key}`)) continue;
        messaged.add(`${ch.platform}|${to}|${a.key}`);
        try {
          await deps.post(
            { platform: ch.platform, channel: to, name: `early alert owner message from ${ch.name}`, kind: 'dm' },
            earlyAlertReply(a, deps.rules, { owners: { lookup: () => owner } }, recipientLocale(ch.platform, to), deps.withinHours),
          );
          sent++;
        } catch (e) {
          onError(e);
        }
      }
    } catch (e) {
      onError(e);
    }
  }
  return sent;
}
