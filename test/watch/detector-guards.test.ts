// Each guard of the leak detector against non-leaks, on generated traces (test/watch/trace-scenarios.ts,
// seeds beyond the evaluated 1-3) where that guard alone decides: without it, a clean trace gets a leak,
// a creep gets a wrong slope, or a creep is reported before it has run long enough to be one.
import { describe, expect, it } from 'vitest';
import { detectLeaks } from '../../src/watch/detector.js';
import { buildSamples, prng, type LabelledTrace } from './generator.js';
import { toMs } from '../../src/watch/series.js';
import { generateTraces, SCENARIOS } from './trace-scenarios.js';
import { DEFAULT_OPTIONS } from '../../src/watch/types.js';

const H = 3_600_000;
const T0 = Date.parse('2026-11-20T08:00:00Z');

/** One scenario's trace as generateTraces(seed) makes it (same stream), without building the other 60. */
function trace(seed: number, id: string): LabelledTrace {
  const { build, ...label } = SCENARIOS.find((s) => s.id === id)!;
  let h = 2166136261; // FNV-1a of the id, as generateTraces seeds each scenario
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  const rnd = prng(seed * 0x10001 + (h >>> 0));
  const { leak, description, ...setup } = build(rnd);
  const samples = buildSamples({ host: `gpu-${id}`, t0: T0, ...setup }, rnd);
  return { ...label, description: description ?? label.description, ...(leak ? { leak } : {}), samples };
}
/** The samples of the first `hours` of a trace (what a digest at that time sees). */
function upTo(t: LabelledTrace, hours: number) {
  const t0 = toMs(t.samples[0].ts);
  return t.samples.filter((s) => toMs(s.ts) <= t0 + hours * H);
}
const growth = (samples: LabelledTrace['samples']) => detectLeaks(samples).filter((f) => f.kind === 'leak' || f.kind === 'rank0_growth');

it('a trace made here is the one generateTraces makes', () => {
  const [a, b] = [trace(2, 'random-clean-5'), generateTraces(2).find((t) => t.id === 'random-clean-5')!];
  expect(a.samples).toEqual(b.samples);
});

describe('guards against non-leaks, each where it alone decides', () => {
  it.each([
    // warm-up skip and the edge windows: the first windows of a process are its warm-up, not a level
    [26, 'random-clean-5', 3],
    // a run of steps long ago, then a gap of more than maxStepGapHours: the latest run decides
    [20, 'random-clean-5', 0],
    // a run must start at a typical step, not at a jitter-sized wiggle before a saw-tooth record
    [4, 'random-clean-9', 6],
    [19, 'random-clean-1', 3],
    // one step (a first validation pass that stays cached) is over half the rise: a record, not a creep
    [4, 'sawtooth-step-jitter', 4],
    [4, 'random-clean-9', 4],
    // records that come rarer and smaller (dynamic shapes settling): decelerating
    [1, 'dynamic-shape-ratchet-8h', 0],
    // steps that stopped a while ago relative to their rhythm: growth stopped
    [1, 'random-clean-6', 0],
  ])('seed %i %s (first %i h, 0 = all): nothing to report', (seed, id, hours) => {
    const t = trace(seed, id);
    expect(t.expected).toEqual([]);
    expect(growth(hours ? upTo(t, hours) : t.samples)).toEqual([]);
  });

  it.each([
    // a flat start before the creep: the later suffix gives the creep's own slope
    [10, 'random-creep-8', 6],
    [15, 'random-creep-1', 6],
    // a previous run of steps before a gap is not part of this creep's rate
    [11, 'random-creep-5', 0],
    [30, 'random-creep-5', 0],
  ])("seed %i %s (first %i h, 0 = all): the creep's slope within 30 percent of the label", (seed, id, hours) => {
    const t = trace(seed, id);
    const [f, ...rest] = growth(hours ? upTo(t, hours) : t.samples);
    expect(rest).toEqual([]);
    expect(f?.gpu).toBe(t.leak!.gpu);
    expect(Math.abs(f.slopeMiBPerHour - t.leak!.slopeMiBPerHour) / t.leak!.slopeMiBPerHour).toBeLessThanOrEqual(0.3);
  });

  it.each([
    [4, 'creep-20-dynamic-shapes'],
    [4, 'creep-200-seg20-step'],
    [4, 'random-creep-2'],
    [4, 'random-creep-3'],
  ])('seed %i %s: not reported before the creep has run minDurationHours', (seed, id) => {
    const t = trace(seed, id);
    const start = Date.parse(t.leak!.start);
    const t0 = toMs(t.samples[0].ts);
    // Every digest (each 10 min) before start + minDurationHours: no growth finding yet.
    for (let at = t0 + H; at < start + DEFAULT_OPTIONS.minDurationHours * H; at += 10 * 60_000) {
      expect(growth(t.samples.filter((s) => toMs(s.ts) <= at)), `at ${new Date(at).toISOString()}`).toEqual([]);
    }
    // ...and found on the whole trace.
    expect(growth(t.samples).map((f) => f.kind)).toEqual([t.leak!.kind]);
  });
});
