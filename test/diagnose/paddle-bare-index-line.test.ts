// PaddlePaddle's OOM "Out of memory error on GPU 0. Cannot allocate 92.031494MB memory on GPU 0, available memory is only
// 23.437500MB." (2.0's form, without "memory has been allocated") is often repeated below in prose as the bare
// "Out of memory error on GPU 0.": that line's GPU index alone is no figure, so the message above with the numbers is
// read (facts.ts). Real thread (blind8 read split) beside synthetic variants (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('real thread (blind8)', () => {
  it('5659: the request and what was free are read from the message above the repeated bare line', async () => {
    const d = await firstOfCase('blind8', '5659');
    expect(d?.facts.triedAllocMiB).toBeCloseTo(92.03, 1);
    expect(d?.facts.freeMiB).toBeCloseTo(23.44, 1);
    expect(d?.facts.gpuIndex).toBe(0);
  });
});

describe('synthetic', () => {
  const msg = (gpu: number) => `Out of memory error on GPU ${gpu}. Cannot allocate 1.250000GB memory on GPU ${gpu}, available memory is only 512.000000MB.`;
  it('the bare repeat after the full message: the figures and the index come from the message', async () => {
    const d = await diagnosePaste([msg(1), 'I set FLAGS_allocator_strategy=auto_growth, still:', 'Out of memory error on GPU 1.'].join('\n'));
    expect(d?.facts.triedAllocMiB).toBe(1280);
    expect(d?.facts.freeMiB).toBe(512);
    expect(d?.facts.gpuIndex).toBe(1);
  });
  it('only the bare line: its index is kept', async () => {
    const d = await diagnosePaste('Out of memory error on GPU 2.');
    expect(d?.facts.gpuIndex).toBe(2);
    expect(d?.facts.triedAllocMiB).toBeUndefined();
  });
});
