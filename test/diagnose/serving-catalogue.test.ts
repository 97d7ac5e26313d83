// Serving stacks' fixed messages, read by their format (issue 23 item 5; stop 37's sweep of the serving catalogue):
// - vLLM v1's start-up check "Free memory on device [cuda:N ](F/T GiB) on startup is less than desired GPU memory
//   utilization (U, R GiB)": a share of the whole card was asked for and something else holds the rest. Free close to
//   the request: a share just under the free part; most of the card held: the holder first (levers/vllm-startup.ts).
// - vLLM v1's sampler warm-up "CUDA out of memory occurred when warming up sampler with N dummy requests": max_num_seqs
//   requests after the KV cache took its share, so --max-num-seqs / --gpu-memory-utilization, never a training batch.
// - TensorRT 8+'s allocator "Error Code 1: Cuda Runtime (out of memory)" / "Error Code 2: OutOfMemory (...)": the
//   engine's max shape, the builder's workspace and its precision, not CUDA's generic batch experiment.
// - llama.cpp's loader "error loading model: unable to allocate CUDA0 buffer" (ROCm0, Vulkan0) without the cudaMalloc
//   line: the weights placed on that GPU.
// Real logs: servecat11 (labelled before the engine ran on them); the rest are synthetic, written from the format strings.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const noBatch = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes.some((f) => f.changes.batch !== undefined) ?? false;

describe("vLLM's start-up free-memory check", () => {
  it.each([
    ['6104', /--gpu-memory-utilization 0\.87/],
    ['6105', /nvidia-smi/],
  ])('real servecat11/%s', async (n, fix) => {
    const d = await firstOfCase('servecat11', n);
    expect(d?.rule).toBe('vllm-startup-free-memory');
    expect(first(d)).toMatch(fix);
  });

  // synthetic: the device named or not, other sizes and shares, an engine-core prefix
  it.each([
    [
      'cuda:0, little free',
      'ValueError: Free memory on device cuda:0 (1.20/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.',
      /Another process holds 77\.99 GiB/,
    ],
    [
      'no device, close',
      '(EngineCore_0 pid=9) ValueError: Free memory on device (22.10/23.64 GiB) on startup is less than desired GPU memory utilization (0.95, 22.46 GiB).',
      /--gpu-memory-utilization 0\.91/,
    ],
    [
      'xpu:1',
      'ValueError: Free memory on device xpu:1 (10.00/30.30 GiB) on startup is less than desired GPU memory utilization (0.7, 21.21 GiB).',
      /Another process holds 20\.30 GiB/,
    ],
  ])('synthetic: %s', async (_name, text, fix) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('vllm-startup-free-memory');
    expect(first(d)).toMatch(fix);
    expect(noBatch(d)).toBe(false);
  });

  it('synthetic near miss: the success log names free memory without the check failing', async () => {
    const d = await diagnosePaste(
      'INFO 01-01 00:00:00 [gpu_worker.py:276] Available KV cache memory: 9.84 GiB\nFree memory on device (110.37/121.69 GiB) on startup.',
    );
    expect(d?.rule).not.toBe('vllm-startup-free-memory');
  });
});

describe("vLLM's sampler warm-up OOM", () => {
  it.each(['6100', '6101', '6102', '6103'])('real servecat11/%s', async (n) => {
    const d = await firstOfCase('servecat11', n);
    expect(d?.rule).toBe('vllm-sampler-warmup-oom');
    expect(first(d)).toMatch(/--max-num-seqs/);
  });

  // synthetic: 256 / 1024 requests, the pooler's variant, the message wrapped, PyTorch's OOM beside it
  it.each([
    [
      '256',
      'RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.',
      /--max-num-seqs 128/,
    ],
    [
      'pooler',
      'RuntimeError: CUDA out of memory occurred when warming up pooler (embed) with 512 dummy requests. Please try lowering `max_num_seqs`',
      /--max-num-seqs 256/,
    ],
    [
      'wrapped',
      'RuntimeError: CUDA out of memory occurred when warming up sampler with 1024\ndummy requests. Please try lowering `max_num_seqs`',
      /--max-num-seqs 512/,
    ],
    [
      'with torch OOM',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB. GPU 0 has a total capacity of 79.19 GiB of which 361.00 MiB is free.\nRuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests.',
      /--max-num-seqs 512/,
    ],
  ])('synthetic: %s', async (_name, text, fix) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('vllm-sampler-warmup-oom');
    expect(first(d)).toMatch(fix);
    expect(noBatch(d)).toBe(false);
  });

  it('synthetic near miss: the warm-up frame in a traceback that is not out of memory', async () => {
    const d = await diagnosePaste('  File "/vllm/v1/worker/gpu_model_runner.py", line 3221, in _dummy_sampler_run\nValueError: top_k must be positive');
    expect(d?.rule).not.toBe('vllm-sampler-warmup-oom');
  });
});

describe("TensorRT's allocator out of memory", () => {
  it('real servecat11/6106 (a build at 2000x2000 input)', async () => {
    const d = await firstOfCase('servecat11', '6106');
    expect(d?.rule).toBe('tensorrt-allocator-oom');
    expect(first(d)).toMatch(/resolution/);
  });

  // synthetic: TensorRT 8's default and resizing allocators, 10's requested size, 7's safeRuntime line
  it.each([
    ['trt8', '[TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)'],
    [
      'trt10',
      '[TRT] [E] [resizingAllocator.cpp::allocate::78] Error Code 1: Cuda Runtime (out of memory)\n[TRT] [E] [engine.cpp::readEngineFromArchive::1091] Error Code 2: OutOfMemory (Requested size was 5244672 bytes.)',
    ],
    ['context', '[E] [TRT] 2: [executionContext.cpp::ExecutionContext::410] Error Code 2: OutOfMemory (no further information)'],
    ['trt7', 'ERROR: ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('tensorrt-allocator-oom');
    expect(noBatch(d)).toBe(false);
  });

  it('synthetic near miss: the same allocator failing with another CUDA error', async () => {
    const d = await diagnosePaste('[TRT] [E] 1: [defaultAllocator.cpp::deallocate::42] Error Code 1: Cuda Runtime (invalid argument)');
    expect(d?.rule).not.toBe('tensorrt-allocator-oom');
  });
});

describe("llama.cpp's loader naming the GPU buffer it could not allocate", () => {
  // synthetic: CUDA, ROCm and Vulkan back-ends, the cudaMalloc line not pasted
  it.each([
    ['CUDA1', 'llama_model_load: error loading model: unable to allocate CUDA1 buffer\nllama_load_model_from_file: failed to load model', /GPU 1/],
    ['ROCm0', 'llama_model_load: error loading model: unable to allocate ROCm0 buffer', /GPU 0/],
    [
      'Vulkan0',
      'ggml_vulkan: Device memory allocation of size 4294967296 failed.\nllama_model_load: error loading model: unable to allocate Vulkan0 buffer',
      /GPU 0/,
    ],
  ])('synthetic: %s', async (_name, text, gpu) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('ggml-cuda-buffer-alloc');
    expect(first(d)).toMatch(/-ngl/);
    expect(first(d)).toMatch(gpu);
  });

  it('synthetic near miss: the CPU buffer is host RAM', async () => {
    const d = await diagnosePaste(
      'ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 437944320\nllama_model_load: error loading model: unable to allocate CPU buffer',
    );
    expect(d?.rule).not.toBe('ggml-cuda-buffer-alloc');
  });
});

// Serving stacks named by their own paths and log prefixes get their own memory knobs, never a training batch
// (knowledge/tools.yaml): SGLang's "[date TP0]" prefix, LMDeploy's TurboMind "[TM][ERROR]", ExLlamaV2, MLC LLM, ONNX Runtime's
// own error lines ([ONNXRuntimeError], [E:onnxruntime:...]).
describe("serving stacks' own memory knobs", () => {
  // synthetic: an OOM in each stack's own frames or log prefix
  it.each([
    [
      'SGLang',
      '[2025-03-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.',
      /--mem-fraction-static/,
    ],
    ['LMDeploy TurboMind', '[TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/utils/allocator.h:231', /--cache-max-entry-count/],
    [
      'ExLlamaV2',
      '  File "/exllamav2/model.py", line 339, in load_autosplit_gen\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB.',
      /max_seq_len/,
    ],
    [
      'ONNX Runtime cuda_call',
      '[E:onnxruntime:Default, cuda_call.cc:118 CudaCall] CUDA failure 2: out of memory ; GPU=0 ; hostname=h ; file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_allocator.cc ; line=47 ; expr=cudaMalloc((void**)&p, size);',
      /arena_extend_strategy/,
    ],
    [
      'MLC LLM',
      '  File "/site-packages/mlc_llm/serve/engine.py", line 900, in __init__\ntvm._ffi.base.TVMError: InternalError: Check failed: (e == cudaSuccess) is false: CUDA: out of memory',
      /context_window_size/,
    ],
  ])('synthetic: %s', async (_name, text, knob) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(knob);
    expect(noBatch(d)).toBe(false);
  });
});
