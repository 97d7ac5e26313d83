// Issue 23: PyTorch's caching allocator names a request of 1 EiB or more only as "Tried to allocate more than 1EB
// memory": no card holds it, so it is a garbage or overflowed size (a size read from a failed collective, a negative
// length cast to unsigned), never a batch that is a little too big. Read as its lower bound, it is an absurd request.
// Real logs from llm/ and stacks8/ (tuned groups; URLs in their cases.json) and synthetic variants written from the
// principle (marked "synthetic"). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { formatMiB } from '../../src/diagnose/fixes/arithmetic.js';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('"Tried to allocate more than 1EB" is an absurd request, not a batch to find', () => {
  it.each([
    ['llm', '334', 'seq_len reaching torch.arange'],
    ['stacks8', '3726', 'after an NCCL timeout'],
  ])('real %s/%s (%s)', async (group, n) => {
    const d = await firstOfCase(group, n);
    expect(d?.rule).toBe('cuda-oom-absurd-request');
    expect(first(d)).toMatch(/1\.00 EiB request is not a batch/);
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  // synthetic: the message with and without its exception class, wrapped as torch prints it
  it.each([
    ['bare', 'RuntimeError: CUDA out of memory. Tried to allocate more than 1EB memory.'],
    ['class', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.\n  File "train.py", line 88, in forward'],
    ['rank prefix', '[rank3]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('cuda-oom-absurd-request');
    expect(first(d)).not.toMatch(/\bbatch 1\b|halve/i);
  });

  it('synthetic: sizes past a tebibyte are named in their own unit', () => {
    expect(formatMiB(2 ** 40)).toBe('1.00 EiB');
    expect(formatMiB(3 * 2 ** 30)).toBe('3.00 PiB');
    expect(formatMiB(1.5 * 2 ** 20)).toBe('1.50 TiB');
    expect(formatMiB(2048)).toBe('2.00 GiB');
  });
});
