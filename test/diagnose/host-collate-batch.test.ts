// Principle (issue 23, host RAM levers with evidence; session 36 h1): PyTorch's host allocator failing inside the
// DataLoader fetcher's collate ("return self.collate_fn(data)") was asked for one collated batch, built in host RAM by
// every worker that prefetches: the batch is the first lever, then workers / prefetch. A collate called elsewhere (a RAM
// cache of the whole set) is no batch. The real arcgis.learn report (blind6 3881) beside synthetic variants.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const frames = (collate: string, error: string) =>
  [
    'RuntimeError: Caught RuntimeError in DataLoader worker process 0.',
    'Original Traceback (most recent call last):',
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop',
    '    data = fetcher.fetch(index)',
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/fetch.py", line 54, in fetch',
    '    return self.collate_fn(data)',
    collate,
    error,
  ].join('\n');

describe('a host allocation in the DataLoader collate is the batch', () => {
  it('real: arcgis.learn batch 128 at 512 px, 402,653,184 bytes in _bb_pad_collate (blind6 3881)', async () => {
    const d = await firstOfCase('blind6', '3881');
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(/^The host allocation failed while the DataLoader collated a batch/);
  });
  it.each([
    [
      frames(
        '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/collate.py", line 162, in collate_tensor_fn\n    return torch.stack(batch, 0, out=out)',
        "RuntimeError: [enforce fail at alloc_cpu.cpp:114] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 1610612736 bytes. Error code 12 (Cannot allocate memory)",
      ),
    ],
    [
      frames(
        '  File "/home/u/proj/data.py", line 40, in pad_collate\n    return torch.cat(videos, 0)',
        "RuntimeError: [enforce fail at CPUAllocator.cpp:68] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 805306368 bytes. Error code 12 (Cannot allocate memory)",
      ),
    ],
  ])('%#: the batch first (synthetic)', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(/Lower the batch size first/);
  });
  it('a collate called for a RAM cache of the whole set is no batch (synthetic)', async () => {
    const text =
      '  File "/home/u/proj/cache.py", line 12, in cache_images\n    self.images = self.collate_fn(all_images)\nRuntimeError: [enforce fail at alloc_cpu.cpp:80] data. DefaultCPUAllocator: not enough memory: you tried to allocate 34359738368 bytes.';
    const d = await diagnosePaste(text);
    expect(d?.fixes[0].summary ?? '').not.toMatch(/collated a batch/);
  });
});
