// Issue 23: /dev/shm named by the fixed names its writers give: Python's multiprocessing.shared_memory segments are
// /psm_<hex> (so ENOSPC on one is /dev/shm full), and torch.multiprocessing.spawn reports a child's signal as "process N
// terminated with signal SIGBUS" (a write into a shared mapping /dev/shm could not back). Real log from confuse10 (a
// tuned group; URL in its cases.json) and synthetic variants written from the principle (marked "synthetic"). In process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('torch.multiprocessing.spawn: a child terminated with SIGBUS is /dev/shm first', () => {
  it('real confuse10/5518: "ProcessExitedException: process 0 terminated with signal SIGBUS"', async () => {
    const d = await firstOfCase('confuse10', '5518');
    expect(d?.rule).toBe('rank-sigbus-shm');
    expect(first(d)).toMatch(/SIGBUS/);
  });

  // synthetic: the exception with and without its module, another rank
  it.each([
    ['module path', 'torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGBUS'],
    [
      'raised in join',
      '  File "/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 140, in join\nProcessExitedException: process 1 terminated with signal SIGBUS',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/\/dev\/shm/);
  });

  it('synthetic near miss: a child killed by SIGKILL is not SIGBUS', async () => {
    const d = await diagnosePaste('torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL');
    expect(d?.rule).not.toBe('rank-sigbus-shm');
  });
});

describe("ENOSPC on Python's shared-memory segment (/psm_...) is /dev/shm full", () => {
  // synthetic: SharedMemory(create=True) in a container, with and without its frame
  it.each([
    ['bare', "OSError: [Errno 28] No space left on device: '/psm_3d8a9c1f'"],
    [
      'with frame',
      '  File "/usr/lib/python3.11/multiprocessing/shared_memory.py", line 104, in __init__\n    self._fd = _posixshmem.shm_open(\nOSError: [Errno 28] No space left on device: \'/psm_0a1b2c3d4e\'',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
  });

  it('synthetic near miss: ENOSPC writing a checkpoint to disk is not /dev/shm', async () => {
    const d = await diagnosePaste("OSError: [Errno 28] No space left on device: '/data/ckpt/model_0005.pt'");
    expect(d?.category).not.toBe('shm_exhausted');
  });
});
