// Issue 23, routes by stack: PaddlePaddle's allocators (cuda_allocator.cc, cuda_virtual_mem_allocator.cc,
// cuda_managed_allocator.cc, cuda_malloc_async_allocator.cc) print one fixed OOM template: "Out of memory error on GPU
// %d. Cannot allocate %s [CUDA managed ]memory on GPU %d, %s memory has been allocated and available memory is only
// %s." then the hint "Please check whether there is any other process using GPU %d. 1. If yes, please stop them, or
// start PaddlePaddle on another GPU. 2. If no, please decrease the batch size of your model." The figures decide:
// a request of petabytes is an overflowed or garbage size (no batch, no other process), and the hint, printed whatever
// holds the card, is no report of another holder. Real log: blind9/5770 (a read split); the rest is synthetic, written
// from the template in Paddle's source. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { readReportedHolder } from '../../src/diagnose/levers/reported-holder.js';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const HINT = `Please check whether there is any other process using GPU 0.
1. If yes, please stop them, or start PaddlePaddle on another GPU.
2. If no, please decrease the batch size of your model.`;
const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe("PaddlePaddle's OOM template: its figures decide, its hint is no report", () => {
  it('real blind9/5770: a 937 PB request with 7.8 GB free is a garbage size, not another process nor the batch', async () => {
    const d = await firstOfCase('blind9', '5770');
    expect(d?.rule).toBe('cuda-oom-absurd-request');
    expect(first(d)).toMatch(/not a batch that is a little too big/);
    expect(first(d)).not.toMatch(/another process/i);
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  // synthetic: the template's variants across allocators and units (HumanReadableSize prints kB..PB)
  it.each([
    [
      'cuda_allocator, PB',
      'Out of memory error on GPU 0. Cannot allocate 12.500000PB memory on GPU 0, 1.000000GB memory has been allocated and available memory is only 10.000000GB.',
    ],
    ['managed memory, TB', 'Out of memory error on GPU 3. Cannot allocate 512.000000TB CUDA managed memory on GPU 3, 2.000000GB memory has been allocated.'],
    [
      'ResourceExhaustedError wrapper',
      'ResourceExhaustedError: \n\nOut of memory error on GPU 1. Cannot allocate 3.000000EB memory on GPU 1, 0.000000B memory has been allocated and available memory is only 15.500000GB.',
    ],
  ])('synthetic: %s is an absurd request', async (_n, msg) => {
    const d = await diagnosePaste(`${msg}\n\n${HINT}\n (at /paddle/paddle/phi/core/memory/allocation/cuda_allocator.cc:71)`);
    expect(d?.rule).toBe('cuda-oom-absurd-request');
    expect(first(d)).not.toMatch(/another process|\bbatch 1\b|halve/i);
  });

  it('synthetic: an ordinary request in the same template stays the CUDA OOM rule', async () => {
    const d = await diagnosePaste(
      `Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has been allocated and available memory is only 0.000000B.\n\n${HINT}`,
    );
    expect(d?.rule).toBe('cuda-oom');
  });

  it("synthetic: Paddle's hint is no reported holder; a user's own sentence still is", () => {
    expect(readReportedHolder(HINT).reportedHolder).toBeUndefined();
    expect(readReportedHolder('another user is running a job on the same GPU').reportedHolder).toBeDefined();
  });
});
