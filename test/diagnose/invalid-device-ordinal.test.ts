// "invalid device ordinal" is cudaGetErrorString(cudaErrorInvalidDevice) (HIP and the driver API alike; XLA prints
// "Invalid device ordinal value (N). Valid range is [0, M]."): the run names a GPU index this process cannot see,
// before any memory is used. Label policy since stop 38: a device-setup error, the driver_or_smi family beside
// cuda-no-visible-device, so the reply names the index and CUDA_VISIBLE_DEVICES, never a batch or memory setting.
// Real logs: the old groups' relabelled cases (holdout 866-868, sealed 958-960, unseen 1169-1170, blind7/3989);
// the variants below are written from the format strings (synthetic). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('"invalid device ordinal": the run names a GPU index the process does not have', () => {
  it.each([
    ['holdout', '866'],
    ['sealed', '958'],
    ['unseen', '1169'],
  ])('real %s/%s', async (group, file) => {
    const d = await firstOfCase(group, file);
    expect(d?.category).toBe('driver_or_smi');
    expect(first(d)).toMatch(/CUDA_VISIBLE_DEVICES/);
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  // synthetic: the message through its runtimes, wrappers and versions
  it.each([
    ['torch runtime', 'RuntimeError: CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported'],
    ['rank prefix', '[rank5]: torch.AcceleratorError: CUDA error: invalid device ordinal'],
    ['driver API', 'CUDA_ERROR_INVALID_DEVICE: invalid device ordinal'],
    ['HIP', 'RuntimeError: HIP error: invalid device ordinal'],
    ['XLA', 'jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: Invalid device ordinal value (1). Valid range is [0, 0].'],
    [
      'torch.load',
      'RuntimeError: Attempting to deserialize object on CUDA device 3 but torch.cuda.device_count() is 1. Please use torch.load with map_location',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('cuda-invalid-device-ordinal');
    expect(d?.category).toBe('driver_or_smi');
    expect(first(d)).toMatch(/CUDA_VISIBLE_DEVICES/);
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  it('synthetic near miss: "invalid device function" (no kernel image for the card) is not an index error', async () => {
    const d = await diagnosePaste('RuntimeError: CUDA error: invalid device function');
    expect(d?.rule).not.toBe('cuda-invalid-device-ordinal');
  });
});
