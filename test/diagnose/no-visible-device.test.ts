// "No CUDA GPUs are available" is c10's device_count_ensure_non_zero (c10/cuda/CUDAFunctions.cpp): the CUDA build runs
// and the driver answered with zero devices (cudaErrorNoDevice). A CPU-only build says "Torch not compiled with CUDA
// enabled" and a missing driver "Found no NVIDIA driver", so the first fix is the device mask (CUDA_VISIBLE_DEVICES,
// a container or job given no GPU), not a reinstall. Real log: blind8/5676 (read split); variants written from the
// message (synthetic). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('"No CUDA GPUs are available": the devices are hidden from the process', () => {
  it('real blind8/5676 (a launch script, set_device at start-up)', async () => {
    const d = await firstOfCase('blind8', '5676');
    expect(d?.rule).toBe('cuda-no-visible-device');
    expect(first(d)).toMatch(/CUDA_VISIBLE_DEVICES/);
    expect(first(d)).not.toMatch(/^Install/);
  });

  // synthetic: the message as torch raises it through its wrappers and versions
  it.each([
    ['bare', 'RuntimeError: No CUDA GPUs are available'],
    ['rank prefix', '[rank3]: RuntimeError: No CUDA GPUs are available'],
    ['accelerator error', 'torch.AcceleratorError: No CUDA GPUs are available\n  File "train.py", line 12, in <module>'],
    [
      'lazy init frame',
      '  File "/usr/lib/python3/site-packages/torch/cuda/__init__.py", line 302, in _lazy_init\n    torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('cuda-no-visible-device');
    expect(d?.category).toBe('driver_or_smi');
    expect(first(d)).toMatch(/CUDA_VISIBLE_DEVICES/);
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  it('synthetic: a CPU-only build is still told to install a CUDA build', async () => {
    const d = await diagnosePaste('AssertionError: Torch not compiled with CUDA enabled');
    expect(d?.rule).toBe('torch-cuda-unavailable');
    expect(first(d)).toMatch(/Install a CUDA build/);
  });
});
