// Issue 23 item 5 (routes by the error, not by words in prose): CUDA's own "unknown error" while it initialises (old
// PyTorch's THCGeneral "cuda runtime error (30) : unknown error" from torch._C._cuda_init, the driver API's "failed call
// to cuInit: CUDA_ERROR_UNKNOWN"), or Caffe's cuBLAS handle that fails when Caffe starts, comes before any allocation:
// driver or module state, not another process and not the batch, even where the report's title says "out of memory".
// Only an allocation failure's own figures in the paste put a memory reading first (levers/driver-state.ts). Real logs:
// blind11 6678 and 6677 (read splits), arch14 7363 and 7364; the rest synthetic, written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const THC = 'THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=51 error=30 : unknown error';
const RT30 = 'RuntimeError: cuda runtime error (30) : unknown error at /pytorch/aten/src/THC/THCGeneral.cpp:51';

describe('CUDA that cannot start before anything is allocated is driver state, not memory', () => {
  it.each([
    ['blind11', '6678'],
    ['blind11', '6677'],
    ['arch14', '7363'],
    ['arch14', '7364'],
  ])('real %s/%s', async (group, n) => {
    const d = await firstOfCase(group, n);
    expect(d?.rule).toBe('cuda-init-unknown-error');
    expect(d?.category).toBe('driver_or_smi');
    expect(d?.fixes[0].summary).toMatch(/^Not this run's memory/);
    expect(d?.fixes[0].summary).not.toMatch(/CUDA_VISIBLE_DEVICES|halve|batch size/i);
  });

  it.each([
    [
      'a title that says out of memory',
      `RuntimeError: CUDA error: out of memory\n${THC}\n  File "x/torch/cuda/__init__.py", line 162, in _lazy_init\n    torch._C._cuda_init()\n${RT30}`,
    ],
    ['a Lua Torch cutorch line', 'luajit: cuda runtime error (30) : unknown error at /tmp/luarocks_cutorch-scm-1/cutorch/lib/THC/THCGeneral.c:70'],
    ['TensorFlow cuInit', 'E tensorflow/stream_executor/cuda/cuda_driver.cc:318] failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error'],
    ['Caffe start-up', "E0101 10:00:00.000000  123 common.cpp:114] Cannot create Cublas handle. Cublas won't be available."],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('cuda-init-unknown-error');
  });

  it('synthetic near miss: an allocation failure with its figures in the same paste keeps the memory reading', async () => {
    const d = await diagnosePaste(
      `RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 10.92 GiB total capacity; 8.10 GiB already allocated; 1.20 GiB free; 8.50 GiB reserved in total by PyTorch)\n${RT30}`,
    );
    expect(d?.rule).not.toBe('cuda-init-unknown-error');
    expect(d?.category).toBe('cuda_oom');
  });

  it("synthetic near miss: TF's start-up device line (freeMemory) is not an allocation failure's figure", async () => {
    const d = await diagnosePaste(`name: GeForce GTX 1080 major: 6 minor: 1\ntotalMemory: 7.92GiB freeMemory: 7.80GiB\n${RT30}`);
    expect(d?.rule).toBe('cuda-init-unknown-error');
  });

  it('synthetic near miss: a later cuda error with another number is not this rule', async () => {
    const d = await diagnosePaste('RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510');
    expect(d?.rule).not.toBe('cuda-init-unknown-error');
  });
});
