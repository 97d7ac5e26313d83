// /dev/shm told growing until the run fails (issue 23, shm): what the workers leave there fills it. Paddle's own
// DataLoader key (use_shared_memory=True) beside it names Paddle's levers (use_shared_memory=False, --shm-size).
// Synthetic variants written from the forms (Chinese and English, with and without Paddle's key) beside the real
// blind9 thread; /dev/shm that stays flat is not read.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';

describe('/dev/shm told growing: shared memory, not the disk or the GPU', () => {
  it.each([
    ["Paddle's key, Chinese", 'DataLoader(dataset, num_workers=8, use_shared_memory=True) 训练时 /dev/shm 越来越大，最后报错退出', /use_shared_memory=False/],
    ["Paddle's key, English", 'With use_shared_memory=True the /dev/shm usage keeps growing during training until the job dies', /use_shared_memory=False/],
    ['no key, Chinese', '训练一段时间后 /dev/shm 一直增长，最后程序崩溃', /\/dev\/shm/],
    ['no key, English', 'The /dev/shm keeps filling up as the epochs go by and then the workers crash', /\/dev\/shm/],
  ])('synthetic: %s', async (_name, text, fix) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(fix);
  });
  it('synthetic near miss: /dev/shm said to stay flat is no shm diagnosis', async () => {
    const d = await diagnosePaste('/dev/shm stays at 2% the whole run; the GPU utilisation is low');
    expect(d?.category).not.toBe('shm_exhausted');
  });
  it('real thread (blind9/5717, Paddle DataLoader with use_shared_memory=True)', async () => {
    const d = await firstOfCase('blind9', '5717');
    expect(d?.rule).toBe('paddle-shm-mmap');
    expect(first(d)).toMatch(/use_shared_memory=False/);
  });
});
