// Principle (issue 23, another holder; TF preallocation): each TensorFlow process reserves nearly all free memory of its
// GPU as it starts, so when the paste shows TF's discovery figures with the card nearly free for one process and mostly
// held for a later one, or most of it held while the report tells that two programs, models or instances are meant to
// run together, the holder is the user's own first TF process and the lever is each process's reservation
// (allow_growth / set_memory_growth / a memory fraction), not the batch and not stopping a stranger's job. Not when the
// report tells the first should have ended (a leftover: free it), nor for one discovery with most held and nothing told.
// Gate (issue 23): the principle reached none of 15 unseen threads on its first run, so its rule sits below every message
// rule: it answers where none does (TF's discovery figures quoted without an error line) and is a later step elsewhere.
// The first block holds the real read-split cases that prompted it; every other paste is SYNTHETIC, written from TF's
// fixed discovery and OOM formats and from the principle, with other cards, figures and sentences.
import { describe, expect, it } from 'vitest';
import { readTfStartFree } from '../../src/diagnose/levers/tf-start-free.js';
import { readTfTogether } from '../../src/diagnose/levers/tf-own-processes.js';
import { diagnoseAll, diagnosePaste, firstOfCase } from './corpus-case.js';
import { resolve } from 'node:path';

const RULE = 'tensorflow-own-processes-preallocate';
const caseFile = (g: string, f: string) => resolve(import.meta.dirname, '../fixtures/untuned', g, f);

const RESERVATION = /set_memory_growth|allow_growth|memory_fraction/;

describe('real read-split cases', () => {
  it('blind11/6687: no error line, the later TF process found the card held: the reservation answers first', async () => {
    const d = await firstOfCase('blind11', '6687');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.rule).toBe(RULE);
    expect(d?.fixes[0].summary).toMatch(RESERVATION);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });
  it("blind11/6686: beside TF's OOM message, two programs run together: the reservation is a later diagnosis", async () => {
    const ds = await diagnoseAll(caseFile('blind11', '6686-cuda_oom.log'));
    expect(ds[0].rule).not.toBe(RULE);
    expect(ds.map((d) => d.rule)).toContain(RULE);
  });
  it('blind12/7197 (near miss): the same program run a second time, one by one: the leftover is freed', async () => {
    const ds = await diagnoseAll(caseFile('blind12', '7197-cuda_oom.log'));
    expect(ds.map((d) => d.rule)).not.toContain(RULE);
    expect(ds[0].fixes[0].summary).toMatch(/another process/i);
  });
});

const found = (gpu: number, total: string, free: string) =>
  [
    `2019-03-01 09:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1433] Found device ${gpu} with properties: `,
    'name: GeForce GTX 1080 Ti major: 6 minor: 1 memoryClockRate(GHz): 1.582',
    'pciBusID: 0000:03:00.0',
    `totalMemory: ${total} freeMemory: ${free}`,
  ].join('\n');
const oom =
  'tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[16,128,64,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc';

describe('readTfStartFree: a later discovery of the same GPU that found it held (synthetic)', () => {
  it('free at the first process, held at the second', () => {
    expect(readTfStartFree(`${found(0, '10.92GiB', '10.50GiB')}\n${found(0, '10.92GiB', '512.00MiB')}`)).toMatchObject({
      tfStartHeld: undefined,
      tfLaterHeld: '10.42 GiB',
    });
  });
  it('near miss: the same process finding its second GPU held by someone else is no second process', () => {
    expect(readTfStartFree(`${found(0, '10.92GiB', '10.50GiB')}\n${found(1, '10.92GiB', '300.00MiB')}`).tfLaterHeld).toBeUndefined();
  });
  it('near miss: both discoveries found the card free', () => {
    expect(readTfStartFree(`${found(0, '10.92GiB', '10.50GiB')}\n${found(0, '10.92GiB', '9.80GiB')}`).tfLaterHeld).toBeUndefined();
  });
});

describe('readTfTogether: the report tells programs that run together, or a first that should be gone (synthetic)', () => {
  it.each([
    'I want to run both on one K80.',
    'It fails when I run two programs at the same time.',
    'It only fails when I run two or more instances of the script.',
    'Loading the second model shows almost no free memory.',
    'it works for one model but not in a multi model setup',
    '我想同时运行两个模型',
  ])('together: %s', (s) => expect(readTfTogether(s).together).toBe(true));
  it.each(['I ran the same script a second time and it failed.', 'I run them one by one.', 'the first process is still alive after Ctrl+C'])(
    'sequential: %s',
    (s) => expect(readTfTogether(s).sequential).toBe(true),
  );
});

describe('the replies (synthetic)', () => {
  it('two discoveries quoted, the second held, no error line: the reservation first', async () => {
    const d = await diagnosePaste(`first process:\n${found(0, '11.17GiB', '11.02GiB')}\nsecond process:\n${found(0, '11.17GiB', '402.12MiB')}`);
    expect(d?.rule).toBe(RULE);
    expect(d?.fixes[0].summary).toMatch(RESERVATION);
  });
  it('two discoveries and a TF OOM: the message rule first, the reservation a later diagnosis', async () => {
    const ds = await diagnoseAll('-', `first process:\n${found(0, '11.17GiB', '11.02GiB')}\nsecond process:\n${found(0, '11.17GiB', '402.12MiB')}\n${oom}`);
    expect(ds.map((d) => d.rule)).toContain(RULE);
  });
  it('no figures, TF OOM, two instances of the script told: the reservation a later diagnosis', async () => {
    const ds = await diagnoseAll('-', `It only fails when I start two instances of the script at once.\n${oom}`);
    expect(ds.map((d) => d.rule)).toContain(RULE);
  });
  it('near miss: one discovery held, nothing told of a second program: another process is freed', async () => {
    const ds = await diagnoseAll('-', `${found(0, '7.92GiB', '310.50MiB')}\n${oom}`);
    expect(ds.map((d) => d.rule)).not.toContain(RULE);
    expect(ds[0].fixes[0].summary).toMatch(/another process|CUDA_VISIBLE_DEVICES/i);
  });
  it('near miss: held, but the first run should have ended (second time)', async () => {
    const ds = await diagnoseAll('-', `The script worked once; the second time it fails.\n${found(0, '7.92GiB', '310.50MiB')}\n${oom}`);
    expect(ds.map((d) => d.rule)).not.toContain(RULE);
  });
  it('near miss: two models told but no separate processes, no figures: no reservation verdict', async () => {
    const ds = await diagnoseAll('-', `I load a second model in the same script.\n${oom}`);
    expect(ds.map((d) => d.rule)).not.toContain(RULE);
  });
  it('near miss: two programs told, but the card was free at start', async () => {
    const ds = await diagnoseAll('-', `I run two programs at the same time.\n${found(0, '10.92GiB', '10.61GiB')}`);
    expect(ds.map((d) => d.rule)).not.toContain(RULE);
  });
});
