// Principle (issue 23, eval accumulation): the phase decides. An out-of-memory error the report places in evaluation, in a
// paste whose loop is HF Trainer's, is what the Trainer's evaluation keeps (every eval batch's logits on the GPU until the
// set ends), not the batch: eval_accumulation_steps / preprocess_logits_for_metrics come first. Two fixed forms read here:
// Trainer's own log lines name its loop where the paste names no class or setting (Trainer.log prints a Python dict in a
// fixed key order: "{'loss': 0.7091, 'learning_rate': 8.7e-06, 'epoch': 0.56}", with 'grad_norm' since transformers 4.38;
// an evaluation's "{'eval_loss': ..., 'eval_runtime': ..."), and the card said to be used up whole ("it eats up all the
// GPU memory") is the failure told in words. The real log is from the read split blind12; the rest are synthetic
// variants written from the principle (each says so), with near misses where it must not fire.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { reportedPhase } from '../../src/diagnose/levers/reported-phase.js';

const first = async (t: string) => (await diagnosePaste(t))?.fixes[0]?.summary ?? '';
const TRAINER_EVAL = /Trainer's evaluation[\s\S]{0,300}eval_accumulation_steps/;
const STEP = (p: number, loss: string) =>
  ` ${p}%|█████     | ${p * 100}/10000 [10:00<10:00, 11.89it/s]{'loss': ${loss}, 'learning_rate': 8.711327477334463e-06, 'epoch': 0.${p}}`;

describe('HF Trainer named by its own log lines, evaluation told in words', () => {
  it('blind12/7125 (real): token classification, loss dicts of training, "when eval is called it eats up all the GPU memory"', async () => {
    const d = await firstOfCase('blind12', '7125');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(TRAINER_EVAL);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
  it('synthetic: the same report with the newer dict (grad_norm) and an OOM word instead of "eats up"', async () => {
    const grad = ` 40%|████      | 400/1000 [01:00<01:30]{'loss': 1.2034, 'grad_norm': 3.51, 'learning_rate': 2e-05, 'epoch': 0.4}`;
    const s = await first(['Fine-tuning OOM', '', grad, '', 'Training runs fine, but during evaluation I get CUDA out of memory.'].join('\n'));
    expect(s).toMatch(TRAINER_EVAL);
  });
  it('synthetic: an evaluation dict printed before the failure names the loop too', async () => {
    const evalDict = "{'eval_loss': 0.4123, 'eval_accuracy': 0.91, 'eval_runtime': 12.34, 'eval_samples_per_second': 80.1, 'epoch': 1.0}";
    const s = await first(
      ['Evaluation OOM', STEP(20, '0.7'), evalDict, 'In the second evaluation it uses all the GPU memory and crashes with OOM.'].join('\n'),
    );
    expect(s).toMatch(TRAINER_EVAL);
  });
  it('synthetic: "takes up all of the VRAM" while validating, the loop read from the dict', () => {
    const v = reportedPhase(['Validation OOM', STEP(50, '0.5'), 'While validating it takes up all of the VRAM.'].join('\n'));
    expect(v?.phase).toBe('eval');
    expect(v?.evalLoop).toBe('hf');
  });

  // Near misses: where the principle must not fire.
  it('near miss (synthetic): a loss dict of a script of its own, without learning_rate and epoch in Trainer order, names no Trainer', () => {
    const v = reportedPhase(["{'loss': 0.51, 'acc': 0.93}", 'During evaluation it runs out of memory.'].join('\n'));
    expect(v?.evalLoop).toBe('plain');
  });
  it('near miss (synthetic): training said to eat all the GPU memory is no evaluation', () => {
    expect(reportedPhase([STEP(30, '0.6'), 'During training it eats up all the GPU memory.'].join('\n'))).toBeUndefined();
  });
  it("near miss (synthetic): a failure in the training after an evaluation is training's", async () => {
    const s = await first(['Out of memory after the first epoch', STEP(60, '0.4'), 'After evaluation, the next training epoch runs out of memory.'].join('\n'));
    expect(s).not.toMatch(TRAINER_EVAL);
  });

  // Tuned on evl14 (first run labelled before the engine ran): Trainer's evaluation banner named in prose.
  it('evl14/7451 (tuned, real): LLaMA-Factory SFT-LoRA, "一到Running Evaluation，就爆显存", a smaller batch does not help', async () => {
    expect((await firstOfCase('evl14', '7451'))?.fixes[0]?.summary).toMatch(TRAINER_EVAL);
  });
  it('synthetic: the banner in an English sentence, the loop named by a TrainingArguments setting', () => {
    const v = reportedPhase(['per_device_train_batch_size=8', 'As soon as it reaches Running Evaluation it throws CUDA out of memory.'].join('\n'));
    expect(v?.phase).toBe('eval');
    expect(v?.evalLoop).toBe('hf');
  });
  it("near miss (synthetic): the banner printed, the failure told in training, is training's", () => {
    expect(reportedPhase(['***** Running Evaluation *****', 'During training it runs out of memory.'].join('\n'))).toBeUndefined();
  });
});
