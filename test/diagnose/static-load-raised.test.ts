// Issue 23, the phase from the whole log: when the exception raised from an OOM names the step it broke ("Exception:
// Failed to load SDXL model", "ERROR:Failed to load the model."), the allocation was part of a model load: no batch
// had run, and the weights' levers (offload, fewer bytes per weight) come first. Real example: blind10 6262 (public
// thread, URL in its cases.json); the other texts are synthetic variants written from the principle. In process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const OOM =
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 7.50 GiB already allocated; 5.00 MiB free; 7.60 GiB reserved in total by PyTorch)';

describe('an exception raised from the OOM that names a failed model load sets the load phase', () => {
  it('real blind10/6262: ComfyUI-SUPIR "Failed to load SDXL model" at 7.28 of 8 GiB: the weights, offload first', async () => {
    const d = await firstOfCase('blind10', '6262');
    expect(d?.facts.phase).toBe('load');
    expect(first(d)).toMatch(/^The weights are what fills the card/);
    expect(first(d)).toMatch(/offload/);
  });

  it.each([
    ['Exception: Failed to load SDXL model', `${OOM}\n\nException: Failed to load SDXL model`],
    ['ERROR:Failed to load the model.', `${OOM}\nERROR:Failed to load the model.`],
    ['RuntimeError: Unable to load model', `${OOM}\nRuntimeError: Unable to load model weights`],
  ])('synthetic: %s', async (_name, text) => {
    expect((await diagnosePaste(text))?.facts.phase).toBe('load');
  });

  it.each([
    ['a load that did not fail', `${OOM}\nModel loaded in 3.2 s`],
    ['a dataset load failure is no model load', `${OOM}\nException: Failed to load dataset shard 3`],
    ['prose, not an exception line', `${OOM}\nI think it failed to load the model because of the card`],
  ])('synthetic near miss: %s', async (_name, text) => {
    expect((await diagnosePaste(text))?.facts.phase).not.toBe('load');
  });
});
