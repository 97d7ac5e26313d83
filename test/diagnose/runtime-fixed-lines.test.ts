// Runtimes' own fixed lines that name the failure before (or instead of) a traceback:
// - vLLM v1's worker logs "Available KV cache memory: -N GiB" (gpu_worker.py determine_available_memory) before it
//   raises "No available memory for the cache blocks": a negative budget is the KV cache not fitting.
// - MLX's Metal allocator refuses one buffer above maxBufferLength ("[metal::malloc] Attempting to allocate N bytes which
//   is greater than the maximum allowed buffer size of M bytes"): a per-buffer limit, so the lever is that one array's
//   size (sequence length, chunked prefill), never swap or a smaller model.
// Real logs: blind8/5655, blind8/5657 (read split); variants from the format strings (synthetic).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe("vLLM's negative KV cache budget", () => {
  it('real blind8/5655 (gpt-oss-120b on one H100, the paste cut at the traceback)', async () => {
    const d = await firstOfCase('blind8', '5655');
    expect(d?.rule).toBe('vllm-kv-cache-too-small');
    expect(first(d)).toMatch(/--gpu-memory-utilization/);
  });

  // synthetic: the line with and without vLLM's process prefix, other sizes
  it.each([
    ['engine prefix', '(EngineCore_0 pid=77) INFO 01-02 03:04:05 [gpu_worker.py:240] Available KV cache memory: -0.37 GiB'],
    ['plain', 'INFO 11-12 10:00:00 [gpu_worker.py:291] Available KV cache memory: -11.5 GiB\nERROR [core.py:700] EngineCore failed to start.'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('vllm-kv-cache-too-small');
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  it('synthetic: a positive budget is only progress', async () => {
    const d = await diagnosePaste('INFO 11-12 10:00:00 [gpu_worker.py:291] Available KV cache memory: 21.50 GiB');
    expect(d?.rule).not.toBe('vllm-kv-cache-too-small');
  });
});

describe("MLX's maximum Metal buffer size", () => {
  it('real blind8/5657 (a 17,000-token prompt to generate)', async () => {
    const d = await firstOfCase('blind8', '5657');
    expect(d?.rule).toBe('mlx-metal-buffer-limit');
    expect(first(d)).toMatch(/sequence length/);
  });

  // synthetic: the allocator's message as mlx raises it through Python, C++ and mlx_lm's server
  it.each([
    [
      'python',
      'RuntimeError: [metal::malloc] Attempting to allocate 135383101952 bytes which is greater than the maximum allowed buffer size of 86586540032 bytes.',
    ],
    [
      'c++ abort',
      'libc++abi: terminating due to uncaught exception of type std::runtime_error: [metal::malloc] Attempting to allocate 28611722496 bytes which is greater than the maximum allowed buffer size of 9534832640 bytes.',
    ],
    [
      'server',
      'ERROR - mlx_lm.server generation thread died: [metal::malloc] Attempting to allocate 21474836480 bytes which is greater than the maximum allowed buffer size of 17179869184 bytes.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('mlx-metal-buffer-limit');
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).not.toMatch(/add swap|more swap/i);
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });
});

describe("Metal out of the GPU's share of unified memory (MLX allocator, Metal command buffer)", () => {
  it('real recog11/5965 (mflux at 5712x4284; tuned, labelled before running)', async () => {
    const d = await firstOfCase('recog11', '5965');
    expect(d?.rule).toBe('mlx-metal-out-of-memory');
  });

  // synthetic: mlx/backend/metal/allocator.cpp's messages and Metal's command-buffer status
  it.each([
    ['malloc', 'RuntimeError: [malloc] Unable to allocate 1073741824 bytes.'],
    ['resource limit', 'ERROR - mlx_lm.server generation thread died: [metal::malloc] Resource limit (499000) exceeded.'],
    [
      'command buffer',
      'libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('mlx-metal-out-of-memory');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  it('synthetic: a stated image size is the first lever', async () => {
    const d = await diagnosePaste(
      'Generating at 4096x4096\n[METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)',
    );
    expect(first(d)).toMatch(/resolution/);
  });
});

describe("SGLang's start-up check of its KV cache pool", () => {
  it('real recog11/5967 (the message in the title; tuned, labelled before running)', async () => {
    const d = await firstOfCase('recog11', '5967');
    expect(d?.rule).toBe('sglang-kv-pool-too-small');
    expect(first(d)).toMatch(/raise --mem-fraction-static/);
  });

  // synthetic: the message through the scheduler's wrapper and the profile's negative figure
  it.each([
    [
      'scheduler',
      '[2025-03-12 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.',
    ],
    ['negative profile', '[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('sglang-kv-pool-too-small');
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });
});
