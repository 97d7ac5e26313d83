// Issue 23: CUDA's error 214 ("uncorrectable ECC error encountered", cudaErrorECCUncorrectable) is the card's own memory
// reporting a hardware fault, whatever call surfaced it: retire the pages (reset / reboot), keep jobs off the card, report
// a card that repeats it. Never memory capacity, never the program's code. Real logs from confuse10 (a tuned group; URLs
// in its cases.json, labelled before the rule was written) and synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('An uncorrectable ECC error is the hardware', () => {
  it.each(['5524', '5525', '5526', '5527', '5528'])('real confuse10/%s', async (n) => {
    const d = await firstOfCase('confuse10', n);
    expect(d?.rule).toBe('gpu-ecc-uncorrectable');
    expect(first(d)).toMatch(/nvidia-smi -q -d ECC/);
  });

  // synthetic: the driver API's name, the runtime enum in PyTorch's hint, inside an NCCL wrapper
  it.each([
    ['driver API', 'jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered'],
    [
      'runtime enum',
      "torch.AcceleratorError: CUDA error: uncorrectable ECC error encountered\nSearch for `cudaErrorECCUncorrectable' in https://docs.nvidia.com/cuda/",
    ],
    ['under NCCL', "node2:311:420 [3] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'"],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('gpu-ecc-uncorrectable');
    expect(first(d)).not.toMatch(/\bbatch\b/i);
  });

  it('synthetic near miss: ECC counters reported as zero in nvidia-smi output are no error', async () => {
    const d = await diagnosePaste('Volatile Uncorr. ECC\n|   0  NVIDIA A100-SXM4-80GB  On | 00000000:07:00.0 Off |   0 |');
    expect(d?.rule).not.toBe('gpu-ecc-uncorrectable');
  });
});
