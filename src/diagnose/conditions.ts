// Conditions a rule or fix can require, computed from the facts. Rules name them in YAML
// (`when: [fragmented]`); keeping the arithmetic here keeps rule files declarative.
import type { Condition } from './rule-types.js';
import type { Facts } from './facts.js';
import type { Readings } from '../readings/types.js';

export interface Evidence {
  facts: Facts;
  readings: Readings;
}

/** Memory PyTorch's allocator holds but has not handed out: what fragmentation wastes. */
export function cachedUnusedMiB(f: Facts): number | undefined {
  if (f.reservedUnallocatedMiB !== undefined) return f.reservedUnallocatedMiB;
  if (f.reservedMiB !== undefined && f.allocatedMiB !== undefined) return Math.max(0, f.reservedMiB - f.allocatedMiB);
  return undefined;
}

/** GPU memory neither free nor held by this process's allocator: other processes (and the CUDA context). */
export function heldElsewhereMiB(f: Facts): number | undefined {
  if (f.totalCapacityMiB === undefined || f.freeMiB === undefined) return undefined;
  const mine = f.reservedMiB ?? (f.allocatedMiB !== undefined ? f.allocatedMiB + (f.reservedUnallocatedMiB ?? 0) : undefined);
  if (mine === undefined) return undefined;
  return Math.max(0, f.totalCapacityMiB - f.freeMiB - mine);
}

const isAbsurd = (f: Facts) =>
  f.triedAllocMiB !== undefined && ((f.totalCapacityMiB !== undefined && f.triedAllocMiB > 2 * f.totalCapacityMiB) || f.triedAllocMiB > 1024 * 1024);

const isFragmented = (f: Facts) => {
  if (isAbsurd(f) || f.triedAllocMiB === undefined) return false;
  const unused = cachedUnusedMiB(f);
  const reserved = f.reservedMiB ?? (f.allocatedMiB ?? 0) + (f.reservedUnallocatedMiB ?? 0);
  // The idle cache must clearly exceed the request, or be most of what PyTorch reserved; when it barely
  // covers the request on a full GPU, the GPU is simply full.
  if (unused !== undefined && unused >= 1.5 * f.triedAllocMiB && unused >= 0.2 * reserved) return true;
  if (unused !== undefined && unused >= f.triedAllocMiB && unused >= 0.5 * reserved) return true;
  // The device reports far more free memory than the request: the allocator cannot use it in one piece.
  return f.freeMiB !== undefined && f.freeMiB >= 4 * f.triedAllocMiB && f.freeMiB >= 512;
};

const seriesGrowth = (f: Facts) => {
  const s = f.memorySeriesMiB;
  if (!s || s.length < 2) return undefined;
  return { first: s[0], last: s[s.length - 1], min: Math.min(...s), max: Math.max(...s) };
};

export const CONDITION_CHECKS: Record<Condition, (e: Evidence) => boolean> = {
  fragmented: ({ facts }) => isFragmented(facts),
  not_fragmented: ({ facts }) => !isFragmented(facts),
  absurd_request: ({ facts }) => isAbsurd(facts),
  not_absurd_request: ({ facts }) => !isAbsurd(facts),
  capacity_contradicts_gpu: ({ facts, readings }) => {
    const named = facts.gpuMemoryMiB ?? readings.gpus.find((g) => g.index === (facts.gpuIndex ?? 0))?.memoryTotalMiB ?? undefined;
    return facts.totalCapacityMiB !== undefined && named !== undefined && named > 0 && Math.abs(facts.totalCapacityMiB - named) / named > 0.15;
  },
  other_process_holds_memory: ({ facts }) => {
    const held = heldElsewhereMiB(facts);
    if (held !== undefined && facts.totalCapacityMiB !== undefined) return held > Math.max(1536, 0.25 * facts.totalCapacityMiB);
    return (facts.otherProcesses?.length ?? 0) > 1;
  },
  autobatch: ({ facts }) => facts.batch === -1 || facts.autobatch !== undefined,
  memory_series_grows: ({ facts }) => {
    const g = seriesGrowth(facts);
    return !!g && g.last - g.first >= Math.max(64, 0.02 * g.first) && g.last >= g.max * 0.98;
  },
  // The last "Caching images" progress line stopped short of 100%: the run died while caching.
  ram_cache_incomplete: ({ facts }) => facts.cacheProgressPct !== undefined && facts.cacheProgressPct < 100,
  memory_series_flat: ({ facts }) => {
    const g = seriesGrowth(facts);
    return !!g && g.max - g.min <= Math.max(16, 0.01 * g.max);
  },
};

export function holds(conditions: Condition[] | undefined, e: Evidence): boolean {
  return (conditions ?? []).every((c) => CONDITION_CHECKS[c](e));
}
