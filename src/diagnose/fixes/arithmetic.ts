// The numbers behind the fixes, as small pure functions with exact tests.

/** A smaller batch that should fit: at most half, less when the OOM message shows a bigger shortfall. */
export function smallerBatch(batch: number, oom: { allocatedMiB?: number; freeMiB?: number; triedAllocMiB?: number }): number {
  if (batch <= 1) return 1;
  let next = Math.floor(batch / 2);
  const { allocatedMiB, freeMiB, triedAllocMiB } = oom;
  if (allocatedMiB !== undefined && freeMiB !== undefined && triedAllocMiB !== undefined && allocatedMiB + triedAllocMiB > 0) {
    // Memory this process could have had, over what the failing step needed; keep 10% headroom.
    const fitting = Math.floor((batch * (allocatedMiB + freeMiB) * 0.9) / (allocatedMiB + triedAllocMiB));
    if (fitting < next) next = fitting;
  }
  return Math.max(1, next);
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

export function fewerWorkers(current: number | undefined, ramGiB: number | undefined): number | undefined {
  const cap = ramGiB !== undefined ? workersForRam(ramGiB) : 4;
  if (current === undefined) return ramGiB !== undefined ? cap : undefined;
  if (current > cap) return cap;
  return Math.max(0, Math.floor(current / 2));
}

// Seed 001: step down through intermediate sizes (1280 -> 1024 -> 800 -> 640), each a multiple of 32.
const IMGSZ_LADDER = [1536, 1280, 1024, 800, 640, 512, 416, 320];

export function smallerImgsz(imgsz: number): number | undefined {
  return IMGSZ_LADDER.find((s) => s < imgsz);
}

/** AutoBatch (batch=-1) aims at 60% of GPU memory; replace it with a fixed power of two under half its pick. */
export function fixedBatchForAutobatch(autobatch: number | undefined): number {
  if (autobatch === undefined || autobatch < 2) return 16;
  return 2 ** Math.floor(Math.log2(autobatch / 2));
}

export function formatMiB(mib: number): string {
  return mib >= 1024 ? `${(mib / 1024).toFixed(2)} GiB` : `${mib.toFixed(mib < 10 ? 2 : 0)} MiB`;
}
