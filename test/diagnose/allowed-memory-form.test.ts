// PyTorch's allowed-memory OOM form (issue 23, message formats): "Allocation on device N would exceed allowed memory.
// (out of memory)" with one figure a line, its names padded to one column when copied raw ("Requested               :
// 50.62 GiB") and collapsed when a page renders it ("Requested : 62.57 GiB"). Its request and device limit are read in
// both forms, so the one-tensor and absurd-request levers see them, and the absurd-request rule reads this form as a CUDA
// OOM like the others (ComfyUI prints it without the exception's name). Its "Currently allocated" (the cudaMallocAsync
// backend's bytes in use, no reserved figure) is read apart, as this process's only when it is most of the card
// (async-allocator-form.test.ts), so a small lower bound never calls the rest "held outside".
// Real threads (blind6 read split, input10 tuned group) beside synthetic variants written from the format (said so).
import { describe, expect, it } from 'vitest';
import { allowedMemoryMessage } from './allowed-memory-message.js';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const form = (requested: string, limit: string, free: string, pad: boolean, prefix = 'torch.cuda.OutOfMemoryError: ') =>
  allowedMemoryMessage({ allocated: '9.10 GiB', requested, limit, free, pad, prefix });

describe('real threads', () => {
  it('blind6/3807: three padded messages (frames 32, 16, 12): the last request is 80% of the card, one tensor: the input and memory-efficient attention', async () => {
    const d = await firstOfCase('blind6', '3807');
    expect(d?.facts.triedAllocMiB).toBeCloseTo(18.98 * 1024, 0);
    expect(first(d)).toMatch(/^The failed request alone is 18\.98 GiB \/ 23\.68 GiB, 80%[\s\S]*SDPA, xformers/);
  });
  it('input10/5405: 62.57 GiB on a 23.99 GiB limit, no exception name: the absurd-request rule answers', async () => {
    expect((await firstOfCase('input10', '5405'))?.rule).toBe('cuda-oom-absurd-request');
  });
});

describe('the form, padded and collapsed (synthetic variants)', () => {
  it.each([
    ['padded', true],
    ['collapsed', false],
  ])('%s: the request and the limit are read; nothing is called another process', async (_name, pad) => {
    const d = await diagnosePaste(form('14.00 GiB', '23.68 GiB', '1.20 GiB', pad));
    expect(d?.facts.triedAllocMiB).toBe(14 * 1024);
    expect(d?.facts.totalCapacityMiB).toBeCloseTo(23.68 * 1024, 0);
    expect(first(d)).not.toMatch(/Another process/);
    expect(first(d)).toMatch(/^The failed request alone is 14\.00 GiB/);
  });
  it.each([
    ['with the exception name', 'torch.OutOfMemoryError: '],
    ['as ComfyUI prints it', ''],
  ])('an impossible request %s: the absurd-request rule', async (_name, prefix) => {
    const d = await diagnosePaste(form('96.00 GiB', '15.99 GiB', '4.00 GiB', true, prefix));
    expect(d?.rule).toBe('cuda-oom-absurd-request');
    expect(first(d)).toMatch(/A 96\.00 GiB request on a 15\.99 GiB GPU/);
  });
  it('a small request on a full card stays the ordinary OOM', async () => {
    const d = await diagnosePaste(form('20.00 MiB', '11.99 GiB', '0 bytes', true));
    expect(d?.rule).toBe('cuda-oom');
    expect(first(d)).not.toMatch(/failed request alone|not a batch that is a little too big/);
  });
});
