// Issue 23, another holder: TensorFlow sizes its BFC allocator from the memory free when the session starts, so the
// "Limit:" its OOM report prints is what this process could take. A limit of a few MiB, far below any card, says the
// card was nearly full before the job began (an earlier session or another job holds it): free the card or move, not
// the batch. A limit near the card's size keeps "its own tensors fill what it was given". Real example: blind7 3977
// (public thread, URL in its cases.json); the other texts are synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const bfc = (limit: number, inUse: number, tried: string) =>
  [
    `2024-01-02 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran out of memory trying to allocate ${tried}.  Current allocation summary follows.`,
    `2024-01-02 10:00:00.000100: I tensorflow/core/common_runtime/bfc_allocator.cc:680] Stats: `,
    `Limit:                     ${limit}`,
    `InUse:                     ${inUse}`,
    `MaxInUse:                  ${inUse}`,
    '2024-01-02 10:00:00.000200: W tensorflow/core/framework/op_kernel.cc:1295] OP_REQUIRES failed at conv_ops.cc:446 : Resource exhausted: OOM when allocating tensor with shape[8,64,112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
  ].join('\n');

describe("TensorFlow's allocator limit says whether the card was taken before the job began", () => {
  it('real blind7/3977: Limit 8716288 bytes (8.3 MiB): another process held the card', async () => {
    const d = await firstOfCase('blind7', '3977');
    expect(d?.facts.holder).toBe('other_processes');
    expect(d?.fixes[0]?.summary).toMatch(/another process|CUDA_VISIBLE_DEVICES/i);
  });
  it('synthetic: limits of 40 and 300 MiB', async () => {
    for (const [limit, inUse] of [
      [41943040, 40000000],
      [314572800, 300000000],
    ])
      expect((await diagnosePaste(bfc(limit, inUse, '24.50MiB')))?.facts.holder).toBe('other_processes');
  });
  it('synthetic control: a 10 GiB limit full of this process’s tensors stays its own', async () => {
    expect((await diagnosePaste(bfc(10737418240, 10700000000, '392.00MiB')))?.facts.holder).not.toBe('other_processes');
  });
});
