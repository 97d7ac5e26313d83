// Edges of src/watch/growth.ts's creep rules that the hand-made staircases of growth.test.ts leave open
// (issue 22's mutation run: each case here is where a boundary or a statistic decides), on the same
// 10-minute windows: a process started an hour before the first window, seen to the last window's end.
import { describe, expect, it } from 'vitest';
import { analyzeGrowth } from '../../src/watch/growth.js';
import { Windows } from '../../src/watch/series.js';
import { DEFAULT_OPTIONS } from '../../src/watch/types.js';

const W = 10 * 60_000; // DEFAULT_OPTIONS.windowMinutes
const H = 3_600_000;
const FIRST = 6;

/** 60 windows from FIRST at 1000 MiB, raised by each [window, MiB] step from that window on (three samples a window). */
function growth(steps: [number, number][], n = 60) {
  const w = new Windows(1000);
  let level = 1000;
  for (let i = 0; i < n; i++) {
    for (const [at, d] of steps) if (at === i) level += d;
    for (let k = 0; k < 3; k++) w.add(FIRST + i, level);
  }
  return analyzeGrowth(w, 0, (FIRST + n) * W, DEFAULT_OPTIONS);
}

describe('the latest run of steps', () => {
  // maxStepGapHours (4 h) is 24 windows: three steps of 30 MiB an hour apart, then two more after the gap.
  const gapWindows = (DEFAULT_OPTIONS.maxStepGapHours * H) / W;
  const run = (gap: number) =>
    growth([
      [11, 30],
      [17, 30],
      [23, 30],
      [23 + gap, 30],
      [29 + gap, 30],
    ]);

  it('steps exactly maxStepGapHours apart belong to one run', () => {
    expect(gapWindows).toBe(24);
    expect(run(gapWindows)).toMatchObject({ growing: true, reason: 'creep', steps: 5, riseMiB: 150 });
  });

  it('one window further apart, the run before the gap is not part of it: two steps are too few', () => {
    expect(run(gapWindows + 1)).toMatchObject({ growing: false, reason: 'too few steps in the latest run' });
  });
});

describe("one-off records against the run's 75th-percentile step", () => {
  it('a step under 4x the 75th-percentile step is part of the creep, not a record taken out', () => {
    // Steps 10, 45, 10, 30, 10 every hour: sorted 10 10 10 30 45, the 75th percentile is 30, so 45 is no
    // record (45 < 120) and every step counts; a percentile taken one place lower (10) would make 45 one.
    const g = growth([
      [26, 10],
      [32, 45],
      [38, 10],
      [44, 30],
      [50, 10],
    ]);
    expect(g).toMatchObject({ growing: true, steps: 5, riseMiB: 105, totalRiseMiB: 105 });
    expect(g.slopeMiBPerHour).toBeCloseTo(20, 6);
  });

  it("the run's last step counts in its 75th percentile", () => {
    // Steps 10, 45, 10, 10, 20: over all five the 75th percentile is 20 and 45 is no record (45 < 80);
    // without the last step it would be 10, and 45 a record.
    const g = growth([
      [26, 10],
      [32, 45],
      [38, 10],
      [44, 10],
      [50, 20],
    ]);
    expect(g).toMatchObject({ growing: true, steps: 5, riseMiB: 95 });
  });

  it('a step of exactly 4x the 75th-percentile step is no record', () => {
    // Steps 10, 10, 40, 10, 10: the 75th percentile is 10 and 40 is not over 4x it, so it counts (and,
    // at exactly half of the 80 MiB rise, it does not dominate either).
    const g = growth([
      [26, 10],
      [32, 10],
      [38, 40],
      [44, 10],
      [50, 10],
    ]);
    expect(g).toMatchObject({ growing: true, steps: 5, riseMiB: 80 });
  });

  it('a run may start at a step of exactly a quarter of the 75th-percentile step (under it, a jitter-sized wiggle, it may not)', () => {
    // Steps 5, 20, 20, 10, 5: the 75th percentile is 20, so the first 5 MiB step is a quarter of it and starts the run.
    const g = growth([
      [26, 5],
      [32, 20],
      [38, 20],
      [44, 10],
      [50, 5],
    ]);
    expect(g).toMatchObject({ growing: true, steps: 5, riseMiB: 60 });
    // A first step of 4 MiB is under a quarter: the run starts at the next step.
    const under = growth([
      [26, 4],
      [32, 20],
      [38, 20],
      [44, 10],
      [50, 5],
    ]);
    expect(under).toMatchObject({ growing: true, steps: 4, riseMiB: 55 });
  });

  it('a step over 4x the 75th-percentile step is a record: out of the steps and of the rise', () => {
    const g = growth([
      [26, 10],
      [32, 45],
      [38, 10],
      [44, 10],
      [50, 10],
    ]);
    expect(g).toMatchObject({ growing: true, totalRiseMiB: 85 });
    // The creep's rise holds none of the 45 MiB record.
    expect(g.riseMiB).toBeLessThanOrEqual(85 - 45);
  });
});

describe('still growing, and the reason when not', () => {
  // Steps of 20 MiB every hour (6 windows): a step is recent while at most max(2 x 6, 6) + 2 = 14 windows
  // lie after it (the last window is 59).
  const hourly = (last: number) => growth(Array.from({ length: 6 }, (_, k) => [last - 6 * (5 - k), 20] as [number, number]));

  it('the last step exactly twice the step rhythm (plus the unconfirmed windows) ago: still growing; one window more: stopped', () => {
    expect(hourly(45)).toMatchObject({ growing: true, steps: 6, riseMiB: 120 });
    expect(hourly(44)).toMatchObject({ growing: false, reason: 'growth stopped' });
  });

  it("the reason is the longest run's: a run that stopped is 'growth stopped' though its shorter suffixes have too few steps", () => {
    // 10, 10, 100, 10 every 30 min, the last 3 h before the end: over all four the 100 is a record and three
    // steps are left, but they stopped; from the second step on, two steps are left.
    expect(
      growth([
        [30, 10],
        [33, 10],
        [36, 100],
        [39, 10],
      ]),
    ).toMatchObject({ growing: false, reason: 'growth stopped' });
  });
});

describe('how long a creep must have run', () => {
  // Three 20 MiB steps two windows apart: the onset is a window before the first step (half the rhythm);
  // seen up to the end of window 60, a first step in window 52 dates the onset 9 windows (1.5 h) back.
  const late = (first: number) =>
    growth([
      [first, 20],
      [first + 2, 20],
      [first + 4, 20],
    ]);

  it('a run of exactly minDurationHours is reported; one window shorter is too short', () => {
    expect(DEFAULT_OPTIONS.minDurationHours).toBe(1.5);
    expect(late(52)).toMatchObject({ growing: true, steps: 3, riseMiB: 60 });
    expect(late(53)).toMatchObject({ growing: false, reason: 'run too short' });
  });
});

describe('a rise within noise', () => {
  // Three steps two windows apart, seen 1.5 h from the onset: the rate floor is 0.5 x 8.5 MiB/h x 1.5 h = 6.4 MiB,
  // so the 8 MiB floor decides.
  const three = (first: number, sizes: number[]) => growth(sizes.map((mib, k) => [first + 2 * k, mib] as [number, number]));

  it('a rise under 8 MiB is within noise; exactly 8 MiB is not', () => {
    expect(three(52, [2, 2.5, 3])).toMatchObject({ growing: false, reason: 'rise within noise' });
    expect(three(52, [2, 3, 3])).toMatchObject({ growing: true, riseMiB: 8 });
  });

  it('a rise of exactly half the tolerated rate over the run is not within noise (the slope rule decides)', () => {
    // Seen 2 h from the onset: 0.5 x 8.5 MiB/h x 2 h = 8.5 MiB, the rise of 2.5 + 3 + 3.
    expect(0.5 * 0.85 * DEFAULT_OPTIONS.minSlopeMiBPerHour * 2).toBe(8.5);
    expect(three(49, [2.5, 3, 3])).toMatchObject({ growing: false, reason: 'slope below threshold' });
  });
});

describe('growth across a sampling gap', () => {
  it('the rise across a gap is no step that dominates the creep', () => {
    // 10 MiB every 30 min from window 6, with no samples for 5 h (windows 14-43): the floor rises 150 MiB across the gap.
    const w = new Windows(1000);
    for (let i = 0; i < 60; i++) {
      if (i >= 14 && i < 44) continue;
      const level = 1000 + 10 * Math.max(0, Math.floor((i - 6) / 3) + 1);
      for (let k = 0; k < 3; k++) w.add(FIRST + i, level);
    }
    const g = analyzeGrowth(w, 0, (FIRST + 60) * W, DEFAULT_OPTIONS);
    expect(g).toMatchObject({ growing: true, steps: 8, riseMiB: 170 });
    expect(g.slopeMiBPerHour).toBeCloseTo(20, 6);
  });
});

describe('the shape of the run: decelerating or a flat start', () => {
  const steps = (...list: [number, number][]) => growth(list);

  it('a later half rising exactly 30% of the earlier half is not decelerating', () => {
    // 50, 50, 30 MiB three windows apart: 100 MiB in the earlier half, 30 in the later.
    expect(steps([48, 50], [51, 50], [54, 30])).toMatchObject({ growing: true, steps: 3, riseMiB: 130 });
  });

  it('an earlier half rising exactly 40% of the later half is no flat start: the run keeps its first step', () => {
    // 10, 10, 30, 20 MiB two windows apart: 20 MiB in the earlier half, 50 in the later.
    expect(steps([49, 10], [51, 10], [53, 30], [55, 20])).toMatchObject({ growing: true, steps: 4, riseMiB: 70 });
  });

  it("a flat start is the longest run's reason, though a shorter suffix has one step dominating", () => {
    expect(steps([49, 5], [51, 5], [53, 20], [55, 10])).toMatchObject({ growing: false, reason: 'flat start' });
  });
});
