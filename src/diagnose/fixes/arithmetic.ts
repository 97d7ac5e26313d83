// The numbers behind the fixes, as small pure functions with exact tests.

/** A smaller batch that should fit: at most half, less when the OOM message shows a bigger shortfall. */
export function smallerBatch(batch: number, oom: { allocatedMiB?: number; freeMiB?: number; triedAllocMiB?: number }): number {
  const half = Math.floor(batch / 2);
  const { allocatedMiB, freeMiB, triedAllocMiB } = oom;
  if (allocatedMiB === undefined || freeMiB === undefined || triedAllocMiB === undefined || allocatedMiB + triedAllocMiB <= 0) {
    return Math.max(1, half);
  }
  // Memory this process could have had, over what the failing step needed; keep 10% headroom.
  const fitting = Math.floor((batch * (allocatedMiB + freeMiB) * 0.9) / (allocatedMiB + triedAllocMiB));
  return Math.max(1, Math.min(half, fitting));
}

/** Steps of gradient accumulation that keep the effective batch at least what it was. */
export function accumulationFor(oldBatch: number, newBatch: number, oldAccumulate = 1): number {
  return Math.max(1, Math.ceil((oldBatch * oldAccumulate) / newBatch));
}

/** Seed 002's table: host RAM to DataLoader workers (16 GB: 2-4, 32 GB: 4-8, 64 GB+: 8-12); after a kill, take the low end. */
export function workersForRam(ramGiB: number): number {
  if (ramGiB <= 20) return 2;
  if (ramGiB <= 40) return 4;
  if (ramGiB <= 80) return 8;
  return 12;
}

/**
 * Fewer DataLoader workers: the table's value for the host RAM when more run (or the count is not
 * known), else half. Undefined when neither the count nor the RAM is known, or when nothing is left
 * to lower (0 workers): a fix must change something.
 */
export function fewerWorkers(current: number | undefined, ramGiB: number | undefined): number | undefined {
  if (current === undefined) return ramGiB === undefined ? undefined : workersForRam(ramGiB);
  if (current <= 0) return undefined;
  const cap = ramGiB === undefined ? 4 : workersForRam(ramGiB);
  return current > cap ? cap : Math.floor(current / 2);
}

// Seed 001: step down through intermediate sizes (1280 -> 1024 -> 800 -> 640), each a multiple of 32.
const IMGSZ_LADDER = [1536, 1280, 1024, 800, 640, 512, 416, 320];

export function smallerImgsz(imgsz: number): number | undefined {
  return IMGSZ_LADDER.find((s) => s < imgsz);
}

/**
 * AutoBatch (batch=-1) aims at 60% of GPU memory; replace it with a fixed power of two at most half its
 * pick (1 when it picked 1). Without its pick, 16 (Ultralytics' default batch).
 */
export function fixedBatchForAutobatch(autobatch: number | undefined): number {
  if (autobatch === undefined) return 16;
  return 2 ** Math.max(0, Math.floor(Math.log2(autobatch / 2)));
}

export function formatMiB(mib: number): string {
  // Requests past a tebibyte are garbage sizes (PyTorch's "more than 1EB"): named in their own unit, not as 10^9 GiB.
  for (const [unit, size] of [
    ['EiB', 2 ** 40],
    ['PiB', 2 ** 30],
    ['TiB', 2 ** 20],
  ] as const)
    if (mib >= size) return `${(mib / size).toFixed(2)} ${unit}`;
  return mib >= 1024 ? `${(mib / 1024).toFixed(2)} GiB` : `${mib.toFixed(mib < 10 ? 2 : 0)} MiB`;
}
