// Principle (issue 23, growth in evaluation): memory told to climb through an inference or evaluation pass over a set
// (a test / validation set named, or the evaluation itself), with inputs of one size each step, is what the pass keeps of
// every step: the predictions gathered on the GPU until the set ends (HF Trainer's evaluate / predict without
// eval_accumulation_steps, a loop that keeps GPU outputs). That comes before the search for a leak. Inference alone (one
// request after another) is not a pass over a set: a climb with each new input size there is the allocator's cache. The
// real log is from the read split blind7; the others are synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readEvalPassGrowth } from '../../src/diagnose/levers/eval-over-set.js';

const PASS = /climbs through an inference or evaluation pass over the set/;
const first = async (t: string) => (await diagnosePaste(t))?.fixes[0]?.summary ?? '';

describe('growth through a pass over a set', () => {
  it('blind7/3912 (real): "GPU memory usage keeps growing when Performing Inference on the Test Set", batch 1', async () => {
    const s = (await firstOfCase('blind7', '3912'))?.fixes[0]?.summary ?? '';
    expect(s).toMatch(PASS);
    expect(s).toMatch(/eval_accumulation_steps/);
  });
  it('synthetic: English and Chinese reports of a climb over the validation / test set', async () => {
    expect(await first('GPU memory keeps increasing over the validation set until CUDA out of memory')).toMatch(PASS);
    expect(await first('评估时显存一直增长，最后爆显存')).toMatch(PASS);
  });
  it('eval10/5106 (tuned, real): "模型在验证/推理的过程中显存会一直累积" (accumulates) over 4000 pairs', async () => {
    expect((await firstOfCase('eval10', '5106'))?.fixes[0]?.summary).toMatch(PASS);
  });
  it('eval10/5107 (tuned, real confuser): a chat server growing over requests is no pass over a set', async () => {
    expect((await firstOfCase('eval10', '5107'))?.fixes[0]?.summary ?? '').not.toMatch(PASS);
  });
  it('synthetic control: a climb during training is the leak search, not the pass', async () => {
    expect(await first('GPU memory keeps increasing during training until CUDA out of memory')).not.toMatch(PASS);
  });
  it('synthetic control: inference request after request (no set) is not a pass over a set', async () => {
    expect(await first('在推理过程中显存不断增加，新跑一个case就会占用显存，直至OOM')).not.toMatch(PASS);
    expect(readEvalPassGrowth('memory keeps growing while serving requests')).toBeUndefined();
  });

  // Stop 39 (g1): the test pass named ("during testing", "in the test phase"), the adverb before the verb ("gradually
  // increases"), and a line that contrasts the phase that was fine with the one that climbs.
  it('blind9/5723 (read, real): "fine during both training and validation, but during testing ... gradually increases"', async () => {
    const s = (await firstOfCase('blind9', '5723'))?.fixes[0]?.summary ?? '';
    expect(s).toMatch(PASS);
    expect(s).toMatch(/each batch/);
  });
  it.each([
    'Training is fine, but during testing the GPU memory gradually increases until CUDA out of memory',
    'In the test phase the VRAM steadily grows batch after batch and then OOM',
    'Validation works; in the test loop GPU memory keeps increasing until it runs out',
  ])('synthetic: %j is a climb through the test pass', (t) => {
    expect(readEvalPassGrowth(t)).toBeDefined();
  });
  it.each([
    // The climb is on the training side of the contrast.
    'Testing is fine, but during training the GPU memory gradually increases',
    // A test of the user's own, no pass: "in my test" names no test phase.
    'In my test the memory gradually increases with each request',
  ])('synthetic control: %j is no climb through a test pass', (t) => {
    expect(readEvalPassGrowth(t)).toBeUndefined();
  });
});
