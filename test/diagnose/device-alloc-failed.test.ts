// A failed device allocation in the runtimes' fixed vocabulary (knowledge/device-alloc-failed): the verb with the
// device memory it wanted, or the API's own error name (Vulkan, OpenCL, Ascend CANN), from a library no other rule
// knows. It is a GPU out-of-memory answer whose first fix is the experiment that decides, with no framework's flags.
// ggml's Vulkan backend has its own form in ggml-cuda-buffer-alloc (llama.cpp's levers, no GPU index it never printed).
// Real: the Ascend runtime log of hw-native-sys/PTOAS#341 (the rule's match/); the rest is written from the formats
// (synthetic). In process, a few seconds.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { diagnosePaste } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('a library that could not allocate device memory', () => {
  it('real: the Ascend runtime\'s "allocate device memory failed" (PTOAS#341)', async () => {
    const d = await diagnosePaste(readFileSync('knowledge/device-alloc-failed/match/ptoas-341-ascend-device-memory.log', 'utf8'));
    expect(d?.rule).toBe('device-alloc-failed');
    expect(first(d)).toMatch(/npu-smi info/);
  });

  // synthetic: the verb and the memory, and the APIs' names
  it.each([
    ['failed to allocate on a device', '[foolib] error: failed to allocate 512 MB on device 0'],
    ['unable to allocate device memory', 'FooError: Unable to allocate 2.5 GiB of device memory'],
    ['could not allocate GPU memory in a C++ log', 'E0101 12:00:00.123 allocator.cc:12] Could not allocate 1073741824 bytes of GPU memory'],
    ['out of device memory', 'RuntimeError: out of device memory (requested 268435456 bytes)'],
    ['OpenCL', 'clEnqueueNDRangeKernel failed: CL_MEM_OBJECT_ALLOCATION_FAILURE'],
    ['Vulkan', 'vk::Device::allocateMemory: ErrorOutOfDeviceMemory'],
    ['Vulkan C name', 'VkResult VK_ERROR_OUT_OF_DEVICE_MEMORY while creating the image'],
    ['GPU memory allocation failed', '[engine] GPU memory allocation failed for layer conv1'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('device-alloc-failed');
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/smallest input decides/);
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  it.each([
    ['pinned host memory', 'E0101 gpu_host_allocator.cc:44] could not allocate pinned host memory of size: 4294967296'],
    ['NumPy', 'numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.43 GiB for an array with shape (1000, 1000, 460) and data type float64'],
    ['prose without a failure', 'How do I know how much device memory my model needs?'],
  ])('synthetic near miss: %s is not this rule', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).not.toBe('device-alloc-failed');
  });

  it("synthetic: ggml's Vulkan failure gets llama.cpp's levers and names no GPU index it never printed", async () => {
    const d = await diagnosePaste(
      'ggml_vulkan: Device memory allocation of size 118497280 failed.\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n',
    );
    expect(d?.rule).toBe('ggml-cuda-buffer-alloc');
    expect(first(d)).toMatch(/--ctx-size/);
    expect(first(d)).toMatch(/GGML_VK_FORCE_MAX_ALLOCATION_SIZE/);
    expect(first(d)).not.toMatch(/\{gpuIndex\}/);
  });
});
