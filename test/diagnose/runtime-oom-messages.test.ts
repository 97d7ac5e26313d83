// Runtimes' own out-of-memory and failed-allocation messages (principle: each runtime words a failed device allocation in
// a fixed format of its own; that format alone names the GPU out of memory, and the fix is the runtime's own setting).
// Real read-split cases beside synthetic variants (marked) written from each runtime's source format, and near misses
// that must not fire.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('runtime out-of-memory formats: real read-split cases', () => {
  it.each([
    ['7673', 'sglang-kv-pool-too-small', /mem-fraction-static/],
    ['7679', 'paddle-gpu-alloc-enforce', /./],
    ['7694', 'oom-reported-in-words', /./],
  ])('blind13/%s -> %s', async (n, rule, fix) => {
    const d = await firstOfCase('blind13', n);
    expect(d?.rule).toBe(rule);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(fix);
  });

  it.each([
    ['7250', 'openvino-gpu-max-alloc', /single allocation/],
    ['7251', 'openvino-gpu-max-alloc', /resolution/],
    ['7252', 'sglang-kv-pool-too-small', /mem-fraction-static/],
    ['7253', 'legion-realm-gpu-reservation', /other process/],
  ])('cat14/%s -> %s', async (n, rule, fix) => {
    const d = await firstOfCase('cat14', n);
    expect(d?.rule).toBe(rule);
    expect(first(d)).toMatch(fix);
  });
});

describe('runtime out-of-memory formats: synthetic variants', () => {
  it.each([
    // synthetic: SGLang's ValueError with its suggested floor
    [
      'ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.7. Raise --mem-fraction-static above 0.773 (minimum viable = 1 - available/pre = 0.7721).',
      'sglang-kv-pool-too-small',
    ],
    // synthetic: Paddle 1.2-1.3 PADDLE_ENFORCE_LE format
    [
      'paddle.fluid.core.EnforceNotMet: Enforce failed. Expected allocating <= available, but received allocating:1829703254 > available:1604058880.',
      'paddle-gpu-alloc-enforce',
    ],
    // synthetic: ggml graph allocator on a Vulkan / ROCm / Metal backend
    ['ggml_gallocr_reserve_n: failed to allocate Vulkan0 buffer of size 2214592512', 'ggml-cuda-buffer-alloc'],
    ['ggml_gallocr_reserve_n: failed to allocate ROCm1 buffer of size 912680960', 'ggml-cuda-buffer-alloc'],
    ['ggml_gallocr_reserve_n: failed to allocate Metal buffer of size 4294967296', 'ggml-cuda-buffer-alloc'],
    // synthetic: an app on ggml naming its graph buffer
    ['RuntimeError: Failed to allocate buffer for graph', 'ggml-graph-alloc-failed'],
    // synthetic: OpenVINO's GPU plugin, both the assert and the message
    [
      "Check '!exceed_allocatable_mem_size' failed at src/plugins/intel_gpu/src/runtime/ocl/ocl_engine.cpp:115:\n[GPU] Exceeded max size of memory object allocation: requested 5368709120 bytes, but max alloc size supported by device is 4294959104 bytes.",
      'openvino-gpu-max-alloc',
    ],
    // synthetic: Legion/Realm's framebuffer reservation
    [
      '[0 - 7f00aa001000]    0.000000 {6}{gpu}: insufficient memory on gpu 3: 8589934592 bytes needed (from -ll:fsize), 2147483648 (out of 11552096256) available',
      'legion-realm-gpu-reservation',
    ],
    // synthetic: a report's first line telling the allocation failed on the GPU
    ['Job on node 7 fails to allocate GPU memory\nthe same job elsewhere works', 'oom-reported-in-words'],
    ['Unable to allocate CUDA memory when loading the model\nsee below', 'oom-reported-in-words'],
  ])('%s', async (text, rule) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe(rule);
    expect(d?.category).toBe('cuda_oom');
  });

  it('synthetic: a smaller input that worked leads the ggml graph fix', async () => {
    const d = await diagnosePaste('Error: Failed to allocate buffer for graph\nIt works at 1024x1024 but fails at 2048x2048 on my GPU.');
    expect(d?.rule).toBe('ggml-graph-alloc-failed');
  });
});

describe('runtime out-of-memory formats: near misses', () => {
  it.each([
    // a title about avoiding the failure tells none
    'How to avoid failing to allocate GPU memory\nany tips?',
    // host memory, not the GPU
    'Failed to allocate memory on the host\nsomething else',
    // the words of the check without its comparison
    'the allocating and available numbers differ in the docs',
    // the graph copy's CPU backend named: host memory, not this rule
    'ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 2214592512\nFailed to allocate buffer for graph',
    // Realm's system memory, not a GPU
    '[0 - 7f00aa001000]    0.000000 {5}{realm}: insufficient system memory: 68719476736 bytes needed (from -ll:csize)',
  ])('%s', async (text) => {
    const d = await diagnosePaste(text);
    expect([
      'oom-reported-in-words',
      'ggml-graph-alloc-failed',
      'paddle-gpu-alloc-enforce',
      'openvino-gpu-max-alloc',
      'legion-realm-gpu-reservation',
    ]).not.toContain(d?.rule);
  });
});
