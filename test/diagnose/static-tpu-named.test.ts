// Issue 23, one environment is not assumed: a TPU is named by XLA's own error tag ("XLA:TPU compile permanent error")
// and by Cloud TPU's accelerator names ("TPU v2-8", "v3-8 TPU"), not only by libtpu / torch_xla. On a TPU the reply
// reads XLA's compile-time budget (arguments vs temporaries: shard the parameters and optimizer state over the cores),
// never the GPU allocator's XLA_PYTHON_CLIENT_MEM_FRACTION pool, which a TPU does not have. Real example: blind10 6258
// (public thread, URL in its cases.json); the other texts are synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const TPU_REPLY = /^This ran on a TPU/;
const HBM = (used: string, cap: string) =>
  `jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used ${used}G of ${cap}G hbm. Exceeded hbm capacity by 1.00G.`;

describe('a TPU named by XLA or by its accelerator type gets the TPU budget, not the GPU pool', () => {
  it('real blind10/6258: EasyDeL training on a TPU v2-8, 21.90G of 7.48G hbm: shard over the cores', async () => {
    const d = await firstOfCase('blind10', '6258');
    expect(first(d)).toMatch(TPU_REPLY);
    expect(first(d)).toMatch(/shard the parameters and optimizer state/);
    expect(first(d)).not.toMatch(/^JAX's allocator works inside a pool/);
  });

  it.each([
    ['XLA:TPU in the error alone', `trainer.train()\n${HBM('40.10', '15.48')}`],
    ['a TPU v3-8 named in prose', `Training on a TPU v3-8 VM\ntrainer.train()\n${HBM('40.10', '15.48').replace('XLA:TPU ', '')}`],
    ['a v4-8 TPU named in prose', `on a v4-8 TPU pod slice\n${HBM('40.10', '30.75').replace('XLA:TPU ', '')}`],
  ])('synthetic: %s', async (_name, text) => {
    expect(first(await diagnosePaste(text))).toMatch(TPU_REPLY);
  });

  it('synthetic near miss: XLA on a GPU (no TPU named) keeps the GPU pool reply', async () => {
    const text = `import jax\n2024-01-01 00:00:00.000000: W external/xla/xla/service/gpu/... \njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes.\nGPU 0: NVIDIA A100-SXM4-40GB`;
    expect(first(await diagnosePaste(text))).not.toMatch(TPU_REPLY);
  });
  it('synthetic near miss: a T4 or a "v2" version number is no TPU', async () => {
    const text =
      'Tesla T4, model v2-1 checkpoint\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total capacity; 14.50 GiB already allocated; 10.00 MiB free; 14.60 GiB reserved in total by PyTorch)';
    expect(first(await diagnosePaste(text))).not.toMatch(TPU_REPLY);
  });
});
