// Where a job fits: ranks the GPUs (or sets of `count` GPUs on one host) of the live status readings
// for a job needing `sizeMiB` per GPU. No I/O: the readings, the leak watch's growth rates and the host
// addresses come in, the ranking goes out, so `/gpu fit` and the notify check after each sampler round
// decide the same way.
import type { GpuGrowth, GpuProcessStatus, HostStatusResult } from '../core/services.js';
import { minOf } from '../core/extremes.js';

export interface FitSettings {
  /** Kept free on every GPU on top of the job: at least this many MiB ... */
  marginMiB: number;
  /** ... or this percentage of the card, whichever is larger (allocator slack, CUDA context growth). */
  marginPct: number;
}

export const DEFAULT_FIT_SETTINGS: FitSettings = { marginMiB: 1024, marginPct: 5 };

export interface FitRequest {
  /** GPU memory the job needs on each GPU. */
  sizeMiB: number;
  /** GPUs on one host. */
  count: number;
  /** How long the job runs: neighbours' growth over this long must still leave room. */
  hours: number;
  /** Also offer GPUs where someone else's process runs. */
  shared: boolean;
  /** Unix users whose processes do not make a GPU "someone else's" (the asker, where known). */
  ownUsers?: readonly string[];
}

export type { GpuGrowth };

export interface Holder {
  pid: number;
  /** null: the host's ps does not see the pid (a container's). */
  user: string | null;
  memoryMiB: number | null;
}

export interface FitGpu {
  host: string;
  index: number;
  name: string | null;
  totalMiB: number;
  usedMiB: number;
  freeMiB: number;
  marginMiB: number;
  /** Sum of the growth rates of processes on this GPU (MiB/h), 0 when none is known. */
  growthMiBPerHour: number;
  /** free - margin - growth x hours: what the job can count on for its whole run. */
  usableMiB: number;
  utilizationPct: number | null;
  holders: Holder[];
  /** Someone else's process runs here (a process of an unknown owner counts as someone else's). */
  othersHere: boolean;
}

export interface FitCandidate {
  host: string;
  gpus: FitGpu[];
  /** The smallest usable figure of the set: what each GPU of the job can count on. */
  minUsableMiB: number;
  othersHere: boolean;
  /** `ssh ...` to reach the host, null when it is this machine or its login address is not known (Prometheus). */
  ssh: string | null;
  /** CUDA_VISIBLE_DEVICES=2,3 */
  env: string;
}

export interface FitResult {
  request: FitRequest;
  fits: FitCandidate[];
  /** Sets that fit on GPUs where someone else's process runs (left out without --shared). */
  sharedFits: number;
  /** When nothing fits: the set with the most usable memory (shared ones included), and who holds it. */
  closest: FitCandidate | null;
  /** GPUs and hosts that could not be judged, one line each. */
  skipped: string[];
  /** GPUs whose fit counted a growth rate. */
  growthApplied: number;
}

export function marginFor(totalMiB: number, s: FitSettings): number {
  return Math.max(s.marginMiB, Math.ceil((totalMiB * s.marginPct) / 100));
}

/** The GPUs of the readings with what a job can count on, and the lines saying which could not be judged. */
export function fitGpus(
  results: readonly HostStatusResult[],
  req: FitRequest,
  settings: FitSettings,
  growth: readonly GpuGrowth[],
): { gpus: FitGpu[]; skipped: string[] } {
  const own = new Set(req.ownUsers ?? []);
  const gpus: FitGpu[] = [];
  const skipped: string[] = [];
  for (const r of results) {
    if (!r.ok) {
      skipped.push(`${r.name}: ${r.error}`);
      continue;
    }
    for (const g of r.gpus) {
      if (g.error) {
        skipped.push(`${r.name} GPU ${g.index}: ${g.error}`);
        continue;
      }
      if (g.memoryTotalMiB === null || g.memoryUsedMiB === null || g.memoryTotalMiB <= 0) {
        skipped.push(`${r.name} GPU ${g.index}: memory not reported`);
        continue;
      }
      const procs = r.processes.filter((p) => p.gpuIndex === g.index);
      const pids = new Set(procs.map((p) => p.pid));
      // Only growth of processes still on this GPU: a finding about a job that ended says nothing now.
      const rate = growth
        .filter((x) => x.host === r.name && x.gpu === g.index && x.mibPerHour > 0 && (x.pid === undefined || pids.has(x.pid)))
        .reduce((sum, x) => sum + x.mibPerHour, 0);
      const free = Math.max(0, g.memoryTotalMiB - g.memoryUsedMiB);
      const margin = marginFor(g.memoryTotalMiB, settings);
      gpus.push({
        host: r.name,
        index: g.index,
        name: g.name,
        totalMiB: g.memoryTotalMiB,
        usedMiB: g.memoryUsedMiB,
        freeMiB: free,
        marginMiB: margin,
        growthMiBPerHour: rate,
        usableMiB: Math.floor(free - margin - rate * req.hours),
        utilizationPct: g.utilizationPct,
        holders: procs.map(holder).sort((a, b) => (b.memoryMiB ?? 0) - (a.memoryMiB ?? 0)),
        othersHere: procs.some((p) => p.user === null || !own.has(p.user)),
      });
    }
  }
  return { gpus, skipped };
}

const holder = (p: GpuProcessStatus): Holder => ({ pid: p.pid, user: p.user, memoryMiB: p.memoryMiB });

/** Within a host: GPUs nobody else uses first, then the most usable memory, then the least busy. */
function gpuOrder(a: FitGpu, b: FitGpu): number {
  return Number(a.othersHere) - Number(b.othersHere) || b.usableMiB - a.usableMiB || (a.utilizationPct ?? 100) - (b.utilizationPct ?? 100) || a.index - b.index;
}

function candidateOrder(a: FitCandidate, b: FitCandidate): number {
  return Number(a.othersHere) - Number(b.othersHere) || b.minUsableMiB - a.minUsableMiB || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0);
}

function candidate(host: string, gpus: FitGpu[], ssh: string | null): FitCandidate {
  const indexes = gpus.map((g) => g.index).sort((a, b) => a - b);
  return {
    host,
    gpus,
    minUsableMiB: minOf(gpus.map((g) => g.usableMiB)),
    othersHere: gpus.some((g) => g.othersHere),
    ssh,
    env: `CUDA_VISIBLE_DEVICES=${indexes.join(',')}`,
  };
}

/** Every GPU passing `ok` (count 1), or the best set of `count` of them per host that has that many. */
function bestSets(pool: FitGpu[], count: number, ok: (g: FitGpu) => boolean, sshOf: (host: string) => string | null): FitCandidate[] {
  const byHost = new Map<string, FitGpu[]>();
  for (const g of pool) {
    if (!ok(g)) continue;
    let list = byHost.get(g.host);
    if (!list) byHost.set(g.host, (list = []));
    list.push(g);
  }
  const out: FitCandidate[] = [];
  for (const [host, list] of byHost) {
    if (list.length < count) continue;
    // One GPU: every GPU that fits is a place to go. Several: the host's best set.
    if (count === 1) {
      for (const g of list) out.push(candidate(host, [g], sshOf(host)));
      continue;
    }
    // A job that fits on GPUs nobody else uses goes there; otherwise the ones with the most room.
    out.push(candidate(host, [...list].sort(gpuOrder).slice(0, count), sshOf(host)));
  }
  return out.sort(candidateOrder);
}

/**
 * Ranks where a job fits now, best first: sets of `count` GPUs on one host where every GPU keeps `sizeMiB`
 * usable for `hours` (free - margin - growth x hours), GPUs with someone else's process only with
 * `shared`. Without a fit, `closest` is the set with the most usable memory, whoever holds it.
 */
export function rankFits(
  results: readonly HostStatusResult[],
  req: FitRequest,
  settings: FitSettings = DEFAULT_FIT_SETTINGS,
  growth: readonly GpuGrowth[] = [],
  sshOf: (host: string) => string | null = () => null,
): FitResult {
  const { gpus, skipped } = fitGpus(results, req, settings, growth);
  const fitsSize = (g: FitGpu) => g.usableMiB >= req.sizeMiB;
  const fits = bestSets(gpus, req.count, (g) => fitsSize(g) && (req.shared || !g.othersHere), sshOf);
  const withShared = req.shared ? [] : bestSets(gpus, req.count, fitsSize, sshOf);
  const sharedFits = req.count === 1 ? withShared.filter((c) => c.othersHere).length : withShared.filter((c) => !fits.some((f) => f.host === c.host)).length;
  let closest: FitCandidate | null = null;
  if (!fits.length) {
    // Closest: the most usable memory whoever holds it (ties: fewer GPUs someone else uses).
    const best: FitCandidate[] = [];
    for (const [host, list] of gpusByHost(gpus)) {
      if (list.length < req.count) continue;
      const top = [...list].sort((a, b) => b.usableMiB - a.usableMiB || Number(a.othersHere) - Number(b.othersHere) || a.index - b.index).slice(0, req.count);
      best.push(candidate(host, top, sshOf(host)));
    }
    closest = best.sort((a, b) => b.minUsableMiB - a.minUsableMiB || Number(a.othersHere) - Number(b.othersHere) || (a.host < b.host ? -1 : 1))[0] ?? null;
  }
  return { request: req, fits, sharedFits, closest, skipped, growthApplied: gpus.filter((g) => g.growthMiBPerHour > 0).length };
}

function gpusByHost(gpus: FitGpu[]): Map<string, FitGpu[]> {
  const m = new Map<string, FitGpu[]>();
  for (const g of gpus) {
    const list = m.get(g.host);
    if (list) list.push(g);
    else m.set(g.host, [g]);
  }
  return m;
}

/**
 * `ssh HOST` for a host as the registry lists it (`user@host:port`, the bot's own login), without the
 * bot's user: people log in as themselves. null for the local host (no SSH) and for a host read from
 * Prometheus (`prometheus ...`: its address for logging in is not known).
 */
export function sshHint(target: string): string | null {
  if (target === 'local' || target.startsWith('prometheus ')) return null;
  const at = target.lastIndexOf('@');
  const hostPort = at >= 0 ? target.slice(at + 1) : target;
  const m = /^(.*):(\d{1,5})$/.exec(hostPort);
  const host = m ? m[1] : hostPort;
  const port = m ? Number(m[2]) : 22;
  return port === 22 ? `ssh ${host}` : `ssh -p ${port} ${host}`;
}
