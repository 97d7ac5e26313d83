// Principle (issue 23, growth; session 36 h1): an OOM message says the card ran out, words that measure a climb against
// the run ("increases with each epoch", "OOM after several epochs" beside a leak told) say how it filled: with no readings
// to set against the card, such a climb leads and the OOM's figures follow. A climb told with no measure of the run leaves
// the message first. And a growth's first fix is its stack's: TensorFlow keeps what a loop adds to its graph (ops built per
// step, predict() per call in a loop), so its first fix names building ops once / graph.finalize() / predict_on_batch.
// Real cases from the read split blind7/blind6 beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TF_OOM = [
  '2019-06-06 20:04:31.386792: W tensorflow/core/common_runtime/bfc_allocator.cc:267] Allocator (GPU_0_bfc) ran out of memory trying to allocate 43.75MiB.  Current allocation summary follows.',
  '2019-06-06 20:04:31.396827: W tensorflow/core/framework/op_kernel.cc:1401] OP_REQUIRES failed at matmul_op.cc:478 : Resource exhausted: OOM when allocating tensor with shape[44800,256] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
].join('\n');
const TORCH_OOM =
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 12.56 MiB is free. Including non-PyTorch memory, this process has 23.63 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 310.11 MiB is reserved by PyTorch but unallocated.';

describe('a climb told over the run leads the OOM it ends in', () => {
  it('real: DCRNN (TF1), "memory leak ... OOM error after several epochs" with the BFC OOM (blind7 3919)', async () => {
    const d = await firstOfCase('blind7', '3919');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/graph\.finalize\(\)/);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });

  // Synthetic: a TensorFlow and a PyTorch OOM, each after words that measure the climb against the run.
  it.each([
    [`Memory grows\nThe GPU memory increases with each epoch and then this happens:\n${TF_OOM}`, /graph\.finalize\(\)/],
    [`OOM in epoch 12\nThe GPU memory usage keeps increasing after every epoch until it crashes:\n${TORCH_OOM}`, /memory_allocated\(\)/],
  ])("%#: the climb first, its stack's fix (synthetic)", async (text, fix) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(fix);
  });

  it('a climb told with no measure of the run leaves the OOM first (synthetic)', async () => {
    const d = await diagnosePaste(`Why?\nIs the GPU memory growing? I get this on the first batch:\n${TORCH_OOM}`);
    expect(d?.category).toBe('cuda_oom');
  });
});

describe("a TensorFlow growth's first fix is the graph's", () => {
  it('real: TF 2.0 predict() in a loop eats all RAM, gone on 1.14 (blind6 3817)', async () => {
    const d = await firstOfCase('blind6', '3817');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/predict_on_batch/);
  });
  it('a TF import alone names the stack (synthetic)', async () => {
    const d = await diagnosePaste('Leak\nimport tensorflow as tf\nThe GPU memory keeps increasing during training.');
    expect(d?.fixes[0].summary).toMatch(/graph\.finalize\(\)/);
  });
  it('a PyTorch growth keeps the allocator experiment (synthetic)', async () => {
    const d = await diagnosePaste('Leak\nimport torch\nThe GPU memory keeps increasing during training.');
    expect(d?.fixes[0].summary).toMatch(/memory_allocated\(\)/);
  });
});
