// Principle (issue 23, what evaluation keeps): memory told to climb through an evaluation pass, in a report whose title
// places the failure in evaluation, is what the pass keeps of every batch (logits gathered for the metrics), not one
// large input: eval_accumulation_steps / preprocess_logits_for_metrics for HF Trainer, outputs moved to the CPU per batch
// in a loop of one's own. A report's paragraph is often one line: what one sentence says of training ("the memory is fixed
// during training") is not said of the climb another sentence tells, so the climb is read per sentence, and the title
// names the pass with a qualifier before it ("during the fine-tuning evaluation phase"). The real log is from the read
// split blind12; the rest are synthetic variants written from the principle (each says so), with near misses.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readEvalPassGrowth } from '../../src/diagnose/levers/eval-over-set.js';

const PASS = /climbs through an inference or evaluation pass over the set/;
const first = async (t: string) => (await diagnosePaste(t))?.fixes[0]?.summary ?? '';
const OOM =
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.44 GiB. GPU 0 has a total capacity of 10.58 GiB of which 4.44 GiB is free. Including non-PyTorch memory, this process has 6.14 GiB memory in use. Of the allocated memory 5.77 GiB is allocated by PyTorch, and 178.42 MiB is reserved by PyTorch but unallocated.';

describe('a climb told in one sentence of a paragraph that also speaks of training', () => {
  it('blind12/7124 (real): DNABERT-2 fine-tuning, flat in training, creeping up in evaluation until a 4.44 GiB request fails', async () => {
    const d = await firstOfCase('blind12', '7124');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(PASS);
    expect(d?.fixes[0]?.summary).toMatch(/eval_accumulation_steps/);
  });
  it('synthetic: the validation phase in the title, the climb and the training contrast in one line', async () => {
    const body = 'Training is stable at 9 GB. Memory keeps increasing step by step until it crashes. It happens with every model I train.';
    expect(await first(['OOM during the final validation phase', OOM, body].join('\n'))).toMatch(PASS);
  });
  it('synthetic: Chinese sentences on one line', async () => {
    const body = '训练的时候显存是稳定的。评估时显存一直增长，最后爆显存。';
    expect(await first(['微调评估阶段显存溢出', OOM, body].join('\n'))).toMatch(PASS);
  });
  it('synthetic: the reader returns the climbing sentence, not the line', () => {
    const q = readEvalPassGrowth('CUDA OOM during the model evaluation phase\nMemory is flat in training. Memory creeps up gradually until OOM.');
    expect(q).toMatch(/creeps up/);
    expect(q).not.toMatch(/flat in training/);
  });

  // Near misses: where the principle must not fire.
  it("near miss (synthetic): the title names training, the climb is training's", () => {
    expect(readEvalPassGrowth('OOM during the fine-tuning training phase\nMemory keeps increasing until it crashes.')).toBeUndefined();
  });
  it('near miss (synthetic): the climbing sentence itself is about training', () => {
    expect(readEvalPassGrowth('Error during the evaluation phase\nThe memory keeps increasing during training. Evaluation never starts.')).toBeUndefined();
  });
  it('near miss (synthetic): no climb told, one large request in evaluation stays the one-input reading', async () => {
    expect(await first(['OOM during the fine-tuning evaluation phase', OOM, 'It fails on the first evaluation batch.'].join('\n'))).not.toMatch(PASS);
  });

  // Tuned on evl14 (first run labelled before the engine ran): the pass named by an English phase word with a Chinese time word.
  it('evl14/7450 (tuned, real): "进行eval的时候显存会一直增加 ... 就OOM了" in a LLaMA-Factory LoRA run', async () => {
    const d = await firstOfCase('evl14', '7450');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(PASS);
  });
  it('synthetic: "validation的时候" and "test阶段" name the pass', () => {
    expect(readEvalPassGrowth('跑validation的时候显存一直增长，最后OOM')).toBeDefined();
    expect(readEvalPassGrowth('test阶段显存不断增加')).toBeDefined();
  });
  it('near miss (synthetic): "train的时候" is training, not the pass', () => {
    expect(readEvalPassGrowth('train的时候显存一直增长，最后OOM')).toBeUndefined();
  });
});
