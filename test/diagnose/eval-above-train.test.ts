// Principle (issue 23, eval class): evaluation computes no gradients, so at the same or a smaller batch it needs less GPU
// memory than a training step. A report that says evaluation, validation, testing or inference needs MORE than training
// (twice, "more than training", 显著大于训练时, or its own two figures, train 8.8 GB then eval 15.8 GB) says the
// evaluation forward still records the autograd graph: no_grad / inference_mode comes first, not a smaller evaluation
// batch, and a report that says so in words is an OOM report (cuda_oom) even without the error. Not where the loop is
// one that already runs without gradients (HF Trainer, Lightning, Keras). Real logs from the read split blind10 and the
// tuned group eval13 beside synthetic variants written from the principle (each says so), in process.
import { describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { diagnoseAll, diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { readEvalAboveTrain } from '../../src/diagnose/levers/eval-above-train.js';

const ABOVE = /evaluation needs more GPU memory than training/;
const summary = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
// The first fix runs evaluation under no_grad (the evaluation phase's own text, told-eval-compare.ts, may say it first) and
// the reply cites the comparison the report made.
function noGradFirst(d: CaseDiagnosis | undefined) {
  expect(d?.category).toBe('cuda_oom');
  expect(summary(d)).toMatch(/no_grad/);
  expect(d?.fixes.map((f) => f.summary).join('\n')).toMatch(ABOVE);
  expect(d?.fixes[0]?.changes.batch).toBeUndefined();
}

describe('evaluation told to need more memory than training', () => {
  it('blind10/6220 (real): "推理时占用显存显著大于训练时占用显存 ... 验证时 ... 训练时的几乎两倍", no error line', async () => {
    noGradFirst(await firstOfCase('blind10', '6220'));
  });
  it('blind10/6229 (real): the validation loop under model.eval(), "显存直接增加到15.8g，机会增加了一倍"', async () => {
    noGradFirst(await firstOfCase('blind10', '6229'));
  });
  it('eval13/7057 (real): "model.evaluate will cost more Cuda memory than model.fit": a later step after the evaluation phase\'s own no_grad text', async () => {
    const all = await diagnoseAll(resolve(import.meta.dirname, '../fixtures/untuned/eval13/7057-cuda_oom.log'));
    const oom = all.find((d) => d.category === 'cuda_oom');
    expect(summary(oom)).toMatch(/no_grad/);
    expect(oom?.fixes.map((f) => f.summary).join('\n')).toMatch(ABOVE);
  });
  it('eval13/7060 (real near miss): a YOLO validation (run without gradients) with its two figures does not get the no_grad-above-training text first', async () => {
    expect(summary(await firstOfCase('eval13', '7060'))).not.toMatch(ABOVE);
  });
  it('synthetic: the same report in other words, English and Chinese', async () => {
    noGradFirst(await diagnosePaste('Validation uses twice the GPU memory of training at the same batch size.'));
    noGradFirst(await diagnosePaste('My inference takes much more memory than training, is this normal?'));
    noGradFirst(await diagnosePaste('评估时显存比训练时还大很多'));
    noGradFirst(await diagnosePaste('验证阶段占用显存高于训练阶段'));
  });
  it('synthetic: the two figures, training first and the evaluation above it', () => {
    expect(readEvalAboveTrain('训练时显存占用 6 GB\n验证时显存占用 11 GB')).toMatch(/11 GB/);
    expect(readEvalAboveTrain('train: 3447MiB\neval: 6914MiB')).toMatch(/6914MiB/);
  });
});

describe('near misses: no evaluation above training', () => {
  it('synthetic: evaluation below training, or figures that do not rise', () => {
    expect(readEvalAboveTrain('训练时显存占用 11 GB\n验证时显存占用 6 GB')).toBeUndefined();
    expect(readEvalAboveTrain('train: 8000MiB\neval: 8200MiB')).toBeUndefined();
    expect(readEvalAboveTrain('Training uses more memory than evaluation, as expected.')).toBeUndefined();
  });
  it('synthetic: HF Trainer evaluation (already without gradients) does not get the no_grad text first', async () => {
    const paste = [
      'Evaluation uses more memory than training.',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.10/site-packages/transformers/trainer.py", line 3100, in evaluation_loop',
      '    logits = self.preprocess_logits_for_metrics(logits, labels)',
      '  File "/usr/lib/python3.10/site-packages/transformers/trainer_pt_utils.py", line 120, in nested_concat',
      '    return torch_pad_and_concatenate(tensors, new_tensors, padding_index=padding_index)',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.10 GiB is free.',
    ].join('\n');
    expect(summary(await diagnosePaste(paste))).not.toMatch(ABOVE);
  });
});
