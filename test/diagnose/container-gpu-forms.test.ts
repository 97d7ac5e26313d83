// A container sees a GPU only when the runtime hands it the devices (docker --gpus through the NVIDIA Container Toolkit).
// Fixed messages of that path: docker's 'could not select device driver "" with capabilities: [[gpu]]', libnvidia-
// container's "nvidia-container-cli: initialization error", NGC images' "The NVIDIA Driver was not detected" banner; and
// the CUDA runtime's 803 (user-mode driver and kernel module of different versions), the same state NVML calls
// "Driver/library version mismatch". Real logs: recog11/5959-5964 (tuned, labelled before running); variants from the
// messages (synthetic). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('the container was not given the GPUs', () => {
  it.each(['5959', '5960', '5962', '5964'])('real recog11/%s', async (n) => {
    const d = await firstOfCase('recog11', n);
    expect(d?.rule).toBe('container-gpu-not-passed');
    expect(first(d)).toMatch(/--gpus all/);
  });

  // synthetic: the daemon's, the toolkit's and the images' wordings
  it.each([
    ['daemon, named driver', 'Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]]'],
    ['daemon, old wording', 'docker: Error response from daemon: could not select device driver with capabilities: [[gpu]].'],
    ['runtime name', 'docker: Error response from daemon: unknown or invalid runtime name: nvidia.'],
    [
      'toolkit hook',
      'nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.',
    ],
    [
      'banner',
      '== PyTorch ==\nWARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n   Use the NVIDIA Container Toolkit to start this container with GPU support',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('container-gpu-not-passed');
    expect(d?.category).toBe('driver_or_smi');
  });

  it('synthetic: the banner followed by a CUDA OOM is the OOM (the GPU was there)', async () => {
    const d = await diagnosePaste(
      'WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.05 GiB is free.',
    );
    expect(d?.category).toBe('cuda_oom');
  });
});

describe("the CUDA runtime's 803 is a driver/library mismatch", () => {
  it.each([
    ['torch', 'RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination'],
    ['name', 'cudaErrorSystemDriverMismatch'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('nvml-driver-library-mismatch');
    expect(first(d)).toMatch(/Reboot/);
  });
});
