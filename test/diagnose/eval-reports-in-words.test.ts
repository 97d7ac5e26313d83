// Short evaluation reports in words (issue 23, the evaluation class): a title, a few sentences, maybe a config or a
// code snippet, rarely a traceback. Principles, each with synthetic variants (English and Chinese) written from the
// principle beside the real threads of test/fixtures/untuned/eval6, through the CLI's own entry in process
// (diagnoseFile / diagnosePaste) and once through the console chat:
// - The title places the failure in evaluation ("Evaluation Error Ran out of memory", "预测评估时总是OOM") and no line
//   places it in training: the evaluation's levers, quoting the title; never the training batch.
// - A shortage said in words ("GPU memory not enough problem in the evaluation steps") is the failure.
// - HF Trainer named by its TrainingArguments' own setting names (per_device_eval_batch_size, eval_steps,
//   evaluation_strategy), its classes or a tool built on it (LLaMA-Factory): eval_accumulation_steps first.
// - HF Trainer evaluates at per_device_eval_batch_size 8 where the paste sets none: above a stated training batch,
//   the evaluation batch comes first, said to be the default; a paste that states the evaluation batch in words keeps it.
// - Confusers stay confusers: another error at evaluation (KeyError), advice text, a training OOM whose command
//   merely sets evaluation options.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const noTrainingBatch = (d: CaseDiagnosis | undefined) => {
  expect(d?.fixes[0]?.changes?.batch, 'the first fix does not change the training batch').toBeUndefined();
  expect(first(d)).not.toMatch(/^Reduce the batch/);
};

describe('the title places the failure in evaluation (levers/reported-phase.ts)', () => {
  it('real: "Evaluation Error Ran out of memory" (eval6/2301) gets no_grad, quoting the report, not the batch', async () => {
    const d = await firstOfCase('eval6', '2301');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    noTrainingBatch(d);
  });
  it('real: "GPU memory not enough problem in the evaluation steps" with HF Trainer code (eval6/2304) gets eval_accumulation_steps', async () => {
    const d = await firstOfCase('eval6', '2304');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/eval_accumulation_steps/);
    expect(first(d)).toContain('GPU memory not enough problem in the evaluation steps');
    noTrainingBatch(d);
  });
  it.each([
    [
      'en, the title names validation, the failure below it',
      'Validation keeps crashing on my 3090\nAfter the first epoch the job dies with CUDA out of memory. Any idea?\n',
      /Validation keeps crashing/,
    ],
    [
      "en, the evaluation as the title's subject",
      'Evaluation fails with OOM\nThe error is out of memory. Training itself works fine at batch 16.\n',
      /Evaluation fails with OOM/,
    ],
    ['zh, 预测评估 in the title', '预测评估的时候报错\n训练正常，但是一到这里就 CUDA out of memory，显卡是 24G。\n', /预测评估的时候报错/],
    ['zh, 推理时 in the title', '推理时显存不足\n模型加载没问题，跑了几张图以后就报错了。\n', /推理时显存不足/],
  ])('synthetic (%s): evaluation, quoting the title; not the training batch', async (_name, paste, quote) => {
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('cuda_oom');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(quote);
    noTrainingBatch(d);
  });
  it.each([
    [
      'en, the failure placed in training',
      'Validation metrics look wrong and training crashes\nThe run hits CUDA out of memory during training at step 300.\n',
    ],
    ['zh, 训练时显存不足', '验证集指标很奇怪\n另外训练时显存不足，batch 16 就爆了。\n'],
  ])('synthetic (%s): a line that places the failure in training keeps the title out', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.facts.phase).not.toBe('eval');
  });
});

describe('HF Trainer named by its settings or a tool built on it (levers/reported-phase.ts, levers/eval.ts)', () => {
  it('real: LLaMA-Factory "预测评估时总是OOM" (eval6/2309) gets eval_accumulation_steps', async () => {
    const d = await firstOfCase('eval6', '2309');
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/eval_accumulation_steps/);
    noTrainingBatch(d);
  });
  it.each([
    [
      'en, a TrainingArguments dump',
      'OOM when evaluating\nTrainingArguments(per_device_train_batch_size=16, evaluation_strategy="steps", eval_steps=500)\nThe run goes out of memory during evaluation.\n',
    ],
    [
      'en, a CLI command',
      'Out of memory in evaluation\npython finetune.py --per_device_train_batch_size 8 --per_device_eval_batch_size 8 --eval_steps 200\nCUDA out of memory when evaluating.\n',
    ],
    ['zh, SFTTrainer', '评估时显存不足\n用 SFTTrainer 微调 Qwen，per_device_eval_batch_size=4，评估时 OOM。\n'],
  ])('synthetic (%s): eval_accumulation_steps first', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/eval_accumulation_steps/);
    noTrainingBatch(d);
  });
  it("a script built on the accelerate no_trainer examples takes the same flags with its own loop: not the Trainer's", async () => {
    const d = await diagnosePaste(
      'OOM during evaluation\naccelerate launch run_clm_no_trainer.py --per_device_eval_batch_size 8\nCUDA out of memory during evaluation.\n',
    );
    expect(d?.facts.phase).toBe('eval');
    expect(first(d)).not.toMatch(/eval_accumulation_steps/);
  });
  it.each([
    [
      'en, YAML',
      'OOM on eval\ntraining:\n  batch_size: 1\n  eval_steps: 2000\nTraining is fine, then it runs out of memory when eval starts.\n',
      "per_device_eval_batch_size 8, the Trainer's default",
    ],
    [
      'en, flags',
      'Trainer OOM during evaluation\n--per_device_train_batch_size 2 --evaluation_strategy epoch\nCUDA out of memory during evaluation.\n',
      "per_device_eval_batch_size 8, the Trainer's default",
    ],
  ])("synthetic (%s): the unset evaluation batch is the Trainer's default 8, above the training batch: it comes first", async (_name, paste, quote) => {
    const d = await diagnosePaste(paste);
    expect(first(d)).toContain(quote);
    noTrainingBatch(d);
  });
  it('an evaluation batch stated in words is not replaced by the default (eval5/2005: "for evaluation with batch_size of 4")', async () => {
    const d = await firstOfCase('eval5', '2005');
    expect(first(d)).not.toContain("Trainer's default");
    expect(first(d)).toMatch(/eval_accumulation_steps/);
  });
});

describe('confusers stay confusers', () => {
  it('real: a KeyError at evaluation (eval6/2310) and advice to add no_grad (eval6/2311) get no memory diagnosis', async () => {
    for (const n of ['2310', '2311']) {
      const d = await firstOfCase('eval6', n);
      expect(['cuda_oom', 'growing_memory_leak', 'fragmentation'], n).not.toContain(d?.category);
    }
  });
  it('real: a training OOM whose command sets evaluation options (eval6/2312) is not an evaluation', async () => {
    const d = await firstOfCase('eval6', '2312');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.facts.phase).not.toBe('eval');
    expect(first(d)).not.toMatch(/eval_accumulation_steps/);
  });
  it.each([
    [
      'advice',
      "Tip: to avoid OOM during evaluation, set eval_accumulation_steps\nEvaluation keeps every batch's logits; set eval_accumulation_steps=8 in TrainingArguments.\n",
    ],
    [
      'another error at evaluation',
      'Evaluation fails in compute_metrics\nTraceback (most recent call last):\n  File "train.py", line 40, in compute_metrics\n    preds = p.predictions["logits"]\nKeyError: \'logits\'\n',
    ],
  ])('synthetic (%s): no memory diagnosis', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(['cuda_oom', 'growing_memory_leak', 'fragmentation']).not.toContain(d?.category);
  });
});

// The console chat (`gpu-doctor bot` over a pipe, as lever-evidence-console-chat.test.ts drives it): the reply quotes
// the title it read, in English and Chinese, and changes no training batch.
const chat = (paste: string, lang: string) =>
  execFileSync('bin/gpu-doctor', ['bot'], {
    input: `${paste}\n.\n`,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', LC_ALL: '', LC_MESSAGES: '', LANG: lang },
  });
const firstFix = (reply: string) => /\n(?:Fix|修复):\n1\. ([^\n]*)/.exec(reply)?.[1] ?? '';
describe('a report in words pasted into the console chat', () => {
  it('English and Chinese replies quote the title that placed the failure in evaluation', { timeout: 60_000 }, () => {
    const paste =
      'Validation runs out of GPU memory\nTraining is fine at batch 32; my validate loop fails after 20 batches with:\nRuntimeError: CUDA error: out of memory';
    const en = firstFix(chat(paste, 'C.UTF-8'));
    expect(en).toMatch(/^The card ran out in the evaluation loop \("Validation runs out of GPU memory"\).*inference_mode/);
    const zh = firstFix(chat(paste, 'zh_CN.UTF-8'));
    expect(zh).toMatch(/^卡是在评估循环里爆的（"Validation runs out of GPU memory"）/);
    for (const reply of [en, zh]) expect(reply).not.toMatch(/32 -> 16|32 → 16|Reduce the batch|减小 batch/);
  });
});
