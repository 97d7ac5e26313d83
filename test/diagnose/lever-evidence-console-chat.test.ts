// The evidence-bound levers of issue 23 through a chat adapter (the console chat, `gpu-doctor bot` over a pipe,
// as classes-console-chat.test.ts drives it), in English and in Chinese: an HF Trainer evaluation OOM gets
// eval_accumulation_steps first and says the paste sets none; an OOM after training steps quotes the progress
// line and gives the experiment instead of a smaller batch; a batch already at 1 gives the experiment that decides.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const chat = (paste: string, lang: string) =>
  execFileSync('bin/gpu-doctor', ['bot'], {
    input: `${paste}\n.\n`,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', LC_ALL: '', LC_MESSAGES: '', LANG: lang },
  });
/** The first fix of the reply: the line after "Fix:" / "修复:". */
const firstFix = (reply: string) => /\n(?:Fix|修复):\n1\. ([^\n]*)/.exec(reply)?.[1] ?? '';

const SITE = '/usr/lib/python3/dist-packages';
const frame = (file: string, fn: string) => `  File "${file}", line 310, in ${fn}\n    return fn(*args, **kwargs)`;
const OOM =
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.10 GiB. GPU 0 has a total capacity of 47.54 GiB of which 1.20 GiB is free. Of the allocated memory 45.10 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.';
const HF_EVAL = [
  'Traceback (most recent call last):',
  frame('finetune.py', 'main'),
  frame(`${SITE}/transformers/trainer.py`, '_maybe_log_save_evaluate'),
  frame(`${SITE}/transformers/trainer.py`, 'evaluate'),
  frame(`${SITE}/transformers/trainer.py`, 'evaluation_loop'),
  frame(`${SITE}/transformers/trainer.py`, 'prediction_step'),
  frame(`${SITE}/torch/nn/modules/module.py`, '_call_impl'),
  OOM,
].join('\n');
const TRAIN = ['Traceback (most recent call last):', frame('train.py', 'train_one_epoch'), frame(`${SITE}/torch/nn/modules/module.py`, '_call_impl'), OOM].join(
  '\n',
);
const AFTER_STEPS = `python train.py --batch-size 24\nEpoch 2:  61%|██████    | 610/1000 [04:02<02:35,  2.51it/s, v_num=3, train_loss=0.284]\n${TRAIN}`;
// YOLO's default 640 px: an input this size is no lever of its own (levers/input-size.ts reads --img 1280 as one).
const BATCH_ONE = `python train.py --batch-size 1 --img 640\n${TRAIN}`;

describe('levers that cite their evidence, pasted into the console chat', () => {
  it.each([
    [
      'HF evaluation, English',
      HF_EVAL,
      'C.UTF-8',
      /^The card ran out in the Trainer's evaluation \(trainer\.py, in prediction_step\), and the paste sets no eval_accumulation_steps/,
    ],
    [
      'HF evaluation, Chinese',
      HF_EVAL,
      'zh_CN.UTF-8',
      /^卡是在 Trainer 的评估阶段爆的（trainer\.py, in prediction_step），而日志里没有设置 eval_accumulation_steps/,
    ],
    [
      'after 610 steps in epoch 2, English',
      AFTER_STEPS,
      'C.UTF-8',
      /^Training ran at these settings before the card ran out \("Epoch 2: .*610\/1000.*"\).*every 50 steps/,
    ],
    ['after 610 steps in epoch 2, Chinese', AFTER_STEPS, 'zh_CN.UTF-8', /^在这些设置下训练已经跑了一段时间才爆卡（"Epoch 2: .*610\/1000.*"）.*每 50 步/],
    [
      'batch already 1, English',
      BATCH_ONE,
      'C.UTF-8',
      /^The batch is already 1, so halving it is no lever.*The experiment that decides: print torch\.cuda\.memory_allocated\(\)/,
    ],
    ['batch already 1, Chinese', BATCH_ONE, 'zh_CN.UTF-8', /^batch 已经是 1，再减半已经不是办法了.*能下结论的实验/],
  ])(
    '%s',
    (_name, paste, lang, fix) => {
      const reply = chat(paste, lang);
      expect(reply).toMatch(/\[cuda_oom\]/);
      const first = firstFix(reply);
      expect(first).toMatch(fix);
      expect(first).not.toMatch(/^(?:Reduce|Halve) the batch|^减小批大小/);
    },
    90_000,
  );
});
