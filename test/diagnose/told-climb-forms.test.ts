// Principle (issue 23, recognition; session 36 h1): a climb of memory told in prose is told in more forms than "keeps
// increasing": with its two figures ("increasing from 3GB to 9GB", "starts from 0 and increases ... to 6e+4"), against the
// run's own count ("increases with the number of training epochs"), or as a fill that came only after running a while
// ("After running for more than ten minutes, the GPU memory is full"). A settling the report says never came ("expect it
// to stabilize but it never does") is no comeback. And one account of a host climb serves every host lever: the climb the
// grammar reads is the one the workers lever reads (a climb tied to the workers' count keeps the workers the lever).
// Real cases from the read splits blind6/blind7 beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('a climb told with its figures, the run count or a fill after running is a growth', () => {
  it('real: YOLOv10 "increases with the number of training epochs ... from 3GB to 9GB" (blind7 3920)', async () => {
    const d = await firstOfCase('blind7', '3920');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/memory_summary|_record_memory_history/);
  });
  it('real: WhisperLiveKit "After running for more than ten minutes, the GPU memory is full" (blind6 3812)', async () => {
    expect((await firstOfCase('blind6', '3812'))?.category).toBe('growing_memory_leak');
  });
  it('real: TF 2.0 predict() loop, "expect it to stabilize but it never does" (blind6 3817)', async () => {
    expect((await firstOfCase('blind6', '3817'))?.category).toBe('growing_memory_leak');
  });

  // Synthetic: each form alone, no error message in the paste.
  it.each([
    ['Training question\nThe GPU memory went up from 4 GB to 11 GB over the night and does not stop.'],
    ['VRAM question\nGPU memory usage has been increasing from 2.1GB to 7.8GB while training.'],
    ['Growing usage\nThe usage of GPU memory increases with the number of iterations.'],
    ['Server question\nAfter serving for a few hours, the GPU memory is full.'],
    ['Inference loop\nVRAM consumption increases indefinitely over time. I expected it to plateau but it never does.'],
  ])('%j is a growth report (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('growing_memory_leak');
  });

  it.each([
    // Figures that fall are no climb; a fill with no time of running before it is usage, not a climb.
    ['Question\nThe free memory went from 6598MB to 6134MB after I deleted the tensors.'],
    ['Question\nThe GPU memory is full, is that normal for a 7B model?'],
    // The climb that levels off, told plainly.
    ['Question\nGPU memory increases with the number of epochs at first, then plateaus at 9 GB.'],
  ])('%j tells no growth (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).not.toBe('growing_memory_leak');
  });
});

describe("memory told at the run's start and larger later is a climb", () => {
  it('real: Ultravox server "Initially ... around 19+ GB, but it subsequently escalated to over 30+ GB" (growth10 5006)', async () => {
    expect((await firstOfCase('growth10', '5006'))?.category).toBe('growing_memory_leak');
  });
  it('real: splatter-image "9GB at the beginning, but increasing to 13-14GB later on" (growth10 5005)', async () => {
    expect((await firstOfCase('growth10', '5005'))?.category).toBe('growing_memory_leak');
  });
  it('real: VILLA "As the epoch increased, so did the GPU memory" (growth10 5000)', async () => {
    expect((await firstOfCase('growth10', '5000'))?.category).toBe('growing_memory_leak');
  });
  it('real: HiVT "GPU Memory-Usage goes higher every epoch" (growth10 5001)', async () => {
    expect((await firstOfCase('growth10', '5001'))?.category).toBe('growing_memory_leak');
  });
  it('real: detrex "RAM一直增大" (growth10 5002)', async () => {
    expect((await firstOfCase('growth10', '5002'))?.category).toBe('growing_memory_leak');
  });

  // Synthetic: the start marked, a larger reading later on the same line.
  it.each([
    ['Question\nAt the start the GPU memory is 5 GB, but after a day it rose to 21 GB.'],
    ['Question\nInitially the VRAM usage was about 7.5GB, later it went up to 15GB.'],
    ['问题\n一开始显存占用 6G，后面涨到了 20G'],
    ['Question\nThe GPU memory usage gets higher with each iteration.'],
    ['Inference question\nDuring inference the memory usage has been increasing, and it will soon exceed the limit.'],
  ])('%j is a growth report (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('growing_memory_leak');
  });
  it.each([
    // Smaller later, a card's size, one step at the end of epoch 0 then level: no climb.
    ['Question\nAt the beginning the GPU memory is 20 GB, later it is 12 GB.'],
    ['Question\nAt first I used a 12GB GPU, then a 24GB GPU for the same model.'],
    ['Question\nMemory was ~4GB, and at the end of epoch 0 it increased to ~6GB; afterwards all epochs run at ~6GB.'],
  ])('%j tells no climb (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).not.toBe('growing_memory_leak');
  });
});

describe('one account of a host climb for every host lever', () => {
  it('real: LightZero, memory "starts from 0 and increases ... to 6e+4, after which the process is killed" (blind6 3813)', async () => {
    const d = await firstOfCase('blind6', '3813');
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(/replay buffer/);
    expect(d?.fixes[0].summary).toMatch(/tracemalloc/);
  });
  it('real: XBM training, "the memory usage slowly increase as training progresses" before a host allocation fails (blind7 3933)', async () => {
    const d = await firstOfCase('blind7', '3933');
    expect(d?.fixes[0].summary).toMatch(/tracemalloc/);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });
  it('real: Open-Sora, "训练时内存逐渐变大" then a DataLoader worker killed: the same measure-first fix as a plain kill (blind6 3880)', async () => {
    const d = await firstOfCase('blind6', '3880');
    expect(d?.fixes[0].summary).toMatch(/tracemalloc/);
  });
  it('a DataLoader worker killed after a told climb: measure first (synthetic)', async () => {
    const d = await diagnosePaste(
      'Killed in epoch 9\nHost RAM keeps increasing during training.\nRuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.',
    );
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(/tracemalloc/);
  });
  it('real: SparseML, RAM fills "especially when using larger number of workers": the workers stay the lever (blind7 3943)', async () => {
    const d = await firstOfCase('blind7', '3943');
    expect(d?.fixes[0].summary).toMatch(/^The report ties the host-RAM climb to the DataLoader workers/);
  });
  it('real: MobileFaceNet, "num_workers 为20时候，内存一直慢慢涨上来": fewer workers is still offered (static5 2116)', async () => {
    const d = await firstOfCase('static5', '2116');
    expect(d?.fixes.some((f) => typeof f.changes.workers === 'number' && f.changes.workers <= 8)).toBe(true);
  });

  // Synthetic: a kill after a climb the workers' reader does not word, with and without the workers' count.
  it.each([
    ['Process killed\nThe RSS of the trainer starts at 3 GB and increases steadily to 60 GB, after which the process is killed.'],
    ['Killed\nHost memory slowly increase as training progresses and then the job gets killed by the kernel.'],
  ])('%j: find what grows first (synthetic)', async (text) => {
    const d = await diagnosePaste(text);
    // A kill told only in words is answered by the kill or by the climb; either leads with finding what grows.
    expect(d?.category).toMatch(/^(?:host_oom_killed|growing_memory_leak)$/);
    expect(d?.fixes[0].summary).toMatch(/tracemalloc/);
  });
  it('a climb on the line that names the workers keeps the workers first (synthetic)', async () => {
    const d = await diagnosePaste('Killed\nWith num_workers=16 the RAM slowly increase as training progresses and then the job gets killed by the kernel.');
    expect(d?.fixes[0].summary).toMatch(/DataLoader workers/);
    expect(d?.fixes[0].summary).not.toMatch(/not the number of DataLoader worker/);
  });
});

describe('a question that fears a failure tells none, also beside a told climb', () => {
  it('real: YOLOv8 GPU_mem 2.8 -> 3.9 GB, "how do I know I won\'t run out of GPU memory hours into training?" (blind6 3816)', async () => {
    const d = await firstOfCase('blind6', '3816');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });
  // Synthetic: the fear alone, and beside a climb told in words.
  it('the fear alone is no failure (synthetic)', async () => {
    expect(await diagnosePaste("Question\nHow do I know it won't run out of GPU memory on a 12 GB card?")).toBeUndefined();
  });
  it('beside a told climb the climb answers, not an OOM (synthetic)', async () => {
    const d = await diagnosePaste("GPU memory keeps increasing during training\nHow do I know I won't run out of GPU memory after a few days?");
    expect(d?.category).toBe('growing_memory_leak');
  });
  it('an OOM that happened is still told beside the climb (synthetic)', async () => {
    const d = await diagnosePaste('GPU memory keeps increasing during training\nThen I run out of GPU memory at epoch 40.');
    expect(d?.category).toMatch(/^(?:growing_memory_leak|cuda_oom)$/);
  });
});
