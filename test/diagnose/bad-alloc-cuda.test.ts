// Principle (issue 23, routes by the message, not its wrapper; session 36 h1): C++ throws std::bad_alloc for a host
// allocation, but thrust / cub and C++ CUDA extensions throw it too with the CUDA runtime's own error as its message
// ("std::bad_alloc: cudaErrorMemoryAllocation: out of memory"): that failure is the card's, not host RAM's.
// The real MinkowskiEngine report (blind6 3842) beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe("std::bad_alloc carrying a CUDA error is the card's", () => {
  it('real: MinkowskiEngine "std::bad_alloc: cudaErrorMemoryAllocation: out of memory" (blind6 3842)', async () => {
    expect((await firstOfCase('blind6', '3842'))?.category).toBe('cuda_oom');
  });
  it.each([
    ['RuntimeError: std::bad_alloc: cudaErrorMemoryAllocation: out of memory'],
    ["terminate called after throwing an instance of 'thrust::system::detail::bad_alloc'\n  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory"],
    ['std::bad_alloc: CUDA error: out of memory'],
  ])('%j is a CUDA OOM (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('cuda_oom');
  });
  it.each([
    ["terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted (core dumped)"],
    ['MemoryError: std::bad_alloc: memory exhausted'],
  ])('%j stays a host allocation failure (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('host_oom_killed');
  });
});
