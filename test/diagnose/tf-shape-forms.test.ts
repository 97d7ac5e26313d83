// TensorFlow's failed tensor read from its fixed message in every version (issue 23 item 5): TF 1.x before 1.5 printed
// "OOM when allocating tensor with shape[...]" with no " and type ..." (allocate_temp's ResourceExhausted(..., shape.
// DebugString())), so the type is optional and then float. Two readings of the shape: a leading dimension no batch
// reaches (the whole data array put on the device, Keras's validation_split slicing it there), and a last axis of a
// million or more (a word-level vocabulary or class count: every row that wide, so that axis is the lever, not the
// batch). Real threads (blind8 read split) beside synthetic variants written from TF's format string (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const WHOLE = /^TensorFlow could not place shape\[/;
const WIDE = /^The last axis of the tensor TensorFlow could not allocate is \d+ wide/;

describe('real threads', () => {
  it('blind8/5602: shape[54000,128,128,3] without a type is the whole array (validation_split), fed from the host', async () => {
    const d = await firstOfCase('blind8', '5602');
    expect(first(d)).toMatch(WHOLE);
    expect(first(d)).toMatch(/shape\[54000,128,128,3\] float/);
    expect(first(d)).toMatch(/tf\.data|validation_data/);
  });
  it('blind8/5629: shape[512,5555540] is a 5.5M-word softmax: the vocabulary, not the batch', async () => {
    const d = await firstOfCase('blind8', '5629');
    expect(first(d)).toMatch(WIDE);
    expect(first(d)).toMatch(/5555540/);
    expect(first(d)).toMatch(/vocabulary/);
  });
});

describe("synthetic variants (written from TF's format strings)", () => {
  it.each([
    ['TF 1.x, no type', 'ResourceExhaustedError: OOM when allocating tensor with shape[60000,28,28,1]'],
    [
      'TF 2.x, with type and device',
      'ResourceExhaustedError: OOM when allocating tensor with shape[160000,64,64,3] and type double on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:GatherV2]',
    ],
    [
      '"of shape", spaced dims',
      'W tensorflow/core/framework/op_kernel.cc:1318] Resource exhausted: OOM when allocating tensor of shape [50000, 224, 224, 3] and type float',
    ],
  ])('%s: a leading dimension above any batch is the whole array', async (_n, line) => {
    expect(first(await diagnosePaste(line))).toMatch(WHOLE);
  });
  it.each([
    ['logits of a 2M-class output, no type', 'Resource exhausted: OOM when allocating tensor with shape[256,2000000]'],
    [
      'a 3-D logits tensor with type',
      'ResourceExhaustedError: OOM when allocating tensor with shape[8,64,1500000] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
    ],
  ])('%s: the wide last axis leads', async (_n, line) => {
    const d = first(await diagnosePaste(line));
    expect(d).toMatch(WIDE);
    expect(d).not.toMatch(/^.{0,80}halve the batch/i);
  });
  it.each([
    ['a 250k sub-word vocabulary', 'ResourceExhaustedError: OOM when allocating tensor with shape[32,512,250002] and type float'],
    [
      "a 500k vocabulary, below the million bound (eval11/5807's size)",
      'ResourceExhaustedError: OOM when allocating tensor with shape[5776,500002] and type float',
    ],
    ['an ordinary activation', 'ResourceExhaustedError: OOM when allocating tensor with shape[64,256,56,56] and type float'],
  ])('control, %s: neither reading', async (_n, line) => {
    const d = first(await diagnosePaste(line));
    expect(d).not.toMatch(WIDE);
    expect(d).not.toMatch(WHOLE);
  });
});
