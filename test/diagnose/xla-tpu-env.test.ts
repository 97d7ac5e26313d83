// Issue 23 item 4-5, a non-PyTorch stack's own device: XLA names the device it compiled for in its fixed error text
// ("RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm"). That run is on a TPU,
// whose memory is each core's HBM: XLA_PYTHON_CLIENT_MEM_FRACTION (a GPU pool setting) and nvidia-smi do not apply,
// and the compiled program's size against the core is the lever. Real examples: blind10 6258 and stack13 6960 (public
// threads, URLs in their cases.json); the other texts are synthetic variants written from the principle, with a JAX-on-GPU
// near miss that keeps the GPU pool advice. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TPU_REPLY = /This ran on a TPU/;
const first = async (text: string) => (await diagnosePaste(text))?.fixes[0]?.summary ?? '';

describe("XLA's own device name in its error: a TPU's HBM, not a GPU pool", () => {
  it('real blind10/6258: XLA:TPU compile error on a TPU v2 core (1.1B full training)', async () => {
    const s = (await firstOfCase('blind10', '6258'))?.fixes[0]?.summary ?? '';
    expect(s).toMatch(TPU_REPLY);
    expect(s).toMatch(/shard/);
    expect(s).not.toMatch(/^JAX's allocator works inside a pool/);
  });
  it('real stack13/6960: XLA:TPU on a v4 core, program temporaries', async () => {
    expect((await firstOfCase('stack13', '6960'))?.fixes[0]?.summary).toMatch(TPU_REPLY);
  });
  it.each([
    [
      'compile error, jaxlib',
      'jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 18.20G of 15.48G hbm. Exceeded hbm capacity by 2.72G.',
    ],
    [
      'runtime error, bad StatusOr (torch_xla words absent)',
      'RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 40.1G of 31.25G hbm.',
    ],
    [
      'Flax training traceback',
      '  File "train.py", line 88, in train_step\n    state, loss = p_train_step(state, batch)\njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 9.1G of 7.48G hbm.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    expect(await first(text)).toMatch(TPU_REPLY);
  });
  it('synthetic near miss: JAX on a GPU keeps its pool advice, not the TPU one', async () => {
    const gpu =
      'jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4294967296 bytes.\nBufferAssignment OOM Debugging.';
    expect(await first(gpu)).not.toMatch(TPU_REPLY);
  });
});
