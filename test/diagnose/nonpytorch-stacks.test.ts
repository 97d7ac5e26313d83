// Stacks that report a failed allocation in their own words, not CUDA's (issue 23, recognition): vLLM v1's KV cache
// check, ONNX Runtime's BFC arena (the GPU's or host RAM's, by what the paste names), llama.cpp's graph allocator and
// KV cache without the cudaMalloc line, TensorFlow's GPU allocator line alone, cuDNN's NOT_ENOUGH_MEMORY status and
// Ollama's system-RAM check. Each is recognised by its fixed format, its own figures are read, and its own lever comes
// first. Confusers: the same names in a warning the run survived. Real examples are the rules' match/ logs
// (knowledge-rules.test.ts); here variants written from each principle, through the CLI's own entry in this process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseFile } from './corpus-case.js';

// The first case compiles the rule base; generous for a shared, loaded CI machine (no timing is asserted).
const TEST_TIMEOUT = 180_000;
const dir = mkdtempSync(join(tmpdir(), 'nonpytorch-stacks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
async function first(paste: string) {
  const file = join(dir, `${n++}.log`);
  writeFileSync(file, paste);
  return diagnoseFile(file);
}

const vllmV1 = (maxLen: number, needed: string, avail: string, estimate?: number) =>
  `ERROR 05-01 10:00:00 [core.py:396] ValueError: To serve at least one request with the models's max seq len (${maxLen}), (${needed} GiB KV cache is needed, which is larger than the available KV cache memory (${avail} GiB).${estimate !== undefined ? ` Based on the available memory, the estimated maximum model length is ${estimate}.` : ''} Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine.\n`;

describe("vLLM v1's KV cache check: the length that fits is the first lever", () => {
  it.each([
    [vllmV1(131072, '16.00', '9.63', 78896), '131072', '78896'],
    ['vllm serve Qwen/Qwen2.5-7B-Instruct\nINFO Model loading took 14.25 GiB\n' + vllmV1(32768, '1.75', '0.71', 13296), '32768', '13296'],
    // vLLM 0.8 printed no estimate: the same share of the length (the cache is linear in it), rounded down to 256
    ['[rank0]: ' + vllmV1(65536, '8.00', '2.00'), '65536', '16384'],
  ])(
    '%#',
    async (paste, maxLen, fits) => {
      const d = await first(paste);
      expect(d?.rule).toBe('vllm-kv-cache-too-small');
      expect(d?.category).toBe('cuda_oom');
      const summary = d?.fixes[0]?.summary ?? '';
      expect(summary).toContain(`max seq len (${maxLen} tokens)`);
      expect(summary).toContain(`--max-model-len ${fits}`);
      expect(summary.indexOf('--max-model-len')).toBeLessThan(summary.indexOf('--kv-cache-dtype fp8'));
      expect(summary).not.toMatch(/halve the batch/i);
    },
    TEST_TIMEOUT,
  );
});

const arena = (size: number) =>
  `[E:onnxruntime:, sequential_executor.cc:516 ExecuteKernel] Non-zero status code returned while running Conv node. Name:'/backbone/conv1/Conv' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size ${size}\n`;

describe("ONNX Runtime's arena failure: the GPU's when the paste names the GPU, host RAM's when it names none", () => {
  it.each([
    ['providers=["CUDAExecutionProvider"]\n' + arena(4294967296), '4.00 GiB'],
    ['onnxruntime-gpu 1.17 on an RTX 3060 (12 GB VRAM)\n' + arena(1073741824), '1.00 GiB'],
    ['Running the face swapper on my GPU\n' + arena(67471254), '64 MiB'],
  ])(
    'GPU: %#',
    async (paste, request) => {
      const d = await first(paste);
      expect(d?.rule).toBe('onnxruntime-arena-gpu');
      expect(d?.category).toBe('cuda_oom');
      expect(d?.fixes[0]?.summary).toContain(`could not get ${request}`);
      expect(d?.fixes[0]?.summary).toContain('arena_extend_strategy');
    },
    TEST_TIMEOUT,
  );

  it(
    'the arena error cut short in a title, with the GPU named',
    async () => {
      const d = await first(
        '/onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to alloc\nThe 16G VRAM is not enough for this model\n',
      );
      expect(d?.rule).toBe('onnxruntime-arena-gpu');
    },
    TEST_TIMEOUT,
  );

  it(
    "the arena's own info lines are no failure",
    async () => {
      const d = await first(
        '[I:onnxruntime:log, bfc_arena.cc:306 AllocateRawInternal] Extending BFCArena for Cuda. bin_num:9 (requested) num_bytes: 160000 (actual) rounded_bytes:160000\n[I:onnxruntime:log, bfc_arena.cc:186 Extend] Extended allocation by 1048576 bytes.\n',
      );
      expect(d).toBeUndefined();
    },
    TEST_TIMEOUT,
  );

  it.each([
    'OCR server on Windows\n' + arena(285081600),
    arena(643840) + 'Traceback (most recent call last):\n  File "run.py", line 3, in <module>\n    sess.run(None, feed)\n',
  ])(
    'host: %#',
    async (paste) => {
      const d = await first(paste);
      expect(d?.rule).toBe('onnxruntime-arena-host');
      expect(d?.category).toBe('host_oom_killed');
      expect(d?.fixes[0]?.summary).toMatch(/^This is host RAM/);
    },
    TEST_TIMEOUT,
  );
});

describe('llama.cpp without the cudaMalloc line: which buffer failed says the lever', () => {
  it.each([
    // the graph allocator's CUDA buffer is the compute buffer, its size and device read from the line
    [
      'llama_new_context_with_model: n_ctx      = 32768\nggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 2218786816\nllama_new_context_with_model: failed to allocate compute buffers\n',
      /^The compute buffer does not fit on GPU 1: .*-ub 256/,
    ],
    // a KV cache that failed with the layers on the GPU: the context first, quoted
    [
      'llm_load_tensors: offloaded 33/33 layers to GPU\nllm_load_tensors:      CUDA0 buffer size =  4403.49 MiB\nllama_new_context_with_model: n_ctx      = 131072\nllama_kv_cache_init: failed to allocate buffer for kv cache\nllama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache\n',
      /^The KV cache does not fit on GPU 0: .*n_ctx = 131072 now/,
    ],
    // llama.cpp before ggml-backend: its own CUDA error 2 and the device it names; no buffer named, so the context leads
    [
      'CUDA error 2 at /home/user/llama.cpp/ggml-cuda.cu:6246: out of memory\ncurrent device: 1\n',
      /^ggml could not allocate a buffer on GPU 1: shorten the context length \(-c/,
    ],
  ])(
    '%#',
    async (paste, lever) => {
      const d = await first(paste);
      expect(d?.rule).toBe('ggml-cuda-buffer-alloc');
      expect(d?.fixes[0]?.summary).toMatch(lever);
    },
    TEST_TIMEOUT,
  );

  it(
    'a KV cache that failed in host RAM stays the host buffer rule',
    async () => {
      const d = await first(
        'llama_new_context_with_model: n_ctx      = 1048576\nggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504\nllama_kv_cache_init: failed to allocate buffer for kv cache\n',
      );
      expect(d?.rule).toBe('ggml-host-buffer-alloc');
    },
    TEST_TIMEOUT,
  );
});

describe("TensorFlow's GPU allocator line alone is its OOM; the not-a-failure retry is not", () => {
  it.each([
    '2023-01-02 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.53GiB (rounded to 1638400000)requested by op model/conv2d/Conv2D\nCurrent allocation summary follows.\n',
    'Allocator (GPU_1_bfc) ran out of memory trying to allocate 520.77MiB.\nMy GTX 1060 always fails when I train.\n',
  ])(
    'OOM: %#',
    async (paste) => {
      const d = await first(paste);
      expect(d?.rule).toBe('tensorflow-bfc-oom');
      expect(d?.category).toBe('cuda_oom');
    },
    TEST_TIMEOUT,
  );

  it.each([
    'Is this warning a problem?\nW tensorflow/core/common_runtime/bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.19GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\nEpoch 1/10\n100/100 [==============================] - 20s 200ms/step - loss: 0.5\n',
    // a config dump that names the allocator and its options
    'gpu_options {\n  allow_growth: true\n  allocator_type: "BFC"\n}\nTraining finished.\n',
  ])(
    'not an OOM: %#',
    async (paste) => {
      expect(await first(paste)).toBeUndefined();
    },
    TEST_TIMEOUT,
  );
});

describe("JAX's PJRT wording is its OOM, with the request read", () => {
  it.each([
    ['XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 6.27GiB (6727663616B) on device ordinal 0\n', 6416],
    ['jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 512.00MiB (536870912B) on device ordinal 1\n', 512],
  ])(
    '%#',
    async (paste, mib) => {
      const d = await first(paste);
      expect(d?.category).toBe('cuda_oom');
      expect(d?.facts.triedAllocMiB).toBe(mib);
    },
    TEST_TIMEOUT,
  );
});

describe("XLA's own allocation failure is JAX's pool unless TensorFlow is named", () => {
  it.each([
    'AlphaFold run fails\nRESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:  372.76MiB\n',
    'Training the NeRF fails right away:\nRESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.\n',
  ])(
    'JAX: %#',
    async (paste) => {
      const d = await first(paste);
      expect(d?.category).toBe('cuda_oom');
      expect(d?.fixes[0]?.summary).toMatch(/^JAX's allocator works inside a pool of XLA_PYTHON_CLIENT_MEM_FRACTION/);
    },
    TEST_TIMEOUT,
  );

  it(
    'TensorFlow named: not JAX',
    async () => {
      const d = await first(
        'import tensorflow as tf\nmodel.fit(x, y, batch_size=64)\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.\n',
      );
      expect(d?.category).toBe('cuda_oom');
      expect(d?.fixes[0]?.summary).not.toMatch(/XLA_PYTHON_CLIENT/);
    },
    TEST_TIMEOUT,
  );
});

describe('cuDNN and Ollama in their own words', () => {
  it(
    'cuDNN error: CUDNN_STATUS_NOT_ENOUGH_MEMORY is a cuDNN allocation that found the card full',
    async () => {
      const d = await first(
        '  File "train.py", line 88, in forward\n    return F.conv2d(input, weight)\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_ENOUGH_MEMORY\n',
      );
      expect(d?.rule).toBe('cublas-cudnn-alloc-failed');
    },
    TEST_TIMEOUT,
  );

  it.each([
    'Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)\n',
    'ValueError: Ollama call failed with status code 500. Details: {"error":"model requires more system memory (3.7 GiB) than is available (3.6 GiB)"}\n',
    'ollama._types.ResponseError: model requires more system memory (11.3 GiB) than is available (11.2 GiB) (status code: 500)\n',
  ])(
    "Ollama's check is host RAM: %#",
    async (paste) => {
      const d = await first(paste);
      expect(d?.rule).toBe('ollama-system-memory');
      expect(d?.category).toBe('host_oom_killed');
      expect(d?.fixes[0]?.summary).toMatch(/smaller quantization/);
    },
    TEST_TIMEOUT,
  );
});
