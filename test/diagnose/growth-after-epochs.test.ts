// Reasoning from what a report says about time (issue 12 §3): a card that runs out only after epochs at
// the same settings is growth, not capacity, so the leak fix comes first and the batch stays. Real texts
// in test/fixtures/oom-after-epochs (sources in each file) and logs of the tuned corpus split mixed/.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseAll } from './corpus-case.js';

const here = (rel: string) => resolve(import.meta.dirname, '..', rel);
interface Fix {
  summary: string;
  changes: Record<string, unknown>;
  env?: Record<string, string>;
}
interface D {
  rule: string;
  category: string;
  facts: Record<string, unknown>;
  fixes: Fix[];
}
async function diagnoses(rel: string): Promise<D[]> {
  return await diagnoseAll(here(rel));
}
const shrinks = (d: D) => d.fixes.some((f) => typeof f.changes.batch === 'number');

describe('an OOM reported after several epochs: growth first, the batch stays', () => {
  it.each([
    ['fixtures/oom-after-epochs/wenet-260-after-some-epochs.log', 'After training some epochs'],
    ['fixtures/oom-after-epochs/dlib-370-after-several-epoch.log', 'after several epoch'],
    ['fixtures/oom-after-epochs/cutagi-71-out-of-memory-on-epoch-4.log', 'on epoch number 4'],
  ])('%s', async (rel, phrase) => {
    const [d] = await diagnoses(rel);
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.oomAfterEpochs).toBe(phrase);
    expect(d.fixes[0].summary).toContain(`ran out only later ("${phrase}")`);
    expect(d.fixes[0].summary).toMatch(/\.item\(\)/);
    expect(d.fixes[1].summary).toMatch(/loss\.item\(\)/);
  });

  it('near misses: NaN after 200 epochs, and after 4 epochs in Chinese, are not memory problems', async () => {
    expect(await diagnoses('fixtures/oom-after-epochs/dualstudent-7-nan-after-200-epoch.log')).toEqual([]);
    expect(await diagnoses('fixtures/oom-after-epochs/faster-rcnn-163-nan-after-4-epochs-zh.log')).toEqual([]);
  });

  it('the 21st epoch with a 266 MiB idle cache (tuned mixed/646) is growth, not fragmentation', async () => {
    const [d] = await diagnoses('fixtures/untuned/mixed/646-growing_memory_leak.log');
    expect(d.rule).toBe('cuda-oom');
    expect(d.facts.oomAfterEpochs).toBe('after 21st epoch');
    expect(d.fixes[0].summary).toMatch(/ran out only later/);
    expect(shrinks(d)).toBe(false);
  });

  it('"after 3 epochs" is not enough to call growth (the first validations can be the peak: tuned vision/166)', async () => {
    const [d] = await diagnoses('fixtures/untuned/vision/166-cuda_oom.log');
    expect(d.facts.oomAfterEpochs).toBeUndefined();
  });
});

describe('more ways a log states a GPU OOM, read for their numbers (tuned mixed/)', () => {
  it('PyTorch\'s "would exceed allowed memory" form (ComfyUI, mixed/610): figures from the lines under it, ComfyUI\'s --lowvram first', async () => {
    const [d] = await diagnoses('fixtures/untuned/mixed/610-cuda_oom.log');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts).toMatchObject({ triedAllocMiB: 40, totalCapacityMiB: 8192, freeMiB: 0, tool: 'comfyui' });
    // Its "Currently allocated" (live tensors, no reserved figure) is not what the process holds (allowed-memory-form.test.ts).
    expect(d.facts.allocatedMiB).toBeUndefined();
    expect(d.fixes[0].summary).toMatch(/--lowvram/);
  });

  it('PyTorch\'s figures pasted without "CUDA out of memory" (A1111 hires fix, mixed/626): a CUDA OOM in the web UI', async () => {
    const [d] = await diagnoses('fixtures/untuned/mixed/626-cuda_oom.log');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts).toMatchObject({ triedAllocMiB: 4116.48, tool: 'sd-webui' });
    expect(d.fixes[0].summary).toMatch(/image size/);
  });

  it('"每个GPU显存都要爆了" (mixed/602) is a CUDA OOM, and the LLaMA-Factory batch 4 is lowered', async () => {
    const [d] = await diagnoses('fixtures/untuned/mixed/602-cuda_oom.log');
    expect(d.category).toBe('cuda_oom');
    expect(d.fixes.find((f) => typeof f.changes.batch === 'number')?.changes.batch).toBe(2);
  });

  it('\'I met the error of "out of memory"\' with --batch 8 (mixed/633): a CUDA OOM, batch 8 -> 4', async () => {
    const [d] = await diagnoses('fixtures/untuned/mixed/633-cuda_oom.log');
    expect(d.category).toBe('cuda_oom');
    expect(d.fixes[0].changes.batch).toBe(4);
  });

  it('1.83 GiB reserved but unallocated against an 18 MiB request on a 44.5 GiB card (mixed/604): fragmentation, expandable_segments first', async () => {
    const [d] = await diagnoses('fixtures/untuned/mixed/604-fragmentation.log');
    expect(d.category).toBe('fragmentation');
    expect(d.fixes[0].env).toEqual({ PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' });
  });
});
