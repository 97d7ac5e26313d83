// PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp) asks NVML for the processes on the card only while it
// writes a CUDA out-of-memory message. Where NVML cannot answer (a MIG slice, a container, Jetson, a driver upgraded
// under a running module) the OOM surfaces as `NVML_SUCCESS == r INTERNAL ASSERT FAILED at
// ".../CUDACachingAllocator.cpp":LINE` (pytorch/pytorch#112377, #185240). The format, not a thread's words, decides:
// it is a CUDA OOM. Real logs: torchcat11/6000-6005 (tuned); variants written from the format (synthetic). In process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('NVML assert in the caching allocator: a CUDA OOM whose message failed', () => {
  it('real torchcat11/6000 (MIG slice, predict)', async () => {
    const d = await firstOfCase('torchcat11', '6000');
    expect(d?.category).toBe('cuda_oom');
  });

  // synthetic: the assert as the allocator's PyTorch versions and builds print it
  it.each([
    [
      '2.1 conda build, line 1154',
      'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/opt/conda/conda-bld/pytorch_1695392020201/work/c10/cuda/CUDACachingAllocator.cpp":1154, please report a bug to PyTorch.',
    ],
    [
      '2.4 wheel, line 995, rank prefix',
      '[rank0]: RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":995, please report a bug to PyTorch.',
    ],
    [
      'nvmlInit variant',
      'RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlInit_v2_() INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":813, please report a bug to PyTorch.',
    ],
    [
      'PCI bus id variant',
      'RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( pci_id, &nvml_device) INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":815, please report a bug to PyTorch.',
    ],
    [
      '2.7 source path',
      'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1016, please report a bug to PyTorch.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(`Traceback (most recent call last):\n  File "run.py", line 9, in <module>\n    y = net(x)\n${text}`);
    expect(d?.category).toBe('cuda_oom');
  });

  // near misses: NVML failing outside the allocator is a driver state, and other internal asserts are no OOM
  it.each([
    ['nvidia-smi mismatch', 'Failed to initialize NVML: Driver/library version mismatch', 'driver_or_smi'],
    [
      'assert elsewhere',
      'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "../aten/src/ATen/cuda/CUDAContext.cpp":50, please report a bug to PyTorch.',
      undefined,
    ],
  ])('synthetic near miss: %s', async (_name, text, category) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe(category);
  });
});
