// When an idle allocator cache is NOT the verdict (issue 23): fragmentation is the first fix only when the run's budget
// fits. expandable_segments (or max_split_size_mb) can at best hand back the cache PyTorch reserved but did not hand
// out; it makes no memory. So before calling an OOM "fragmentation", a reader checks the budget:
//  - the live tensors: when what PyTorch has allocated plus the failed request already take LIVE_FILL of the card,
//    the idle cache is under the rest: placing this request leaves the run at the card's edge, and the next one
//    fails the same way. The card's capacity (what fills it: weights, precision, batch, input) is the lever;
//  - the weights: a model the log sizes whose weights at their precision are the card or more cannot fit however the
//    cache is laid out. Only the weights: full training's gradients and optimizer state are so often sharded (ZeRO-3,
//    FSDP) without the log saying so that the message's own allocated figure, not that estimate, decides there.
//  - the report's own experiment: a smaller input worked and a larger one failed (levers/smaller-input.ts): the input's
//    size decides, whatever the cache's layout; the allocator would at best move the limit a little.
// A cache many times the request (holder.ts largeCache) is the layout's failure whatever the fill: not checked here.
// (Counting the device's free memory as room instead misreads a card shared with a display or another app: the
// room outside PyTorch is not this run's live tensors.)
import { weightsMiB } from '../weights-size.js';
import { cardMiB } from './static-fit.js';
import { smallerInputFirst } from './smaller-input.js';
import type { Incident } from '../incident/index.js';

/** Live tensors plus the request at this share of the card leave too little for any cache layout to matter. */
export const LIVE_FILL = 0.85;

/** Allocated + requested against the card's total, as the OOM message states them. */
export function liveShare(f: Incident): number | undefined {
  const { allocatedMiB: allocated, triedAllocMiB: tried, totalCapacityMiB: total } = f.figures;
  if (allocated === undefined || tried === undefined || total === undefined || total <= 0) return undefined;
  return (allocated + tried) / total;
}

/** The weights the log sizes (per tensor-parallel card, none offloaded) are the card or more. */
export function weightsOverCard(f: Incident): boolean {
  const card = cardMiB(f);
  if (f.model.paramsB === undefined || card === undefined || f.run.paramsOffloaded !== undefined) return false;
  return weightsMiB(f.model.paramsB, f.model.dtype) / (f.stack.vllmTp ?? 1) >= card;
}

/** The budget does not fit whatever the cache's layout: live tensors fill the card, the weights alone exceed it, or the input's size was shown to decide. */
export function capacityBeforeCache(f: Incident): boolean {
  const share = liveShare(f);
  return (share !== undefined && share >= LIVE_FILL) || weightsOverCard(f) || smallerInputFirst(f);
}

/**
 * An idle cache that would cover the request beside a budget that does not fit: capacity is the verdict (holder.ts), and
 * the allocator setting is a later step, once the card has room: it lets the idle cache be reused, it makes no memory.
 */
export function idleCacheBesideFullCard(f: Incident): boolean {
  const { reservedUnallocatedMiB, reservedMiB, allocatedMiB, triedAllocMiB: tried } = f.figures;
  const idle = reservedUnallocatedMiB ?? (reservedMiB !== undefined && allocatedMiB !== undefined ? reservedMiB - allocatedMiB : undefined);
  return idle !== undefined && tried !== undefined && idle >= tried && idle >= 512 && capacityBeforeCache(f);
}

/** The condition rules name (`when: [idle_cache_beside_full_card]`). */
export const CACHE_CAPACITY_CONDITIONS = {
  idle_cache_beside_full_card: ({ incident }: { incident: Incident }) => idleCacheBesideFullCard(incident),
};
