// The last check before samples are stored accepts both forms a Timestamp has (ISO text as sampled,
// epoch milliseconds as the type allows) and refuses what is neither: a numeric time was once refused
// silently, so a store fed epoch milliseconds kept nothing.
import { describe, expect, it } from 'vitest';
import { sampleProblem, storableSamples } from '../../src/watch/sample-ranges.js';
import type { Sample } from '../../src/watch/types.js';

const gpu = (ts: Sample['ts'], gpuUsedMiB = 1000): Sample => ({ ts, host: 'gpu1', gpu: 0, gpuTotalMiB: 81559, gpuUsedMiB, utilizationPct: 50 });
const proc = (ts: Sample['ts'], processStart: Sample['ts']): Sample => ({
  ts,
  host: 'gpu1',
  gpu: 0,
  gpuTotalMiB: 81559,
  gpuUsedMiB: 1000,
  utilizationPct: 50,
  pid: 4242,
  processStart,
  user: 'alice',
  command: 'python train.py',
  processMiB: 900,
});

describe('sampleProblem: times', () => {
  it('stores ISO text and epoch milliseconds alike', () => {
    expect(sampleProblem(gpu('2026-11-28T06:00:00Z'))).toBeNull();
    expect(sampleProblem(gpu(Date.parse('2026-11-28T06:00:00Z')))).toBeNull();
    expect(sampleProblem(proc(1_795_000_000_000, 1_794_990_000_000))).toBeNull();
    expect(sampleProblem(proc('2026-11-28T06:00:00Z', '2026-11-28T05:00:00Z'))).toBeNull();
  });
  it('refuses a time that is neither', () => {
    expect(sampleProblem(gpu('yesterday'))).toMatch(/^ts /);
    expect(sampleProblem(gpu(Number.NaN))).toMatch(/^ts /);
    expect(sampleProblem(gpu(Number.POSITIVE_INFINITY))).toMatch(/^ts /);
    expect(sampleProblem(gpu(-1))).toMatch(/^ts /);
    expect(sampleProblem(proc(1_795_000_000_000, 'never'))).toMatch(/^processStart /);
  });
  it('keeps the good samples of a round and names the host of the bad one', () => {
    const { kept, leftOut } = storableSamples([gpu(1_795_000_000_000), gpu(1_795_000_000_000, 99_999_999_999), gpu('x')]);
    expect(kept).toHaveLength(1);
    expect(leftOut).toEqual([expect.stringMatching(/^gpu1: 2 sample\(s\) out of range left out \(first: GPU 0 gpuUsedMiB 99999999999\)$/)]);
  });
});
