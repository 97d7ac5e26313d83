// Issue 23, host RAM that climbs until the kill and evaluation that fills host RAM: each principle with real logs from
// test/fixtures/untuned/hostgrow9 (public threads, URLs in its cases.json) and synthetic variants written from the
// principle (marked "synthetic": invented here, not copied from a thread). In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

type Diagnosis = Awaited<ReturnType<typeof diagnosePaste>>;
const summary = (d: Diagnosis) => d?.fixes[0]?.summary ?? '';
const FIND_WHAT_GROWS = /tracemalloc/;
const CARD_PROBE = /torch\.cuda\.memory_allocated/;
const PER_BATCH = /per batch/;

describe('a climb that ends in the system killing the process is a host leak: find what grows', () => {
  // 4700 "the system will be out of memory, and kill process"; 4701 "killed by the OS"; 4702 "the OS kills the process";
  // 4703 "RAM(CPU) increasing during the training, about 10GB per epoch"; 4704 "memory leakage (not GPU memory, but RAM)".
  it.each(['4700', '4701', '4702', '4703', '4704'])('real hostgrow9/%s', async (n) => {
    const d = await firstOfCase('hostgrow9', n);
    expect(d?.category).toBe('growing_memory_leak');
    expect(summary(d)).toMatch(FIND_WHAT_GROWS);
    expect(summary(d)).not.toMatch(CARD_PROBE);
  });

  // synthetic: the climb told in several forms, memory unnamed or named only by denying the card
  const forms: Record<string, string> = {
    'unnamed memory, the OS kills': 'Memory usage goes up every epoch and finally the OS kills the training.',
    'unnamed memory, the kernel kills': 'The memory keeps increasing during the training until the process is killed by the kernel.',
    'the system kills': 'After each epoch the memory grows by about 3GB, then the system kills the job.',
    'memory named by denying the card': 'Memory leak in the data pipeline (not GPU memory, but RAM): it keeps growing with every epoch.',
    'RAM qualified in parentheses, a rate per epoch': 'RAM(CPU) usage increasing during the training, around 5GB per epoch.',
    'a signal kills it': 'After a few hundred epochs the job receives a signal that kills it; the memory keeps growing every epoch.',
  };
  it.each(Object.entries(forms))('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('growing_memory_leak');
    expect(summary(d)).toMatch(FIND_WHAT_GROWS);
  });

  it('synthetic controls: a climb of the card stays the card, a kill after one big load is no growth', async () => {
    const card = await diagnosePaste('GPU memory keeps increasing every epoch until the run fails.');
    expect(card?.category).toBe('growing_memory_leak');
    expect(summary(card)).toMatch(CARD_PROBE);
    // The kernel's OOM killer named is a host kill, not a full card.
    expect((await diagnosePaste('While building the label dicts my guess is it gets targeted by the OOM Killer.'))?.category).toBe('host_oom_killed');
    const load = await diagnosePaste('Loading 1200000 images into memory ...\nKilled');
    expect(load?.category).toBe('host_oom_killed');
    expect(summary(load)).not.toMatch(FIND_WHAT_GROWS);
  });
});

describe('host readings that climb to a kill: the leak comes first, a flat series leaves the kill first', () => {
  // synthetic: readings a training loop prints, then the kernel's kill
  const rising: Record<string, string> = {
    'RSS per epoch': 'epoch 1 loss 0.91 RSS 10.2 GB\nepoch 2 loss 0.80 RSS 14.8 GB\nepoch 3 loss 0.74 RSS 19.5 GB\nepoch 4 loss 0.70 RSS 24.1 GB\nKilled',
    '内存占用 per epoch': '每个epoch结束 内存占用: 10.5G\n每个epoch结束 内存占用: 15.2G\n每个epoch结束 内存占用: 20.1G\n已杀死',
  };
  it.each(Object.entries(rising))('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('growing_memory_leak');
    expect(summary(d)).toMatch(FIND_WHAT_GROWS);
  });

  it('synthetic control: the same readings flat before the kill are one big load, not a climb', async () => {
    const flat = 'epoch 1 loss 0.91 RSS 20.2 GB\nepoch 2 loss 0.80 RSS 20.3 GB\nepoch 3 loss 0.74 RSS 20.2 GB\nepoch 4 loss 0.70 RSS 20.3 GB\nKilled';
    expect((await diagnosePaste(flat))?.category).toBe('host_oom_killed');
  });
});

describe("an evaluation or prediction that keeps the whole set's outputs fills host RAM: reduce or write per batch", () => {
  // 4707 storing dicts and arrays of the predictions during evaluation; 4708 "Killed while evaluating" with the result
  // dictionary; 4710 one 32.4 GiB array at PREDICT (one allocation, no growth).
  it.each(['4707', '4708', '4710'])('real hostgrow9/%s', async (n) => {
    const d = await firstOfCase('hostgrow9', n);
    expect(d?.category).toBe('host_oom_killed');
    expect(summary(d)).toMatch(PER_BATCH);
    expect(d?.fixes[0]?.changes?.batch).toBeUndefined();
    expect(d?.fixes[0]?.changes?.workers).toBeUndefined();
  });

  // synthetic: each evidence form in an evaluation or prediction
  const forms: Record<string, string> = {
    'outputs appended in a validate loop':
      'def validate(model, loader):\n    all_logits = []\n    for x, y in loader:\n        all_logits.append(model(x).cpu().numpy())\nKilled',
    'one array for the whole prediction':
      'Running prediction on the test set\nnumpy.core._exceptions._ArrayMemoryError: Unable to allocate 61.0 GiB for an array with shape (2000000, 8192) and data type float32',
    "Trainer's eval_accumulation_steps": 'eval_accumulation_steps=10\n***** Running Evaluation *****\n  Num examples = 50000\n  Batch size = 32\nKilled',
    'told in Chinese': '验证的时候把所有预测结果都存在内存里，跑到一半进程被杀了',
  };
  it.each(Object.entries(forms))('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(summary(d)).toMatch(PER_BATCH);
  });

  // 4712 "在evaluation后显示Killed"; 4715 "RAM overflow and process death" in "the nnUNet prediction process"; 4717 a
  // "Killed" line right after "INFO:root:predicting"; 4720 "在验证的时候进程被杀死".
  it.each(['4712', '4715', '4717', '4720'])('real hostgrow9/%s: a kill inside an evaluation or prediction, the holder inferred', async (n) => {
    const d = await firstOfCase('hostgrow9', n);
    expect(d?.category).toBe('host_oom_killed');
    expect(summary(d)).toMatch(/^The kill came while the run evaluated or predicted/);
    expect(summary(d)).toMatch(PER_BATCH);
  });

  // synthetic: the kill placed in the phase by a line above it, or told in the phase's words
  const killedIn: Record<string, string> = {
    'a kill line after the evaluation starts': 'Epoch 12: loss 0.031\n***** Running Evaluation *****\nEvaluating: 41%|████      | 820/2000\nKilled',
    'told, English': 'Training runs fine but the process gets killed during inference on the test set.',
    'told, Chinese': '训练没问题，预测的时候进程被杀死了',
  };
  it.each(Object.entries(killedIn))('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(summary(d)).toMatch(PER_BATCH);
  });

  it('synthetic control: a kill line after training steps, with validation only mentioned earlier, is not placed in it', async () => {
    const d = await diagnosePaste('Validation accuracy: 0.81\nEpoch 4 step 100 loss 0.52\nEpoch 4 step 200 loss 0.50\nEpoch 4 step 300 loss 0.49\nKilled');
    expect(d?.category).toBe('host_oom_killed');
    expect(summary(d)).not.toMatch(PER_BATCH);
  });

  it('synthetic control: outputs appended in training, with no evaluation or prediction, are not this lever', async () => {
    const d = await diagnosePaste('for step, (x, y) in enumerate(loader):\n    outputs.append(model(x))\nEpoch 3 step 200 loss 0.41\nKilled');
    expect(summary(d)).not.toMatch(PER_BATCH);
  });
});
