// Principle (issue 23): a large "reserved but unallocated" figure inside an evaluation that keeps its graphs (a
// script's own loop with no no_grad shown, or a report that says gradients are on) is not fragmentation: the kept
// graphs pin blocks between the freed temporaries and fill the card, so no_grad / inference_mode comes first and the
// allocator setting does not. Under no_grad (the decorator's frame) or in a training step the same figures stay the
// allocator's layout. All synthetic, written from the principle (PyTorch 2.x's message format).
import { describe, expect, it } from 'vitest';
import { diagnosePaste } from './corpus-case.js';

const S = '/opt/conda/lib/python3.10/site-packages';
const f = (file: string, fn: string, code: string) => [`  File "${file}", line 88, in ${fn}`, `    ${code}`];
const oom = (tried: string, alloc: string, idle: string) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried}. GPU 0 has a total capacity of 23.65 GiB of which 310.00 MiB is free. Of the allocated memory ${alloc} is allocated by PyTorch, and ${idle} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.`;
const TRAINED = 'Epoch 1: 100%|██████████| 500/500 [01:10<00:00, loss=0.41]';
const FORWARD = f(`${S}/torch/nn/modules/module.py`, '_call_impl', 'return forward_call(*args, **kwargs)');
const paste = (frames: string[][], error: string) => [TRAINED, 'Traceback (most recent call last):', ...frames.flat(), ...FORWARD, error].join('\n');

describe('idle cache beside an evaluation that keeps its graphs is not fragmentation', () => {
  it.each([
    ['validate()', 'validate', '1.20 GiB', '15.90 GiB', '6.90 GiB'],
    ['evaluate_model()', 'evaluate_model', '512.00 MiB', '19.10 GiB', '3.80 GiB'],
    ['test_epoch()', 'test_epoch', '2.00 GiB', '12.40 GiB', '10.60 GiB'],
  ])("a script's own %s with no no_grad: kept graphs, no_grad first", async (_n, fn, tried, alloc, idle) => {
    const d = await diagnosePaste(paste([f('train.py', 'main', `m = ${fn}(model, loader)`), f('train.py', fn, 'out = model(x)')], oom(tried, alloc, idle)));
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/no_grad|inference_mode/);
    expect(d?.fixes[0].summary).not.toMatch(/expandable_segments/);
  });

  it("the same figures under the no_grad decorator stay the allocator's layout", async () => {
    const d = await diagnosePaste(
      paste(
        [
          f('train.py', 'main', 'm = validate(model, loader)'),
          f(`${S}/torch/utils/_contextlib.py`, 'decorate_context', 'return func(*args, **kwargs)'),
          f('train.py', 'validate', 'out = model(x)'),
        ],
        oom('1.20 GiB', '15.90 GiB', '6.90 GiB'),
      ),
    );
    expect(d?.category).toBe('fragmentation');
  });

  it("the same figures in a training step stay the allocator's layout", async () => {
    const d = await diagnosePaste(
      paste([f('train.py', 'main', 'loss = train_step(model, b)'), f('train.py', 'train_step', 'out = model(x)')], oom('1.20 GiB', '15.90 GiB', '6.90 GiB')),
    );
    expect(d?.category).toBe('fragmentation');
  });
});
