// Memory told as not given back per unit of the run (issue 23, recognition, R): "every iteration there are hundreds of
// megabytes of VRAM that are not freed up", "each step leaves memory that is never released", "每个step都有显存没有释放".
// What each unit leaves behind adds up: a climb (a leak to find), not a size to halve. Without the run's unit beside it,
// memory "not freed" is the cache or the end of a run, no climb. Real thread (blind8 read split) beside synthetic variants
// (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('memory not freed per unit of the run is a climb', () => {
  it('blind8/5638: imaginAIry repeats, "every iteration ... VRAM that are not freed up": find the leak', async () => {
    const d = await firstOfCase('blind8', '5638');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0]?.summary).toMatch(/memory_allocated|memory_summary/);
  });
  it.each([
    ['Generation loop\nAfter each step some GPU memory is not released, and after 300 images it fails.'],
    ['Inference server\nThe GPU memory is never freed per request iteration: with every iteration, more VRAM is not being freed.'],
    ['推理问题\n每个step都有显存没有释放，跑一会儿就爆显存'],
  ])('synthetic: %#', async (paste) => {
    expect((await diagnosePaste(paste))?.category).toBe('growing_memory_leak');
  });
  it('synthetic control: memory not freed after the run ends, no unit of the run, is no climb (memory held by an idle process)', async () => {
    expect((await diagnosePaste('Question\nAfter training finishes the GPU memory is not freed until I close Python.'))?.rule).toBe('idle-gpu-memory-held');
  });
});
