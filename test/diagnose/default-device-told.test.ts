// Issue 23, another holder: in a multi-GPU run every rank, or every DataLoader worker that touches CUDA, opens a
// context (and often tensors) on GPU 0 before it selects its own device, so GPU 0 carries one extra process per rank or
// worker and runs out first. Users tell it by what nvidia-smi shows them: "N additional processes on GPU 0", "GPU 0 uses
// more memory than the other GPUs", "memory on GPU 0 although I do not use it". Those reports get the per-rank device
// (set_device / map_location), not the batch. Real examples: blind6 3877, 3878 and blind7 3984 (public threads, URLs in
// their cases.json) and static10 5206, 5207 (new threads, labelled before running); the other texts are synthetic variants written from the principle. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const RULE = 'default-device-contexts-reported';
const SET_DEVICE = /set_device/;

describe('extra processes or memory on GPU 0 in a multi-GPU run: each rank or worker touched the default device', () => {
  it.each([
    ['blind6', '3877'],
    ['blind6', '3878'],
    ['blind7', '3984'],
    ['static10', '5206'],
    ['static10', '5207'],
  ])('real %s/%s', async (g, n) => {
    const d = await firstOfCase(g, n);
    expect(d?.rule).toBe(RULE);
    expect(d?.fixes[0]?.summary).toMatch(SET_DEVICE);
    expect(d?.fixes[0]?.changes).not.toHaveProperty('batch');
  });

  // synthetic: the forms users write from nvidia-smi, each beside an OOM they report
  const told: Record<string, string> = {
    'N extra processes': 'Training on 4 GPUs with DDP runs out of memory on GPU 0.\nnvidia-smi shows 3 extra processes on GPU 0.',
    'additional python processes on cuda:0': 'CUDA out of memory on rank 0. There are 7 additional python processes on cuda:0 during training.',
    'several workers on the first GPU': 'Got CUDA OOM in validation. Several worker processes appear on the first GPU, each with 1.5 GB.',
    'GPU 0 uses more memory than the others': 'CUDA out of memory. With 8 cards, GPU 0 uses much more memory than the other GPUs.',
    'first card holds more memory': 'OOM with torchrun: the first GPU takes more memory than the rest.',
    'do not use GPU 0': "RuntimeError: CUDA out of memory. I don't use GPU 0 at all, but there is memory on it from every process.",
    "other GPUs' processes on GPU 0": 'Training with DDP overflows: processes of the other GPUs also show up on GPU 0.',
    'GPU 0 has many processes': 'CUDA out of memory. GPU 0 has many processes, one per rank.',
    'DDP title, GPU 0 uses much more': 'DDP: cuda:0 uses much more memory and runs out of memory first',
    'Chinese, processes on card 0': 'DDP 训练显存不足，0号卡上多了3个进程，其他卡都只有一个。',
    'Chinese, more memory on card 0': '多卡训练爆显存，GPU0 显存比其他卡多很多。',
  };
  it.each(Object.entries(told))('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe(RULE);
    expect(d?.fixes[0]?.summary).toMatch(SET_DEVICE);
  });

  // synthetic controls: another holder named in words, one process on a chosen GPU 0, and one GPU's own OOM
  it.each([
    'CUDA out of memory. Other processes on GPU 0 are using 10 GB: a colleague runs a notebook there.',
    'CUDA out of memory on GPU 0 at batch 64; I only have one GPU.',
    'CUDA_VISIBLE_DEVICES=0 python train.py runs out of memory; GPU 0 uses more memory than I expected.',
  ])('synthetic control: %s', async (text) => {
    expect((await diagnosePaste(text))?.rule).not.toBe(RULE);
  });
});
