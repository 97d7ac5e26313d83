// One long sequence outside a training step (issue 23): an inference or evaluation over samples of tens of thousands of
// tokens fills the card with eager attention's heads × length² scores, so a fused attention (SDPA / FlashAttention)
// and then a shorter length lead, before the no_grad guess of an evaluation told only in words; a training step keeps
// the sequence lever (sequence.ts) and a stated batch above 2 the batch. The length is read as reports state it:
// "length设置为20k", "a 32k context", "128k-token context". Real threads (blind6 read split, input10 tuned group)
// beside synthetic variants written from the principle (said so).
import { describe, expect, it } from 'vitest';
import { readSequenceLength } from '../../src/diagnose/levers/sequence.js';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const LONG = /^One sample is long \([^)]*\) and no training step runs[\s\S]*attn_implementation="sdpa"/;

describe('real threads', () => {
  it('blind6/3832: LongBench at length 20k on a 7B, "评测" told in words: fused attention, not no_grad', async () => {
    expect(first(await firstOfCase('blind6', '3832'))).toMatch(LONG);
  });
  it('input10/5425: "200k context length" for Yi-34B-200k inference', async () => {
    expect(first(await firstOfCase('input10', '5425'))).toMatch(LONG);
  });
});

describe('synthetic variants', () => {
  it.each([
    ['当length设置为20k的时候就OOM', 20 * 1024],
    ['evaluating with a 32k context runs out of memory', 32 * 1024],
    ['a 128k-token context on one GPU', 128 * 1024],
    ['长度设为16384后推理报错', 16384],
  ])('"%s" states the length', (text, n) => {
    expect(readSequenceLength(text).sequence.seqLen).toBe(n);
  });
  it('an evaluation told in words at a 32k context: the fused attention first', async () => {
    const d = await diagnosePaste('Evaluating Llama-2-7B with a 32k context runs out of memory on an A100 80GB during evaluation.\nCUDA out of memory.');
    expect(first(d)).toMatch(LONG);
  });
  it('control: a training step at a long length keeps the sequence lever, not this one', async () => {
    const d = await diagnosePaste(
      'Fine-tuning with max_seq_length=32768 and per_device_train_batch_size=1 runs out of memory during training.\nloss.backward()\ntorch.OutOfMemoryError: CUDA out of memory.',
    );
    expect(first(d)).not.toMatch(LONG);
  });
  it('control: a short length is not this lever', async () => {
    const d = await diagnosePaste('Evaluating with a 2k context runs out of memory during evaluation.\nCUDA out of memory.');
    expect(first(d)).not.toMatch(LONG);
  });
});
