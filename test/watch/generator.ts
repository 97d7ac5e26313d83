// Seeded generator of labelled GPU / host memory traces, modelling what nvidia-smi shows of PyTorch's
// caching allocator: reserved memory (not allocated) plus the CUDA context, so
//   - warm-up is a few steps in the first minutes (context, weights, optimizer state, cuDNN workspaces);
//   - validation either keeps its peak cached (one step, then flat) or, with torch.cuda.empty_cache(),
//     saw-tooths back down, and the sampler sometimes catches the dip right after empty_cache;
//   - a leak only shows when a new block must be reserved: 2 MiB blocks (small tensors), 20 MiB
//     segments (1-10 MiB tensors) or tensor-sized segments, so creep is a staircase, and freed cached
//     memory ("slack") can swallow it for hours first;
//   - dynamic shapes ratchet the reserve up at rarer and smaller records, then stop.
// Traces are stored compactly (one JSON line per trace, column arrays) and expanded to samples.
import type { FindingKind, ProcessSample, Sample } from '../../src/watch/types.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const GiB = 1024 ** 3;

/** mulberry32: tiny, fast, good enough for test data, and identical on every platform. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface TrainSpec {
  startMs: number;
  /** Level after warm-up. */
  baseMiB: number;
  validation?: { everyMin: number; durMin: number; peakMiB: number; emptyCache: boolean; dipProb?: number; dipMiB?: number };
  /** One-off rises of the reserve (dynamic shapes, fragmentation): minutes after start, MiB. */
  ratchet?: [atMin: number, addMiB: number][];
  leak?: { slopeMiBPerHour: number; startMs: number; blockMiB: number; slackMiB?: number; stopMs?: number };
  /** Symmetric noise (non-PyTorch allocators, other reporting), MiB. */
  jitterMiB?: number;
  /** One-sample transient allocations (workspaces): probability per sample, max MiB. */
  blip?: [prob: number, maxMiB: number];
  /** From here on the process holds its memory at 0% utilisation (finished notebook, hung job). */
  idleFromMs?: number;
}

export interface ProcModel {
  gpu: number;
  pid: number;
  user: string;
  command: string;
  startMs: number;
  /** Sampled while fromMs <= t < toMs (toMs: the process exits). */
  toMs: number;
  mib(t: number): number;
  util(t: number): number;
}

/** A training process as nvidia-smi sees it. Must be called in time order (draws from rnd). */
export function trainingProcess(p: { gpu: number; pid: number; user: string; command: string; toMs: number }, s: TrainSpec, rnd: () => number): ProcModel {
  const context = 500 + Math.floor(rnd() * 100);
  const warm = [0.5, 1.5, 3, 6].map((m, i) => [s.startMs + m * MIN * (0.5 + rnd()), [0.3, 0.7, 0.9, 1][i]] as const);
  const phase = s.leak ? rnd() * s.leak.blockMiB : 0;
  // Leak rate wobbles +-30% over a few hours (batch mix, epochs): a leak is not a perfect line.
  const wobbleH = 2 + rnd() * 4;
  const dipSeed = Math.floor(rnd() * 1e9);
  const v = s.validation;
  const valAt = (t: number) => {
    if (!v || t < s.startMs + v.everyMin * MIN) return { k: -1, inVal: false, justEnded: false };
    const since = t - s.startMs;
    const k = Math.floor(since / (v.everyMin * MIN));
    const into = since - k * v.everyMin * MIN;
    return { k, inVal: into < v.durMin * MIN, justEnded: into >= v.durMin * MIN && into < v.durMin * MIN + MIN };
  };
  const level = (t: number): number => {
    let m = context;
    for (const [at, f] of warm) if (t >= at) m = context + f * (s.baseMiB - context);
    for (const [at, add] of s.ratchet ?? []) if (t >= s.startMs + at * MIN) m += add;
    const l = s.leak;
    if (l && t > l.startMs) {
      const h = (Math.min(t, l.stopMs ?? t) - l.startMs) / HOUR;
      const leaked = l.slopeMiBPerHour * (h + ((0.3 * wobbleH) / (2 * Math.PI)) * (1 - Math.cos((2 * Math.PI * h) / wobbleH)));
      const visible = Math.max(0, leaked - (l.slackMiB ?? 0));
      m += l.blockMiB * Math.floor((visible + phase) / l.blockMiB);
    }
    return m;
  };
  return {
    ...p,
    startMs: s.startMs,
    mib(t) {
      let m = level(t);
      const val = valAt(t);
      if (v && val.k >= 0) {
        if (!v.emptyCache)
          m += v.peakMiB; // the first validation's peak stays reserved
        else if (val.inVal) m += v.peakMiB;
        else if (val.justEnded && hash01(dipSeed, val.k) < (v.dipProb ?? 0)) m -= v.dipMiB ?? 0;
      }
      if (s.jitterMiB) m += Math.round((rnd() * 2 - 1) * s.jitterMiB);
      if (s.blip && rnd() < s.blip[0]) m += Math.round(rnd() * s.blip[1]);
      return Math.round(m);
    },
    util(t) {
      if (s.idleFromMs !== undefined && t >= s.idleFromMs) return 0;
      if (valAt(t).inVal) return 55 + Math.floor(rnd() * 30);
      return rnd() < 0.01 ? 0 : 90 + Math.floor(rnd() * 11); // the odd DataLoader stall reads 0%
    },
  };
}

/** A process holding memory without computing (a notebook kernel that loaded a model). */
export function idleProcess(p: Omit<ProcModel, 'mib' | 'util'>, heldMiB: number): ProcModel {
  return { ...p, mib: () => heldMiB, util: () => 0 };
}

function hash01(seed: number, k: number): number {
  let h = Math.imul(seed ^ Math.imul(k + 1, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

export interface LeakLabel {
  kind: 'leak' | 'rank0_growth';
  gpu: number;
  /** Set where another process on the same GPU grew too (an earlier run of a restarted job). */
  pid?: number;
  slopeMiBPerHour: number;
  /** When the leaked memory started to accumulate. */
  start: string;
  /** When nvidia-smi can first show it (after cached slack is used up); start when absent. */
  visibleFrom?: string;
  /** Allocator granularity the creep shows in. */
  stepMiB: number;
}

export interface TraceLabel {
  id: string;
  description: string;
  /** Finding kinds the detector should report on the whole trace (empty: nothing). */
  expected: FindingKind[];
  leak?: LeakLabel;
  /** Leaks under minSlopeMiBPerHour: reporting them is optional. */
  belowThreshold?: boolean;
}

export interface LabelledTrace extends TraceLabel {
  samples: Sample[];
}

export interface TraceSetup {
  host: string;
  t0: number;
  hours: number;
  gpuTotalMiB: number;
  procs: ProcModel[];
  /** Collector outages: [fromHour, toHour). */
  gaps?: [number, number][];
  /** Host RAM: used bytes at t (total fixed). */
  hostRam?: { totalBytes: number; usedBytes: (t: number) => number };
  /** Also emit GPU-level samples for these GPUs (hosts whose GPUs have no processes). */
  gpuLevel?: number[];
}

/** Samples every 60 s (+-2 s of collector jitter), GPU used = sum of its processes + driver reserve. */
export function buildSamples(setup: TraceSetup, rnd: () => number): Sample[] {
  const out: Sample[] = [];
  const n = Math.floor((setup.hours * HOUR) / MIN);
  for (let i = 0; i <= n; i++) {
    const t = setup.t0 + i * MIN + Math.round(rnd() * 4 - 2) * 1000; // whole seconds, as stored
    const h = (t - setup.t0) / HOUR;
    if (setup.gaps?.some(([a, b]) => h >= a && h < b)) continue;
    const ts = new Date(t).toISOString();
    const live = setup.procs.filter((p) => t >= p.startMs && t < p.toMs);
    const mem = live.map((p) => p.mib(t));
    const util = live.map((p) => p.util(t));
    const gpus = new Set([...live.map((p) => p.gpu), ...(setup.gpuLevel ?? [])]);
    const used = new Map<number, number>();
    const gutil = new Map<number, number>();
    for (const g of gpus) used.set(g, 350);
    live.forEach((p, j) => {
      used.set(p.gpu, used.get(p.gpu)! + mem[j]);
      gutil.set(p.gpu, Math.max(gutil.get(p.gpu) ?? 0, util[j])); // utilisation is GPU-wide
    });
    for (const g of setup.gpuLevel ?? [])
      out.push({ ts, host: setup.host, gpu: g, gpuTotalMiB: setup.gpuTotalMiB, gpuUsedMiB: used.get(g)!, utilizationPct: 0 });
    live.forEach((p, j) => {
      const s: ProcessSample = {
        ts,
        host: setup.host,
        gpu: p.gpu,
        gpuTotalMiB: setup.gpuTotalMiB,
        gpuUsedMiB: Math.min(setup.gpuTotalMiB, used.get(p.gpu)!),
        utilizationPct: gutil.get(p.gpu)!,
        pid: p.pid,
        processStart: new Date(p.startMs).toISOString(),
        user: p.user,
        command: p.command,
        processMiB: mem[j],
      };
      out.push(s);
    });
    if (setup.hostRam) {
      const { totalBytes } = setup.hostRam;
      const usedB = Math.min(totalBytes, setup.hostRam.usedBytes(t));
      out.push({ ts, host: setup.host, kind: 'host', memTotalBytes: totalBytes, memAvailableBytes: Math.round(totalBytes - usedB) });
    }
  }
  return out;
}

/** Host RAM used: a base, a linear creep and page-cache churn (mean-reverting walk, ~1.5 GiB). */
export function hostRamModel(rnd: () => number, t0: number, baseGiB: number, creepGiBPerHour: number): (t: number) => number {
  let churn = 0;
  return (t) => {
    churn = 0.97 * churn + (rnd() * 2 - 1) * 0.5 * GiB;
    return baseGiB * GiB + (creepGiBPerHour * GiB * (t - t0)) / HOUR + churn;
  };
}

// ---- compact storage: one JSON line per trace; each stream's constant fields once, columns as arrays ----

interface StoredStream {
  fixed: Record<string, string | number>;
  t0: string;
  /** Seconds since the previous sample of this stream. */
  dt: number[];
  cols: Record<string, (number | null)[]>;
}

const VARYING = ['gpuUsedMiB', 'utilizationPct', 'processMiB', 'memAvailableBytes'];

export function encodeTrace(trace: LabelledTrace): string {
  const streams = new Map<string, StoredStream & { lastMs: number }>();
  for (const s of trace.samples) {
    const rec = s as unknown as Record<string, string | number | null>;
    const fixed: Record<string, string | number> = {};
    for (const [k, v] of Object.entries(rec)) if (k !== 'ts' && !VARYING.includes(k) && v !== undefined) fixed[k] = v as string | number;
    const key = JSON.stringify(fixed);
    const ms = Date.parse(String(s.ts));
    let st = streams.get(key);
    if (!st) streams.set(key, (st = { fixed, t0: String(s.ts), dt: [], cols: {}, lastMs: ms }));
    st.dt.push(Math.round((ms - st.lastMs) / 1000));
    st.lastMs = ms;
    for (const k of VARYING) if (k in rec) (st.cols[k] ??= []).push(rec[k] as number | null);
  }
  const { samples: _samples, ...label } = trace;
  return JSON.stringify({ ...label, streams: [...streams.values()].map(({ lastMs: _l, ...st }) => st) });
}

export function decodeTrace(line: string): LabelledTrace {
  const { streams, ...label } = JSON.parse(line) as TraceLabel & { streams: StoredStream[] };
  const samples: { ms: number; s: Sample }[] = [];
  for (const st of streams) {
    let ms = Date.parse(st.t0);
    st.dt.forEach((d, i) => {
      ms += d * 1000;
      const s: Record<string, unknown> = { ts: new Date(ms).toISOString(), ...st.fixed };
      for (const [k, col] of Object.entries(st.cols)) s[k] = col[i];
      samples.push({ ms, s: s as unknown as Sample });
    });
  }
  samples.sort((a, b) => a.ms - b.ms); // stable: within one poll, streams keep their order
  return { ...label, samples: samples.map((x) => x.s) };
}
