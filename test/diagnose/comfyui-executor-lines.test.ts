// ComfyUI named by its executor's own lines (issue 23, F): execution.py logs "Got an OOM, unloading all loaded models."
// when a node raises the OOM and adds "TIPS: If the workflow worked before you might have accidentally set the
// batch_size to a large number." to the error. A paste that keeps only those lines (no path, no "ComfyUI") is ComfyUI's
// serving run: its own memory knobs (--lowvram / --novram offload), not a training batch experiment. Real thread
// (series11, tuned, labelled before running) beside synthetic variants (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe("ComfyUI's executor lines name the tool", () => {
  it('series11/5860: HunyuanVideo wrapper on a 3090, only "Got an OOM, unloading all loaded models.": offload first', async () => {
    expect((await firstOfCase('series11', '5860'))?.fixes[0]?.summary).toMatch(/^ComfyUI is serving[\s\S]*--lowvram/);
  });
  it.each([
    'torch.OutOfMemoryError: Allocation on device \n\nGot an OOM, unloading all loaded models.',
    'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\nThis error means you ran out of memory on your GPU.\n\nTIPS: If the workflow worked before you might have accidentally set the batch_size to a large number.',
  ])('synthetic: %#', async (paste) => {
    expect((await diagnosePaste(paste))?.fixes[0]?.summary).toMatch(/^ComfyUI is serving/);
  });
  it('synthetic control: a bare allocation error with no executor line is no ComfyUI run', async () => {
    expect((await diagnosePaste('torch.OutOfMemoryError: Allocation on device'))?.fixes[0]?.summary ?? '').not.toMatch(/^ComfyUI/);
  });
});
