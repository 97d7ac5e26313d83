// MindSpore reports memory failures in its own words (issue 23 item 5: route by the stack's own message): its dynamic
// allocator's "TotalUsedMemStatistics : N plus ... alloc size : N is more than total mem size : N" is the device pool
// (mindspore-device-memory), and MindData's "cudaHostAlloc failed, ret[2], out of memory" is pinned host memory, not the
// GPU's (pinned-host-alloc-failed, with cudaMallocHost's form). Real examples are cases of the read split blind6 (real
// public threads, its cases.json); the others are synthetic variants written from those fixed messages, and say so.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;

describe("MindSpore's allocator and pinned host memory messages", () => {
  it(
    'real: blind6/3889 (the dynamic allocator on an Ascend NPU) and 3888 (MindData cudaHostAlloc under WSL2)',
    async () => {
      expect((await firstOfCase('blind6', '3889'))?.rule).toBe('mindspore-device-memory');
      const pinned = await firstOfCase('blind6', '3888');
      expect(pinned?.rule).toBe('pinned-host-alloc-failed');
      expect(pinned!.fixes[0].summary).toMatch(/^This is page-locked \(pinned\) host memory, not the GPU's.*dataset_sink_mode=False/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the allocator line on a GPU with other sizes; cudaMallocHost failing in a loader; a GPU OOM stays a GPU OOM',
    async () => {
      expect(
        (
          await diagnosePaste(
            '[ERROR] PRE_ACT(1234,7f00,python):2024-01-01-10:00:00.000.000 [mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics : 15032385536 plus TotalUsedByEventMemStatistics : 0 and plus alloc size : 1073741824 is more than total mem size : 15569256448.\n',
          )
        )?.rule,
      ).toBe('mindspore-device-memory');
      expect(
        (
          await diagnosePaste(
            'terminate called after throwing an instance of std::runtime_error\n  what():  cudaMallocHost(&buf, 4294967296) failed: out of memory\n',
          )
        )?.rule,
      ).toBe('pinned-host-alloc-failed');
      expect(
        (
          await diagnosePaste(
            'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.79 GiB total capacity; 5.10 GiB already allocated)',
          )
        )?.rule,
      ).not.toBe('pinned-host-alloc-failed');
    },
    TEST_TIMEOUT,
  );
});
