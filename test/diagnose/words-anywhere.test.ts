// A memory failure told in the reporter's words anywhere in the paste (issue 23, recognition): src/diagnose/told-failure.ts
// reads a subject (GPU memory / VRAM / 显存, RAM / host memory / 内存, memory unnamed) with a predicate of failure,
// growth or a kill in any sentence, excludes what negates, avoids, guesses or asks about capacity, and lets the error's
// own type win (told-hits.ts). Real cases come from tuned group words8/ (test/fixtures/untuned/words8/cases.json has
// each thread's URL); the other pastes here are SYNTHETIC variants written from the principle, not copied from threads.
import { describe, expect, it } from 'vitest';
import { LogText, normalizeLog } from '../../src/diagnose/normalize.js';
import { readToldFailure } from '../../src/diagnose/told-failure.js';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const read = (text: string) => readToldFailure(new LogText(normalizeLog(text)));
const told = (text: string) => read(text).told?.kind;

describe('the grammar of a failure told in words (synthetic variants)', () => {
  it.each([
    ['Training runs fine at first.\nThen the GPU memory usage keeps increasing until it crashes.', 'gpu_growth'],
    ['Setup: one RTX 4090.\nIt uses all 24 GB of VRAM and then stops.', 'gpu_oom'],
    ['My dataset has 2M images.\nThe process gets killed when loading the dataset.', 'host_oom'],
    ['I train a UNet on 512 px tiles.\nAfter a few epochs the system memory runs out.', 'host_oom'],
    ['The CUDA memory is not enough for the 13B model on my card.', 'gpu_oom'],
    ['Host RAM keeps growing epoch after epoch until the job dies.', 'host_growth'],
    ['I noticed a steady increase in GPU memory during training (10G -> 22G).', 'gpu_growth'],
    ['训练了几个epoch之后显存一直增长', 'gpu_growth'],
    ['在推理过程中随着请求的增多，会出现显存溢出的情况', 'gpu_growth'],
    ['随着epoch的增加，内存不够了', 'host_growth'],
    ['加载模型的时候内存不够被kill了', 'host_oom'],
    ['推理时显存爆了', 'gpu_oom'],
    ['运行到验证的时候显存溢出', 'gpu_oom'],
    ['服务器内存不足，训练到一半程序就没了', 'host_oom'],
    ['Trainer predict method fails: the GPU memory runs out after 20 batches', 'gpu_oom'],
    ['[Question] GPU memory keeps growing during training', 'gpu_growth'],
    ['单卡训练，batch 设成 2 以后 GPU 内存还是不够', 'gpu_oom'],
  ])('tells the failure: %s', (text, kind) => {
    expect(told(text)).toBe(kind);
  });

  it.each([
    ['I use gradient checkpointing to avoid OOM.'],
    ['No OOM so far, the loss is NaN after 200 steps.'],
    ['With batch 4 the GPU memory does not run out.'],
    ['Training works without running out of memory.'],
    ['如何避免显存不足？'],
    ['How much GPU memory do I need to train the large model?'],
    ['Is 24GB of VRAM enough for training?'],
    ['是因为显存不够吗？'],
    ['It might run out of GPU memory with larger images.'],
    ['The GPU memory increases and then drops back to normal after every epoch.'],
    ['显存满了，但是GPU利用率只有30%'],
    ['At the beginning I was getting out of memory errors, batch 8 solved it.'],
    ['3) Not enough RAM.'],
    ['I killed the process manually with ctrl-c.'],
    ['[Feature] estimate memory before loading to predict OOM'],
    ['Can we calculate whether the GPU memory is not enough before training starts'],
  ])('tells no failure: %s', (text) => {
    expect(told(text)).toBeUndefined();
  });

  it('takes back a sentence that only avoids the failure, but not one that hedges it', () => {
    const avoid = read('I set batch 8 to avoid CUDA out of memory.');
    expect([...avoid.denied]).toEqual([0]);
    const hedge = read('Accumulating the loss tensor may cause GPU memory overflow.');
    expect(hedge.denied.size).toBe(0);
    expect(hedge.told).toBeUndefined();
  });

  it('reads the phase the same account names (evaluation, model load)', () => {
    expect(read('Training is fine.\nDuring validation the GPU memory runs out after 30 batches.').told).toMatchObject({ kind: 'gpu_oom', phase: 'eval' });
    expect(read('加载模型的时候内存不够被kill了').told).toMatchObject({ kind: 'host_oom', phase: 'load' });
    expect(read('推理时显存爆了').told).toMatchObject({ kind: 'gpu_oom', phase: 'eval' });
  });

  // Principle: a clause that says its step went fine names a phase the run passed, not the one it failed in (fresh/725:
  // "模型加载没问题， deepspeed.initialize时报错OOM" is the optimizer's set-up, not the load). Synthetic variants below.
  it('does not take the phase from a clause that says that step went fine', () => {
    expect(read('模型加载没问题，训练第一步时显存爆了').told?.phase).toBeUndefined();
    expect(read('Loading the model works fine, but during evaluation the GPU memory runs out.').told).toMatchObject({ kind: 'gpu_oom', phase: 'eval' });
    expect(read('加载模型成功，推理时显存不足').told).toMatchObject({ kind: 'gpu_oom', phase: 'eval' });
    // controls: the phase named in the failing clause, or in a clause that does not say it went fine, still counts
    expect(read('加载模型时显存不足').told).toMatchObject({ kind: 'gpu_oom', phase: 'load' });
    expect(read('When loading the model, the GPU memory is not enough.').told).toMatchObject({ kind: 'gpu_oom', phase: 'load' });
  });

  it('fresh/725: a set-up OOM after a load said to be fine keeps the optimizer state as the holder and offload first', async () => {
    const d = (await firstOfCase('fresh', '725'))!;
    expect(d.facts.phase).not.toBe('load');
    expect(d.facts.holder).toBe('optimizer_state');
    expect(d.fixes[0].summary).toMatch(/offload/i);
  });

  it('reads memory held for a data set as the host RAM, and a kill as the host even beside the card', () => {
    expect(told('The GPU is a 3090.\nThe data set occupies all the remaining memory, which is not enough.')).toBe('host_oom');
    expect(told('显存24G，训练时进程被kill了')).toBe('host_oom');
  });
});

describe('what the reply makes of the words (in process, synthetic variants)', () => {
  it('a GPU failure told in a body sentence is a GPU OOM, read from the words, with the experiment that decides', async () => {
    const d = await diagnosePaste('Fine-tuning question\nEverything loads. After 300 steps the GPU memory runs out and training stops.\n');
    expect(d?.category).toBe('cuda_oom');
    // "After 300 steps": the step fit, so the experiment is the one that tells a climb from one larger input (growth-boundary.test.ts).
    expect(d?.fixes[0].summary).toMatch(/batch 1|nvidia-smi|Tried to allocate|own words|memory_allocated\(\) every 50 steps/);
  });

  it('a GPU failure told in an evaluation sentence gets the evaluation levers, not the training batch', async () => {
    const d = await diagnosePaste('Validation problem\nTraining is fine.\nDuring validation the GPU memory runs out after 30 batches.\n');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/no_grad|inference_mode|evaluation/);
    expect(d?.fixes[0].changes?.batch).toBeUndefined();
  });

  it('a host kill told in words is host RAM, and a climb told in words is growth', async () => {
    expect((await diagnosePaste('Question\nThe process gets killed when loading the dataset.\n'))?.category).toBe('host_oom_killed');
    expect((await diagnosePaste('Question\nI see a gradual increase in GPU memory usage during training.\n'))?.category).toBe('growing_memory_leak');
    expect((await diagnosePaste('问题\n训练的时候内存占用一直在上涨\n'))?.category).toBe('growing_memory_leak');
  });

  it('a host kill told while the data loads gets the data-in-RAM lever; one told in training does not', async () => {
    const data = await diagnosePaste('Question\nThe process was killed when I loaded the three big datasets.\n');
    expect(data?.category).toBe('host_oom_killed');
    expect(data?.fixes[0].summary).toMatch(/^The process was killed while it loaded or prepared its data/);
    const zh = await diagnosePaste('问题\n加载数据的时候内存不够，进程被kill了\n');
    expect(zh?.category).toBe('host_oom_killed');
    const training = await diagnosePaste('Question\nAfter two epochs of training the process was killed.\n');
    expect(training?.category).toBe('host_oom_killed');
    expect(training?.fixes[0].summary).not.toMatch(/^The process was killed while it loaded or prepared its data/);
  });

  it("the error's own type wins over the words (a KeyError, a device mismatch)", async () => {
    const key =
      '我觉得是显存不够了\nTraceback (most recent call last):\n  File "train.py", line 10, in <module>\n    x = batch["labels"]\nKeyError: \'labels\'\n';
    const d = await diagnosePaste(key);
    expect(d === undefined || !['cuda_oom', 'host_oom_killed', 'growing_memory_leak'].includes(d.category)).toBe(true);
    const dev =
      'The GPU memory is not enough I think\nTraceback (most recent call last):\n  File "train.py", line 3, in <module>\nRuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n';
    const e = await diagnosePaste(dev);
    expect(e === undefined || e.category !== 'cuda_oom').toBe(true);
  });

  it('a memory failure only mentioned to be avoided is no diagnosis', async () => {
    const d = await diagnosePaste('Loss is NaN\nI set batch 8 to avoid CUDA out of memory.\nAfter 100 steps the loss becomes NaN.\n');
    expect(d === undefined || d.category !== 'cuda_oom').toBe(true);
  });

  it('capacity questions and a climb that comes back are no diagnosis', async () => {
    expect(await diagnosePaste('GPU memory\nHow much GPU memory do I need to train this? Is a 12GB card enough?\n')).toBeUndefined();
    expect(await diagnosePaste('显存问题\n一般推理阶段用多少显存？\n')).toBeUndefined();
    const back = await diagnosePaste('Memory\nThe GPU memory consumption will gradually increase to the maximum and then drop back to normal.\n');
    expect(back?.category).not.toBe('growing_memory_leak');
  });
});

describe('real reports of words8/ (tuned, threads in cases.json)', () => {
  it.each([
    ['3110', 'growing_memory_leak'],
    ['3111', 'growing_memory_leak'],
    ['3113', 'growing_memory_leak'],
    ['3116', 'host_oom_killed'],
    ['3118', 'host_oom_killed'],
    ['3119', 'host_oom_killed'],
    ['3120', 'growing_memory_leak'],
  ])('words8/%s is recognised from its words', async (n, category) => {
    expect((await firstOfCase('words8', n))?.category).toBe(category);
  });

  it.each(['3130', '3131', '3132', '3134', '3135'])('words8/%s (a confuser: memory talked about, no failure) gets no memory diagnosis', async (n) => {
    const d = await firstOfCase('words8', n);
    expect(d === undefined || !['cuda_oom', 'host_oom_killed', 'growing_memory_leak'].includes(d.category)).toBe(true);
  });
});
