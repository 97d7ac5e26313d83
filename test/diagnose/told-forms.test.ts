// The forms a memory failure is told in, in words only, and the guards that tell none (issue 23, recognition):
// src/diagnose/told-vocabulary.ts holds the vocabulary as data with its reasons, told-failure.ts reads a clause with it.
// Real cases come from the tuned group told9/ (test/fixtures/untuned/told9/cases.json has each thread's URL) and from
// order9/; every other paste here is a SYNTHETIC variant written from the principle, not copied from a thread.
import { describe, expect, it } from 'vitest';
import { LogText, normalizeLog } from '../../src/diagnose/normalize.js';
import { readToldFailure } from '../../src/diagnose/told-failure.js';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const told = (text: string) => readToldFailure(new LogText(normalizeLog(text))).told?.kind;

describe('forms that tell a GPU failure in words (synthetic variants)', () => {
  it.each([
    // OOM as an event or a verb, memory unnamed
    'Fine-tuning llama on one 3090\nIt still runs OOM at step 40 with batch 2.',
    'Training got OOMed after the first epoch\nUsing a 24 GB card.',
    'Training llama 8B\n[OOM] at step 10 with seq len 8192',
    '7B全参微调，OOM了',
    // "out of memory" run together, hyphenated or misspelt
    'training crashes with outofmemory on the second epoch',
    'CUDA out of memroy when I train with 512x512 images',
    'GPU out of momery after loading the second model',
    // a tool's own words in prose
    'My run ends with CUDA error 2 after 300 steps on a 12 GB card.',
    'JAX training stops with RESOURCE_EXHAUSTED after the first eval.',
    // Chinese slips and forms
    '单卡24G现存，训练一会就OOM',
    '训练时gpu现存不足',
    '我把batch改成8，GPU暴了',
    '4张卡微调，显存都超了',
    // a question about a failure that happened (why, how to fix) still tells it
    'Why OOM with batch 1 on 24GB?',
    '为什么会爆显存？batch只有1',
    '训练还是OOM了，batch要改成多少会好吗？',
    // a first line that starts like a change title but tells what happened despite it
    'Add gradient checkpointing and it still OOMs',
  ])('%j is a GPU OOM', async (paste) => {
    expect((await diagnosePaste(paste))?.category).toBe('cuda_oom');
  });

  it.each([
    ['It still runs OOM at step 40 with batch 2.', 'gpu_oom'],
    ['It shows "out of memeory" on the second epoch.', 'gpu_oom'],
    ['训练了一步后会出现gpu现存不足', 'gpu_oom'],
    ['我把batch改成8，GPU暴了', 'gpu_oom'],
    ['加载数据集的时候内从不足', 'host_oom'],
    ['加载数据集的时候内存炸了', 'host_oom'],
  ])('the grammar reads %j as %s', (paste, kind) => {
    expect(told(paste)).toBe(kind);
  });
});

describe('host kills and full memory told in words (synthetic variants)', () => {
  it.each([
    // the kernel's OOM killer is a host kill, not a GPU OOM
    ['Training on 8 GPUs, the job got OOM-killed by the kernel after 2 epochs.', 'host_oom_killed'],
    // memory told full at its limit, with what followed on the line
    ['the kernel died while loading the model, RAM usage was at 100%', 'host_oom_killed'],
    ['GPU显存跑满然后报错了', 'cuda_oom'],
  ])('%j is %s', async (paste, category) => {
    expect((await diagnosePaste(paste))?.category).toBe(category);
  });

  it('memory at 100% with nothing that failed is usage, not a failure (synthetic)', async () => {
    expect((await diagnosePaste('GPU memory is at 100% but utilization is only 30%, is this normal?'))?.category).toBeUndefined();
  });
});

describe('guards: a mention that tells no failure (synthetic variants)', () => {
  it.each([
    // negation at the word
    'Training runs fine, no OOM, but the loss is NaN after 200 steps.',
    '训练正常，没有爆显存，但是loss不下降',
    // questions and forecasts
    'Will it OOM if I train 13B on a 24 GB card?',
    'Will 13B OOM on a 24 GB card?',
    '训练7B在24G上会OOM吗？',
    'I expect it to OOM on 8 GB, is there a low-memory mode?',
    '请问24G的卡训练7B会不会爆显存？',
    'The DataLoader may just make it go OOM if the images are large; is there a way to stream them?',
    '显存占得很满，感觉随时都可能爆显存，这正常吗',
    // avoidance and capacity questions
    'How do I set the batch to avoid OOM on a 16 GB card?',
    '为了防止OOM，我把batch设成了1，但是训练很慢',
    'How much GPU memory do I need to fine-tune a 7B model?',
    // a past failure that is fixed
    'At first I was getting OOM, but I fixed it by lowering the batch. Now the loss is NaN.',
    // OOM in a setting's or a flag's name
    'I set oom_threshold=0.9 in the config and the loss diverges.',
    'Running train.py --no-oom --fp16 and the accuracy stays at 10%.',
    // a change to the software, not a run
    'Add a retry when the card goes OOM during generation',
    'feat(trainer): catch CUDA OOM and skip the batch',
    'Improve handling of CUDA OOM in the scheduler',
  ])('%j gets no memory diagnosis', async (paste) => {
    expect((await diagnosePaste(paste))?.category).toBeUndefined();
  });

  it('a failure told as happening despite something is an account even inside a capacity question (synthetic)', () => {
    expect(told('How much VRAM do I need, because I used an 80 GB card and still OOM?')).toBe('gpu_oom');
    expect(told('需要多少显存？我用了两张24G的卡还是OOM')).toBe('gpu_oom');
    expect(told('How much VRAM do I need to fine-tune the 7B model?')).toBeUndefined();
  });

  it('an OOM as the object of addressing or tackling it tells nothing (synthetic)', () => {
    expect(told('The README section "Addressing OOM" says a 7B model needs 112 GB of VRAM.')).toBeUndefined();
    expect(told('This release tackles CUDA OOM in the sampler.')).toBeUndefined();
  });

  it('OOMs named in the plural as the cause of a limit tell nothing (synthetic)', () => {
    expect(told('GPU usage stays low, while the memory (a blocker for larger batches due to out-of-memory errors) is full.')).toBeUndefined();
  });
});

describe('real reports (tuned groups told9/ and order9/)', () => {
  it.each([
    ['told9', '4609'], // "然后我更改了batch，又说GPU暴了"
    ['told9', '4616'], // "Current train.py OOMs even with H100"
    ['told9', '4620'], // "Training on A800 80G with batchsize 1 will OOM"
    ['told9', '4623'], // "got cuda out of memoery issue"
    ['told9', '4625'], // "how much vram because i used h200 140gb vram and still oom"
    ['order9', '4403'], // "CUDA out of memeory"
    ['order9', '4404'], // "显存都超了"
    ['order9', '4409'], // "[OOM issue]" in the title
    ['order9', '4412'], // 'It still shows "out of memory"'
    ['order9', '4416'], // "24G现存的单卡上进行微调还是会OOM"
    ['order9', '4419'], // "gpu现存不足"
  ])('%s/%s is a GPU OOM told in words', async (group, n) => {
    expect((await firstOfCase(group, n))?.category).toBe('cuda_oom');
  });

  it.each([
    ['told9', '4630'], // "感觉随时都可能爆显存" (a forecast)
    ['told9', '4631'], // "显存也没爆" (a denial)
    ['told9', '4632'], // a pull request: "may just make it go OOM"
    ['told9', '4633'], // "Find CUDA OOM batches before starting training"
    ['told9', '4634'], // "troubleshooting the top 3 OOM errors"
    ['told9', '4635'], // "ENH: handle OOM during model loading"
    ['told9', '4636'], // "推理时大概需要多少显存？" (a capacity question)
    ['told9', '4639'], // a README's "Addressing OOM" quoted in a question
  ])('%s/%s tells no failure', async (group, n) => {
    expect((await firstOfCase(group, n))?.category).toBeUndefined();
  });
});

// Two guards added when the vocabulary met the older suites (abstain.test.ts, eval-phase-first.test.ts). SYNTHETIC variants.
describe('names and machine lines that tell no failure in words', () => {
  it.each([
    'OOM predictor for transformer configs\nWould be nice to have one.',
    'An OOM estimator for LLM fine-tuning configs',
    'Feature request: OOM checker before launching a job',
    'OOM calculator gives wrong numbers for Qwen',
  ])('%j: OOM as the modifier of a tool name tells none', (paste) => {
    expect(told(paste)).toBeUndefined();
  });
  it('the same word as an event still tells one (controls)', () => {
    expect(told('The OOM checker said fine, but training OOMs at step 30')).toBe('gpu_oom');
    expect(told('I got OOM predicting on the test set')).toBe('gpu_oom');
  });
  it.each(['THCudaCheck FAIL file=/src/THC/THCStorage.cu line=58 error=2 : out of memory', 'alloc failed dev=0 size=2147483648 status=out of memory'])(
    '%j: a machine line of key=value fields is a message, not prose',
    (line) => {
      expect(readToldFailure(new LogText(normalizeLog(`${line}\nTraceback (most recent call last):\n`))).spoken.size).toBe(0);
    },
  );
});
