// Principle (issue 23, the batch lever needs evidence; session 36 h1): a report that the run went on for a count of
// steps before the OOM says the step fit, so the batch is not what changed. The count is told with a qualifier ("after
// nearly 3000 iterations") and often wrapped over two lines by the paste; a row of a trial table that sets the batch to
// another value on each line is a trial of the batch, not a run that went on. The real TF1 MNIST report (blind7 3918)
// beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TF_OOM =
  '2017-05-03 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1158] Resource exhausted: OOM when allocating tensor with shape[128,32,28,28]';

describe('a count of steps told before the OOM keeps the batch', () => {
  it('real: "after nearly 3000\\n iterations with batchsize 128" and a BFC dump (blind7 3918)', async () => {
    const d = await firstOfCase('blind7', '3918');
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });
  it.each([
    [`OOM\nEverything is fine at first, but after about 5000\niterations it fails:\n${TF_OOM}`],
    [`OOM\nIt trains, then after roughly 12k steps this happens:\n${TF_OOM}`],
  ])('%j: no batch change first (synthetic)', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });
  it('a trial table of batch sizes is no run that went on (synthetic)', async () => {
    const text = `OOM on a later batch\nbatch_size: 500; fails OOM after 90 batches\nbatch_size: 300; fails OOM after around 540 batches\n${TF_OOM}`;
    const d = await diagnosePaste(text);
    expect(d?.fixes[0].summary).not.toMatch(/ran at these settings/);
  });
});
