// Issue 23: CUDA's error 222 ("the provided PTX was compiled with an unsupported toolchain", cudaErrorUnsupportedPtxVersion)
// names the installation, not the program: the kernels were compiled by a newer CUDA toolkit than the driver supports.
// It is a driver/toolkit mismatch to fix, never memory. Real logs from confuse10 (a tuned group; URLs in its cases.json,
// labelled before the rule was written) and synthetic variants written from the principle (marked "synthetic").
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('An unsupported PTX toolchain is a driver older than the toolkit', () => {
  it.each(['5519', '5520', '5521', '5522', '5523'])('real confuse10/%s', async (n) => {
    const d = await firstOfCase('confuse10', n);
    expect(d?.rule).toBe('cuda-ptx-toolchain');
    expect(first(d)).toMatch(/nvidia-smi/);
  });

  // synthetic: PyTorch's, the driver API's and a C++ check's spellings
  it.each([
    ['torch', 'torch.AcceleratorError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\nSearch for `cudaErrorUnsupportedPtxVersion`'],
    ['driver API', 'RuntimeError: cuModuleLoadData failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION'],
    ['C++ check', 'GPUassert: the provided PTX was compiled with an unsupported toolchain. kernel.cu 88'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('driver_or_smi');
    expect(first(d)).not.toMatch(/\bbatch\b/i);
  });

  it('synthetic near miss: "no kernel image" is a build without this GPU\'s architecture, not the PTX toolchain', async () => {
    const d = await diagnosePaste('RuntimeError: CUDA error: no kernel image is available for execution on the device');
    expect(d?.rule).toBe('cuda-arch-unsupported');
  });
});
