// One sample's slice of TensorFlow's failed activation (issue 23): TF prints the shape it could not allocate, and for an
// activation its leading dimension is the batch, so the tensor over that batch is one sample's share. When that share
// alone is a large part of the card (a quarter of it; 4 GiB when the paste names no card), a single layer's output for
// ONE input already fills it and the network keeps several such maps: no batch fits, so halving the batch (strictly
// harmful there) gives way to the input's size. A small per-sample share leaves the batch lever. Real threads (blind7
// read split, input10 tuned group) beside synthetic variants written from the principle (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const SAMPLE = /^One sample's share of the tensor TensorFlow could not allocate is already large/;
const tf = (shape: string) =>
  `ResourceExhaustedError: OOM when allocating tensor with shape[${shape}] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc`;

describe('real threads', () => {
  it('blind7/3922: shape[5,64,4890,4890] is 5.70 GiB per sample: the input size, not "reduce the batch 5 -> 2"', async () => {
    const d = await firstOfCase('blind7', '3922');
    expect(first(d)).toMatch(SAMPLE);
    expect(first(d)).toMatch(/28\.51 GiB \/ 5 = 5\.70 GiB/);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
  it.each(['5409', '5410', '5411'])('input10/%s (a small share per sample): the batch stays the lever', async (n) => {
    expect(first(await firstOfCase('input10', n))).not.toMatch(SAMPLE);
  });
});

describe('synthetic variants', () => {
  it.each([
    ['channels first, no card named', '4,64,4500,4500'],
    ['channels last, no card named', '2,3000,3000,160'],
  ])('%s: a share of 4 GiB or more per sample leads with the input size', async (_name, shape) => {
    const d = await diagnosePaste(tf(shape));
    expect(first(d)).toMatch(SAMPLE);
    expect(first(d)).toMatch(/image size \/ resolution/);
  });
  it('a named 8 GB card: 2.2 GiB per sample is over a quarter of it', async () => {
    const d = await diagnosePaste(['GPU: GeForce RTX 2070 SUPER, 8 GB', tf('3,36,4000,4000')].join('\n'));
    expect(first(d)).toMatch(SAMPLE);
  });
  it.each([
    ['a big batch of small maps', '256,112,112,64'],
    ['a moderate share on an unnamed card (1.5 GiB per sample)', '8,96,2048,2048'],
  ])('control, %s: not this lever', async (_name, shape) => {
    expect(first(await diagnosePaste(tf(shape)))).not.toMatch(SAMPLE);
  });
});
