// The floor envelope and the creep rules of src/watch/growth.ts on hand-made staircases of 10-minute
// windows, each expectation worked out by hand from the rule the module's header states.
import { describe, expect, it } from 'vitest';
import { analyzeGrowth, floorEnvelope } from '../../src/watch/growth.js';
import { Windows } from '../../src/watch/series.js';
import { DEFAULT_OPTIONS } from '../../src/watch/types.js';

const W = 10 * 60_000; // DEFAULT_OPTIONS.windowMinutes
const H = 3_600_000;

/** Windows first..first+n-1 with the given level each (three samples per window: its low is the level). */
function windows(levels: number[], first = 0): Windows {
  const w = new Windows(1000);
  levels.forEach((v, i) => {
    for (let k = 0; k < 3; k++) w.add(first + i, v);
  });
  return w;
}
/** A level from `base`, raised by each [window, MiB] step from that window on. */
function stairs(n: number, base: number, steps: [number, number][]): number[] {
  const out: number[] = [];
  let level = base;
  for (let i = 0; i < n; i++) {
    for (const [at, d] of steps) if (at === i) level += d;
    out.push(level);
  }
  return out;
}
const every = (from: number, gap: number, count: number, size: (k: number) => number): [number, number][] =>
  Array.from({ length: count }, (_, k) => [from + k * gap, size(k)]);
/** Growth of a process that started an hour before the first window (warm-up long over), seen up to the last window's end. */
function growth(levels: number[]) {
  const first = 6;
  return analyzeGrowth(windows(levels, first), 0, (first + levels.length) * W, DEFAULT_OPTIONS);
}

describe('floorEnvelope', () => {
  it('skips warm-up windows, filters lows by median of 3 (edges: max with the neighbour), takes the suffix minimum', () => {
    // Process starts at 0; warm-up 20 min: windows 0 and 1 are warm-up.
    const levels = [100, 200, 1000, 1000, 5000, 1000, 1020, 900, 1020, 1040, 1040, 1060];
    const f = floorEnvelope(windows(levels), 0, DEFAULT_OPTIONS)!;
    expect(f.from).toBe(2);
    // raw after warm-up: 1000 1000 5000 1000 1020 900 1020 1040 1040 1060
    // median of 3 inside, edges max(self, neighbour): the 5000 peak and the 900 dip are gone.
    expect(Array.from(f.low)).toEqual([1000, 1000, 1000, 1020, 1000, 1020, 1020, 1040, 1040, 1060]);
    // Suffix minimum: the level memory never goes below again.
    expect(Array.from(f.E)).toEqual([1000, 1000, 1000, 1000, 1000, 1020, 1020, 1040, 1040, 1060]);
    // Window centres in hours.
    expect(Array.from(f.t)).toEqual(levels.slice(2).map((_, i) => ((i + 2 + 0.5) * W) / H));
    // The last two windows are not confirmed yet.
    expect(f.end).toBe(levels.length - 2 - 2);
    // Noise: median |change| of the filtered lows: 0 0 20 20 20 0 20 0 20 -> 20.
    expect(f.noise).toBe(20);
  });

  it('a dip in the first or last window does not become the floor of everything', () => {
    const f = floorEnvelope(windows([500, 1000, 1000, 1000, 1000, 1000, 1000, 400]), -H, DEFAULT_OPTIONS)!;
    expect(f.from).toBe(0);
    expect(f.low[0]).toBe(1000);
    expect(f.low[7]).toBe(1000);
    expect(Array.from(f.E)).toEqual(Array(8).fill(1000));
  });

  it('a window with fewer than 3 samples keeps its minimum; with 3 or more, one stray low sample is ignored', () => {
    const w = windows([1000, 1000, 1000, 1000, 1000, 1000]);
    w.add(2, 10); // a fourth sample, an empty_cache dip
    w.add(3, 10);
    w.add(3, 20); // two low samples: the second-lowest is low
    expect(Array.from(floorEnvelope(w, -H, DEFAULT_OPTIONS)!.low)).toEqual([1000, 1000, 1000, 1000, 1000, 1000]);
  });

  it('fewer than 6 windows after warm-up is too short', () => {
    expect(floorEnvelope(windows([1, 2, 3, 4, 5, 6, 7]), 0, DEFAULT_OPTIONS)).toBeNull();
    expect(floorEnvelope(windows([1, 2, 3, 4, 5, 6, 7, 8]), 0, DEFAULT_OPTIONS)).not.toBeNull();
    expect(analyzeGrowth(windows([1, 2, 3, 4, 5]), -H, 5 * W, DEFAULT_OPTIONS)).toMatchObject({ growing: false, reason: 'too short' });
  });
});

describe('analyzeGrowth', () => {
  it('a creep of 10 MiB every 30 min: 20 MiB/h, every step counted, onset within a step of the first', () => {
    const g = growth(
      stairs(
        60,
        1000,
        every(6, 3, 17, () => 10),
      ),
    );
    expect(g).toMatchObject({ growing: true, reason: 'creep', steps: 17, riseMiB: 170, totalRiseMiB: 170 });
    expect(g.slopeMiBPerHour).toBeCloseTo(20, 6);
    // First step in window 6 + 6 (the offset of these windows): the onset is within a window of it.
    expect(Math.abs(g.onsetMs - 12 * W)).toBeLessThanOrEqual(W);
  });

  it('not growing, with the reason', () => {
    const reasons = {
      flat: stairs(60, 1000, []),
      'too few steps': stairs(60, 1000, [[20, 100]]),
      // 8 steps in the first 4 h, then flat for 5 h
      'growth stopped': stairs(
        60,
        1000,
        every(3, 3, 8, () => 10),
      ),
      // 4 steps in the last hour
      'run too short': stairs(
        60,
        1000,
        every(54, 1, 4, () => 10),
      ),
      // 2 MiB every 30 min for 8.5 h: 34 MiB in all, 4 MiB/h
      'rise within noise': stairs(
        60,
        1000,
        every(6, 3, 17, () => 2),
      ),
      // 10, 35, 10: the middle step is over half the rise
      'one step dominates': stairs(30, 1000, [
        [10, 10],
        [16, 35],
        [22, 10],
      ]),
      // steps every hour, shrinking: a warm-up ratchet
      'decelerating (warm-up ratchet)': stairs(
        60,
        1000,
        every(6, 6, 8, (k) => [40, 30, 24, 18, 6, 3, 2, 1][k]),
      ),
      // 5 MiB an hour for 9 h
      'slope below threshold': stairs(
        60,
        1000,
        every(6, 6, 9, () => 5),
      ),
    };
    for (const [reason, levels] of Object.entries(reasons)) expect(growth(levels), reason).toMatchObject({ growing: false, reason });
    // A rise in the last two windows is not confirmed yet: still flat, and a third step there does not count.
    expect(growth(stairs(60, 1000, [[59, 100]]))).toMatchObject({ reason: 'flat', totalRiseMiB: 0 });
    expect(
      growth(
        stairs(60, 1000, [
          [40, 10],
          [46, 10],
          [58, 10],
        ]),
      ),
    ).toMatchObject({ reason: 'too few steps', totalRiseMiB: 20 });
    // Three steps long ago, more than maxStepGapHours (4 h = 24 windows) before the last two.
    expect(
      growth(
        stairs(60, 1000, [
          [3, 10],
          [6, 10],
          [9, 10],
          [40, 10],
          [46, 10],
        ]),
      ),
    ).toMatchObject({ growing: false, reason: 'too few steps in the latest run' });
    // Three steps, one of them a one-off record (over 4x the typical step): two are left, too few.
    expect(
      growth(
        stairs(40, 1000, [
          [20, 10],
          [26, 100],
          [32, 10],
        ]),
      ),
    ).toMatchObject({ growing: false, reason: 'too few steps' });
    expect(growth(reasons['too few steps']).totalRiseMiB).toBe(100);
    expect(growth(reasons['growth stopped']).totalRiseMiB).toBe(80);
  });

  it("a flat start before the creep is trimmed off: the rate and onset are the creep's own", () => {
    // One 10 MiB step at window 6, 4 h flat, then 12 MiB every 30 min from window 30.
    const g = growth(stairs(60, 1000, [[6, 10], ...every(30, 3, 9, () => 12)]));
    expect(g).toMatchObject({ growing: true, steps: 9, riseMiB: 9 * 12, totalRiseMiB: 10 + 9 * 12 });
    expect(g.slopeMiBPerHour).toBeCloseTo(24, 6);
    expect(Math.abs(g.onsetMs - (30 + 6) * W)).toBeLessThanOrEqual(3 * W);
  });

  it('a one-off record inside a creep is taken out of its rate', () => {
    // 10 MiB every 30 min, and one 200 MiB step (a validation pass that stayed cached) in the middle.
    const g = growth(stairs(60, 1000, [...every(6, 3, 17, () => 10), [28, 200]]));
    expect(g.growing).toBe(true);
    expect(g.slopeMiBPerHour).toBeCloseTo(20, 6);
    expect(g.riseMiB).toBe(170);
    expect(g.totalRiseMiB).toBe(370);
  });

  it('a creep across a sampling gap is measured across it', () => {
    const levels = stairs(
      60,
      1000,
      every(6, 3, 17, () => 10),
    );
    const w = new Windows(1000);
    levels.forEach((v, i) => {
      if (i >= 24 && i < 36) return; // 2 h without samples
      for (let k = 0; k < 3; k++) w.add(6 + i, v);
    });
    const g = analyzeGrowth(w, 0, 66 * W, DEFAULT_OPTIONS);
    expect(g.growing).toBe(true);
    expect(Math.abs(g.slopeMiBPerHour - 20) / 20).toBeLessThan(0.15);
  });
});
