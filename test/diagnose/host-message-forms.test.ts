// Issue 23, routes by message, not by prose: a host library's own fixed message decides the route over the user's
// question ("是 GPU 内存不够了?"). NumPy's _ArrayMemoryError prints "Unable to allocate {size} for an array with shape
// {shape} and data type {dtype}" (numpy/_core/_exceptions.py), often without its class name; MLX's Metal allocator threw
// "[malloc_or_wait] Unable to allocate N bytes." before it was renamed "[malloc]" (mlx/allocator.cpp). Real logs:
// blind9/5781 and blind9/5775 (a read split); the rest synthetic, written from those formats. In process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe("NumPy's array message is host RAM whatever the report asks", () => {
  it('real blind9/5781: the message alone under a question about the GPU', async () => {
    const d = await firstOfCase('blind9', '5781');
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(/host RAM/);
  });

  // synthetic: units numpy prints (bytes, KiB..TiB), other dtypes, a one-dimensional shape
  it.each([
    ['GiB', 'Unable to allocate 12.3 GiB for an array with shape (4096, 4096, 196) and data type float32'],
    ['MiB uint8', 'Unable to allocate 768. MiB for an array with shape (1024, 512, 512, 3) and data type uint8'],
    ['TiB 1-d', '这是显存不够吗？\nUnable to allocate 1.82 TiB for an array with shape (250000000000,) and data type float64'],
  ])('synthetic: %s', async (_n, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
  });
});

describe("MLX's [malloc_or_wait] is the Metal allocator's OOM", () => {
  it('real blind9/5775: an 8 GB Mac refusing 128 MiB after 50 steps', async () => {
    const d = await firstOfCase('blind9', '5775');
    expect(d?.rule).toBe('mlx-metal-out-of-memory');
  });

  it.each([
    ['libc++abi', 'libc++abi: terminating due to uncaught exception of type std::runtime_error: [malloc_or_wait] Unable to allocate 4294967296 bytes.'],
    ['Array::eval', 'RuntimeError: Array::eval: [malloc_or_wait] Unable to allocate 9000000000 bytes'],
  ])('synthetic: %s', async (_n, text) => {
    expect((await diagnosePaste(text))?.rule).toBe('mlx-metal-out-of-memory');
  });
});
