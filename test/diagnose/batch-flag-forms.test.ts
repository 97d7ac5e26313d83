// The batch as scripts spell their flag (issue 23): argparse flags and config keys write it with or without a
// separator ("--batch-size", "--batch_size", "--batchsize", "batchsize=32"); each is the batch the run states, so a
// plain batch OOM is answered with it instead of "the log does not state the batch". Real thread (blind6 read split)
// beside synthetic variants written from the flag forms (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TF_OOM = [
  '2018-06-02 13:26:47.411505: I tensorflow/core/common_runtime/bfc_allocator.cc:680] Stats:',
  'Limit:                  5093090918',
  'InUse:                  5070107904',
  '2018-06-02 13:26:47.411571: W tensorflow/core/common_runtime/bfc_allocator.cc:279] ****************************************************',
  'ResourceExhaustedError: OOM when allocating tensor with shape[1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
].join('\n');

describe('the batch flag without a separator', () => {
  it('blind6/3818: tf-pose-estimation at --batchsize 16 on a 6 GB card: halve it', async () => {
    const d = await firstOfCase('blind6', '3818');
    expect(d?.fixes[0]?.changes.batch).toBe(8);
  });
  it.each([
    ['--batchsize 32', 32],
    ['--batchsize=24', 24],
    ['batchsize: 12', 12],
    ['--batch-size 20', 20],
  ])('synthetic: "python train.py %s" states the batch', async (flag, n) => {
    const d = await diagnosePaste(`python train.py --model mobilenet ${flag}\n${TF_OOM}`);
    expect(d?.facts.batch).toBe(n);
  });
});
