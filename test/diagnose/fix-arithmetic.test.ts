// Edge cases of the fix arithmetic (src/diagnose/fixes/arithmetic.ts), each expectation derived from its
// input by the rule the function documents; the end-to-end numbers on real logs are in fixes-cli.test.ts.
import { describe, expect, it } from 'vitest';
import {
  accumulationFor,
  fewerWorkers,
  fixedBatchForAutobatch,
  formatMiB,
  smallerBatch,
  smallerImgsz,
  workersForRam,
} from '../../src/diagnose/fixes/arithmetic.js';

describe('smallerBatch: at most half, less when the OOM numbers show a bigger shortfall', () => {
  it('halves (rounding down) when the message has no numbers, or only some of them', () => {
    for (const batch of [2, 3, 16, 17, 128]) {
      const half = Math.floor(batch / 2);
      expect(smallerBatch(batch, {})).toBe(half);
      // Each number alone (or two of the three) says nothing about the shortfall.
      expect(smallerBatch(batch, { allocatedMiB: 100, freeMiB: 1 })).toBe(half);
      expect(smallerBatch(batch, { allocatedMiB: 100, triedAllocMiB: 100000 })).toBe(half);
      expect(smallerBatch(batch, { freeMiB: 1, triedAllocMiB: 100000 })).toBe(half);
    }
  });

  it('takes the share of memory that fits, with 10% headroom, when that is below half', () => {
    // 4 GiB allocated + 2 GiB free could hold (4 + 2) / (4 + 8) of what the step needed: batch 32 ->
    // 32 * 6/12 * 0.9 = 14.4 -> 14, below half (16).
    const [allocatedMiB, freeMiB, triedAllocMiB] = [4096, 2048, 8192];
    const share = (allocatedMiB + freeMiB) / (allocatedMiB + triedAllocMiB);
    expect(smallerBatch(32, { allocatedMiB, freeMiB, triedAllocMiB })).toBe(Math.floor(32 * share * 0.9));
    expect(Math.floor(32 * share * 0.9)).toBeLessThan(16);
  });

  it('stays at half when the shortfall is small (the share that fits is above half)', () => {
    // 6 GiB allocated, 12 MiB free, 16 MiB requested: nearly all of it fits, yet the step failed.
    expect(smallerBatch(16, { allocatedMiB: 6267, freeMiB: 12.31, triedAllocMiB: 16 })).toBe(16 / 2);
  });

  it('never goes below 1, even when nothing fits or the numbers are all zero', () => {
    expect(smallerBatch(1, {})).toBe(1);
    expect(smallerBatch(2, { allocatedMiB: 100, freeMiB: 0, triedAllocMiB: 100000 })).toBe(1);
    expect(smallerBatch(8, { allocatedMiB: 0, freeMiB: 0, triedAllocMiB: 0 })).toBe(8 / 2);
    expect(smallerBatch(8, { allocatedMiB: 0, freeMiB: 512, triedAllocMiB: 0 })).toBe(8 / 2);
  });
});

describe('accumulationFor: keeps the effective batch', () => {
  it('is the old effective batch over the new batch, rounded up', () => {
    expect(accumulationFor(16, 8)).toBe(16 / 8);
    expect(accumulationFor(32, 9)).toBe(Math.ceil(32 / 9));
    expect(accumulationFor(16, 8, 4)).toBe((16 * 4) / 8);
    expect(accumulationFor(24, 16, 3)).toBe(Math.ceil((24 * 3) / 16));
  });
  it('is at least 1', () => {
    expect(accumulationFor(8, 8)).toBe(1);
    expect(accumulationFor(0, 8)).toBe(1);
  });
});

describe('workers: seed 002 table, low end of each band', () => {
  it('each band includes its upper edge (16 GB: 2, 32 GB: 4, 64 GB: 8, more: 12)', () => {
    expect([15.3, 20, 20.01, 31, 40, 40.01, 64, 80, 80.01, 256].map(workersForRam)).toEqual([2, 2, 4, 4, 4, 8, 8, 8, 12, 12]);
  });

  it('more workers than the band allows: the band; at or under it: half', () => {
    expect(fewerWorkers(12, 31)).toBe(workersForRam(31));
    expect(fewerWorkers(5, 31)).toBe(workersForRam(31));
    expect(fewerWorkers(4, 31)).toBe(4 / 2); // at the band: halving is what lowers it
    expect(fewerWorkers(3, 31)).toBe(Math.floor(3 / 2));
    expect(fewerWorkers(1, 256)).toBe(0);
  });

  it('RAM unknown: 4 is the cap (the 32 GB band)', () => {
    expect(fewerWorkers(12, undefined)).toBe(4);
    expect(fewerWorkers(5, undefined)).toBe(4);
    expect(fewerWorkers(4, undefined)).toBe(2);
  });

  it('workers unknown: the band for the RAM, or nothing when the RAM is unknown too (never NaN)', () => {
    expect(fewerWorkers(undefined, 15.3)).toBe(workersForRam(15.3));
    expect(fewerWorkers(undefined, 64)).toBe(workersForRam(64));
    expect(fewerWorkers(undefined, undefined)).toBeUndefined();
  });

  it('0 workers cannot be lowered: no number, not "0 -> 0"', () => {
    expect(fewerWorkers(0, 128)).toBeUndefined();
    expect(fewerWorkers(0, undefined)).toBeUndefined();
  });
});

describe('imgsz ladder (seed 001)', () => {
  it('steps to the next rung strictly below, from any size', () => {
    expect(smallerImgsz(2048)).toBe(1536);
    expect(smallerImgsz(1536)).toBe(1280);
    expect(smallerImgsz(1300)).toBe(1280);
    expect(smallerImgsz(1280)).toBe(1024);
    expect(smallerImgsz(640)).toBe(512);
  });
  it('has nothing below the last rung', () => {
    expect(smallerImgsz(320)).toBeUndefined();
    expect(smallerImgsz(100)).toBeUndefined();
  });
});

describe('fixed batch for AutoBatch', () => {
  it('is the largest power of two at most half the pick', () => {
    for (const pick of [2, 3, 4, 5, 31, 32, 133, 256]) {
      const fixed = fixedBatchForAutobatch(pick);
      expect(Math.log2(fixed) % 1).toBe(0);
      expect(fixed).toBeLessThanOrEqual(Math.max(1, pick / 2));
      expect(fixed * 2).toBeGreaterThan(pick / 2);
    }
    expect(fixedBatchForAutobatch(133)).toBe(64);
    expect(fixedBatchForAutobatch(2)).toBe(1);
  });
  it('a pick of 1 stays 1 (a larger fixed batch would not fit either); no pick: the default 16', () => {
    expect(fixedBatchForAutobatch(1)).toBe(1);
    expect(fixedBatchForAutobatch(undefined)).toBe(16);
  });
});

describe('formatMiB', () => {
  it('GiB with two decimals from 1024 MiB on; whole MiB from 10; two decimals under 10', () => {
    expect(formatMiB(1024)).toBe('1.00 GiB');
    expect(formatMiB(12.4 * 1024)).toBe('12.40 GiB');
    expect(formatMiB(1023)).toBe('1023 MiB');
    expect(formatMiB(10)).toBe('10 MiB');
    expect(formatMiB(572.5)).toBe('573 MiB');
    expect(formatMiB(9.5)).toBe('9.50 MiB');
    expect(formatMiB(0)).toBe('0.00 MiB');
  });
});
