// Groups samples into per-process and per-host series, kept as fixed-size window summaries
// (min / second-min / max per 10 minutes) so memory stays bounded however long the stream runs.
//
// - A process series is host + pid + processStart (+ gpu: one process can hold memory on several
//   GPUs, each its own series). A reused pid with a new start time is a new series.
// - The same job restarted (same host, user, command, gpu) is linked to its earlier run.
// - No sample for more than 3x the sampling interval is a gap: recorded, never filled in, so a
//   missing stretch is unknown rather than "memory freed".
import { DEFAULT_OPTIONS, isHostSample, type DetectorOptions, type HostRamSample, type ProcessSample, type Sample, type Timestamp } from './types.js';

const MiB = 1024 * 1024;
const MAX_GAPS_KEPT = 32;

/**
 * Per-window summaries as parallel typed arrays, sorted by idx (about 28 bytes a window: a fleet-wide
 * digest holds ~25k series). Capacity grows by half up to maxWindows; the arrays are read only below
 * `length`. MiB levels are float32: exact for whole MiB up to 16 TiB, and the store writes whole MiB.
 */
export class Windows {
  idx = new Int32Array(0);
  n = new Int32Array(0);
  lo = new Float32Array(0);
  lo2 = new Float32Array(0);
  hi = new Float32Array(0);
  sum = new Float64Array(0);
  length = 0;

  /** capacity: windows to allocate up front, when the caller knows how many will come (no regrowth). */
  constructor(
    private readonly maxWindows: number,
    capacity = 0,
  ) {
    if (capacity > 0) this.grow(Math.min(capacity, maxWindows));
  }

  /** hi of every window, oldest first, as a plain array. */
  hiValues(): number[] {
    return Array.from(this.hi.subarray(0, this.length));
  }

  private grow(to?: number): void {
    const cap = to ?? Math.min(Math.max(this.maxWindows, 1), Math.max(16, Math.ceil(this.idx.length * 1.5)));
    const resize = <T extends Int32Array | Float32Array | Float64Array>(a: T, make: new (n: number) => T): T => {
      const b = new make(cap);
      b.set(a.subarray(0, this.length));
      return b;
    };
    this.idx = resize(this.idx, Int32Array);
    this.n = resize(this.n, Int32Array);
    this.lo = resize(this.lo, Float32Array);
    this.lo2 = resize(this.lo2, Float32Array);
    this.hi = resize(this.hi, Float32Array);
    this.sum = resize(this.sum, Float64Array);
  }

  /** Opens an empty window at position `at` (shifting later ones right), dropping the oldest when full. */
  private open(at: number, wi: number): number {
    if (this.length === this.idx.length && this.length < this.maxWindows) this.grow();
    if (this.length === this.maxWindows) {
      // Full: drop the oldest window (position 0) to make room.
      if (at === 0) return -1; // older than the kept history
      for (const a of [this.idx, this.n, this.lo, this.lo2, this.hi, this.sum]) a.copyWithin(0, 1, this.length);
      this.length--;
      at--;
    }
    for (const a of [this.idx, this.n, this.lo, this.lo2, this.hi, this.sum]) if (at < this.length) a.copyWithin(at + 1, at, this.length);
    this.idx[at] = wi;
    this.n[at] = 0;
    this.lo[at] = Infinity;
    this.lo2[at] = Infinity;
    this.hi[at] = -Infinity;
    this.sum[at] = 0;
    this.length++;
    return at;
  }

  /** Window position for window index wi, creating it if needed (samples may arrive slightly out of order). */
  private slot(wi: number): number {
    const { idx } = this;
    let p = this.length - 1;
    if (p >= 0 && idx[p] === wi) return p;
    if (p < 0 || idx[p] < wi) return this.open(p + 1, wi); // in order (the usual case): append
    while (p >= 0 && idx[p] > wi) p--;
    if (p >= 0 && idx[p] === wi) return p;
    return this.open(p + 1, wi);
  }

  add(wi: number, v: number): void {
    const p = this.slot(wi);
    if (p < 0) return; // older than the kept history
    this.n[p] = this.n[p] + 1;
    this.sum[p] = this.sum[p] + v;
    if (v < this.lo[p]) {
      this.lo2[p] = this.lo[p]!;
      this.lo[p] = v;
    } else if (v < this.lo2[p]) this.lo2[p] = v;
    if (v > this.hi[p]) this.hi[p] = v;
  }

  /**
   * Merges a pre-reduced window (n samples with min lo, second-lowest lo2, max hi, sum) as if its samples
   * had been add()ed: the second-lowest of a union is the second-lowest of the two (lo, lo2) pairs.
   */
  addSummary(wi: number, n: number, lo: number, lo2: number, hi: number, sum: number): void {
    if (n <= 0) return;
    const p = this.slot(wi);
    if (p < 0) return;
    this.n[p] = this.n[p] + n;
    this.sum[p] = this.sum[p] + sum;
    const a = this.lo[p];
    if (lo < a) {
      this.lo2[p] = Math.min(a, lo2);
      this.lo[p] = lo;
    } else this.lo2[p] = Math.min(this.lo2[p], lo);
    if (hi > this.hi[p]) this.hi[p] = hi;
  }

  /** Level of window p robust to one stray low sample (an empty_cache dip caught by the sampler). */
  low(p: number): number {
    return this.n[p] >= 3 ? this.lo2[p] : this.lo[p];
  }

  mean(p: number): number {
    return this.sum[p] / this.n[p];
  }
}

export interface Gap {
  fromMs: number;
  toMs: number;
}

export class ProcessSeries {
  readonly key: string;
  readonly host: string;
  readonly gpu: number;
  readonly pid: number;
  readonly user: string;
  readonly command: string;
  readonly processStartMs: number;
  /** processStart as sampled: matching on it avoids parsing a date per sample. */
  readonly processStartRaw: Timestamp;
  readonly windows: Windows;
  /** Earlier run of the same job (host, user, command, gpu); only one level is kept. */
  previous: ProcessSeries | undefined;
  run = 1;
  firstMs = Infinity;
  lastMs = -Infinity;
  lastMiB = 0;
  readonly gaps: Gap[] = [];
  /** Current stretch of idle-while-holding-memory: start and observed (non-gap) duration. */
  idleSinceMs: number | null = null;
  idleObservedMs = 0;

  /** windows: pre-filled summaries (the store's digest read), else empty. */
  constructor(s: Pick<ProcessSample, 'host' | 'gpu' | 'pid' | 'processStart' | 'user' | 'command'>, startMs: number, maxWindows: number, windows?: Windows) {
    this.key = `${s.host}|${s.gpu}|${s.pid}|${startMs}`;
    this.host = s.host;
    this.gpu = s.gpu;
    this.pid = s.pid;
    this.user = s.user;
    this.command = s.command;
    this.processStartMs = startMs;
    this.processStartRaw = s.processStart;
    this.windows = windows ?? new Windows(maxWindows);
  }

  get jobKey(): string {
    return jobKeyOf(this.host, this.user, this.command, this.gpu);
  }

  add(tMs: number, s: ProcessSample, o: SeriesConfig): void {
    const dt = tMs - this.lastMs;
    if (this.lastMs > -Infinity && dt > o.gapMs) {
      this.gaps.push({ fromMs: this.lastMs, toMs: tMs });
      if (this.gaps.length > MAX_GAPS_KEPT) this.gaps.shift();
    }
    const mib = s.processMiB;
    if (mib !== null && mib !== undefined) {
      this.windows.add(Math.floor(tMs / o.windowMs), mib);
      this.idleStep(tMs, dt, mib, s.utilizationPct, o);
      if (tMs >= this.lastMs) this.lastMiB = mib;
    }
    if (tMs < this.firstMs) this.firstMs = tMs;
    if (tMs > this.lastMs) this.lastMs = tMs;
  }

  /** Idle-while-holding-memory bookkeeping for one sample with a known MiB (dt: since the series' previous sample). */
  idleStep(tMs: number, dt: number, mib: number, utilizationPct: number | null, o: Pick<SeriesConfig, 'gapMs' | 'idleMinMiB' | 'idleMaxUtilPct'>): void {
    const idle = utilizationPct !== null && utilizationPct <= o.idleMaxUtilPct && mib >= o.idleMinMiB;
    if (!idle) this.idleSinceMs = null;
    else if (this.idleSinceMs === null) {
      this.idleSinceMs = tMs;
      this.idleObservedMs = 0;
    } else if (dt > 0 && dt <= o.gapMs) this.idleObservedMs += dt; // gap time is unknown: not counted
  }
}

export class HostSeries {
  readonly windows: Windows;
  totalMiB = 0;
  availableMiB = 0;
  lastMs = -Infinity;
  firstMs = Infinity;

  constructor(
    readonly host: string,
    maxWindows: number,
    windows?: Windows,
  ) {
    this.windows = windows ?? new Windows(maxWindows);
  }

  /** Windows hold used = total - available, in MiB. */
  add(tMs: number, s: HostRamSample, o: SeriesConfig): void {
    const total = s.memTotalBytes / MiB;
    const avail = s.memAvailableBytes / MiB;
    this.windows.add(Math.floor(tMs / o.windowMs), total - avail);
    if (tMs >= this.lastMs) {
      this.lastMs = tMs;
      this.totalMiB = total;
      this.availableMiB = avail;
    }
    if (tMs < this.firstMs) this.firstMs = tMs;
  }
}

export interface GpuState {
  ms: number;
  usedMiB: number;
  totalMiB: number;
}

export interface SeriesConfig {
  windowMs: number;
  gapMs: number;
  maxWindows: number;
  idleMinMiB: number;
  idleMaxUtilPct: number;
}

export const jobKeyOf = (host: string, user: string, command: string, gpu: number): string => `${host}\u0000${user}\u0000${command}\u0000${gpu}`;

/** Everything known about one host; samples of a poll come host by host, so it is looked up once per run. */
export interface HostState {
  host: string;
  /** Latest sample time: what "now" means for this host. */
  lastMs: number;
  /** pid -> series (usually one; more with pid reuse or multi-GPU processes). */
  byPid: Map<number, ProcessSeries[]>;
  /** gpu -> latest GPU-level numbers. */
  gpus: Map<number, GpuState>;
  ram: HostSeries | undefined;
}

export class SeriesIndex {
  readonly hosts = new Map<string, HostState>();
  private readonly jobs = new Map<string, ProcessSeries>();
  readonly config: SeriesConfig;
  private lastTs: Timestamp | undefined;
  private lastTsMs = 0;
  private lastHost: HostState | undefined;

  constructor(options: Partial<DetectorOptions> = {}) {
    const o = { ...DEFAULT_OPTIONS, ...options };
    const windowMs = o.windowMinutes * 60_000;
    this.config = {
      windowMs,
      gapMs: 3 * o.sampleIntervalSec * 1000,
      maxWindows: Math.ceil((o.maxHistoryHours * 3_600_000) / windowMs),
      idleMinMiB: o.idleMinMiB,
      idleMaxUtilPct: o.idleMaxUtilPct,
    };
  }

  /** Samples of one poll share their ts string: parse it once. */
  private ms(ts: Timestamp): number {
    if (ts === this.lastTs) return this.lastTsMs;
    this.lastTs = ts;
    this.lastTsMs = toMs(ts);
    return this.lastTsMs;
  }

  /** The host's state, created on first use (callers feeding pre-reduced summaries create hosts in first-seen order). */
  hostState(host: string): HostState {
    if (this.lastHost?.host === host) return this.lastHost;
    let h = this.hosts.get(host);
    if (!h) this.hosts.set(host, (h = { host, lastMs: -Infinity, byPid: new Map(), gpus: new Map(), ram: undefined }));
    return (this.lastHost = h);
  }

  add(s: Sample): void {
    const t = this.ms(s.ts);
    if (Number.isNaN(t)) return;
    const h = this.hostState(s.host);
    if (t > h.lastMs) h.lastMs = t;
    if (isHostSample(s)) {
      (h.ram ??= new HostSeries(s.host, this.config.maxWindows)).add(t, s, this.config);
      return;
    }
    const g = h.gpus.get(s.gpu);
    if (!g) h.gpus.set(s.gpu, { ms: t, usedMiB: s.gpuUsedMiB, totalMiB: s.gpuTotalMiB });
    else if (t >= g.ms) {
      g.ms = t;
      g.usedMiB = s.gpuUsedMiB;
      g.totalMiB = s.gpuTotalMiB;
    }
    if (s.pid !== undefined) this.processSeries(h, s).add(t, s, this.config);
  }

  addAll(samples: Iterable<Sample>): this {
    for (const s of samples) this.add(s);
    return this;
  }

  /**
   * The series of a process sample (only host, gpu, pid, processStart, user, command are read), created and
   * linked to an earlier run of its job on first use: series must be created in first-seen order.
   */
  processSeries(h: HostState, s: Pick<ProcessSample, 'host' | 'gpu' | 'pid' | 'processStart' | 'user' | 'command'>): ProcessSeries {
    let list = h.byPid.get(s.pid);
    if (!list) h.byPid.set(s.pid, (list = []));
    for (const ps of list) if (ps.gpu === s.gpu && ps.processStartRaw === s.processStart) return ps;
    const startMs = toMs(s.processStart);
    for (const ps of list) if (ps.gpu === s.gpu && ps.processStartMs === startMs) return ps; // same time, other spelling
    const ps = new ProcessSeries(s, startMs, this.config.maxWindows);
    this.adopt(h, ps);
    return ps;
  }

  /** Files a new series under its host and links it to the earlier run of its job (as processSeries does). */
  adopt(h: HostState, ps: ProcessSeries): void {
    let list = h.byPid.get(ps.pid);
    if (!list) h.byPid.set(ps.pid, (list = []));
    list.push(ps);
    const startMs = ps.processStartMs;
    const prev = this.jobs.get(ps.jobKey);
    if (prev && prev.processStartMs < startMs) {
      prev.previous = undefined; // keep one level: memory stays bounded
      ps.previous = prev;
      ps.run = prev.run + 1;
    }
    if (!prev || prev.processStartMs < startMs) this.jobs.set(ps.jobKey, ps);
  }

  *processes(host?: HostState): Iterable<ProcessSeries> {
    for (const h of host ? [host] : this.hosts.values()) for (const list of h.byPid.values()) yield* list;
  }

  /** Drop series not seen since olderThanMs (call now and then when streaming for days). */
  prune(olderThanMs: number): void {
    for (const h of this.hosts.values()) {
      for (const [pid, list] of h.byPid) {
        const kept = list.filter((ps) => ps.lastMs >= olderThanMs);
        if (kept.length) h.byPid.set(pid, kept);
        else h.byPid.delete(pid);
      }
      if (h.ram && h.ram.lastMs < olderThanMs) h.ram = undefined;
    }
    for (const [k, ps] of this.jobs) if (ps.lastMs < olderThanMs) this.jobs.delete(k);
  }
}

/** Epoch ms. The sampler's UTC form YYYY-MM-DDTHH:MM:SS[.sss]Z is read digit by digit: ~4x faster than Date.parse. */
export function toMs(ts: Timestamp): number {
  if (typeof ts === 'number') return ts;
  const n = ts.length;
  if ((n !== 20 && n !== 24) || ts.charCodeAt(n - 1) !== 90 /* Z */ || ts.charCodeAt(10) !== 84 /* T */) return Date.parse(ts);
  let y = digits(ts, 0, 4);
  const mo = digits(ts, 5, 2);
  // Days from the civil date (Howard Hinnant's algorithm), no Date object needed.
  y -= mo <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * ((mo + 9) % 12) + 2) / 5) + digits(ts, 8, 2) - 1;
  const days = era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
  const ms = ((days * 24 + digits(ts, 11, 2)) * 60 + digits(ts, 14, 2)) * 60_000 + digits(ts, 17, 2) * 1000 + (n === 24 ? digits(ts, 20, 3) : 0);
  return Number.isNaN(ms) ? Date.parse(ts) : ms;
}

function digits(s: string, from: number, len: number): number {
  let v = 0;
  for (let j = from; j < from + len; j++) {
    const c = s.charCodeAt(j) - 48;
    if (c < 0 || c > 9) return NaN;
    v = v * 10 + c;
  }
  return v;
}
