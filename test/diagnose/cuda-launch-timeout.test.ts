// cudaErrorLaunchTimeout (6): "the launch timed out and was terminated" is the display watchdog of a GPU that also drives
// a display (Windows TDR under WDDM, Linux with X on that GPU) stopping a long kernel. The fixed message, not a thread's
// words, decides: a driver/device setting, never a memory lever. Real logs: torchcat11/6006-6009 (tuned); variants
// written from the message (synthetic). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('CUDA launch timeout: the display watchdog, not memory', () => {
  it('real torchcat11/6006 (Tesla M40 under WDDM)', async () => {
    const d = await firstOfCase('torchcat11', '6006');
    expect(d?.rule).toBe('cuda-launch-timeout');
    expect(first(d)).toMatch(/TCC|TdrDelay/);
  });

  // synthetic: the message through PyTorch's wrappers, old THC, the driver API and other frameworks
  it.each([
    ['torch 2.x', 'RuntimeError: CUDA error: the launch timed out and was terminated\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.'],
    ['accelerator error, rank prefix', '[rank0]: torch.AcceleratorError: CUDA error: the launch timed out and was terminated'],
    ['THC', 'RuntimeError: cuda runtime error (6) : the launch timed out and was terminated at /pytorch/aten/src/THC/generic/THCStorage.cpp:36'],
    ['driver API', 'pycuda._driver.LaunchError: cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_TIMEOUT'],
    ['runtime enum', 'CUDA Runtime Error: cudaErrorLaunchTimeout in kernel.cu:88'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('cuda-launch-timeout');
    expect(d?.category).toBe('driver_or_smi');
    expect(first(d)).not.toMatch(/\bbatch\b/i);
  });

  // near misses: other timeouts keep their own readings
  it.each([
    [
      'NCCL watchdog',
      '[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800525 milliseconds before timing out.',
      'nccl-collective-timeout',
    ],
    ['DataLoader timeout', 'RuntimeError: DataLoader timed out after 120 seconds', undefined],
  ])('synthetic near miss: %s', async (_name, text, rule) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe(rule);
  });
});
