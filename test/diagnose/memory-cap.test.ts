// The share a stack was given, not the card, ran out (src/diagnose/levers/memory-cap.ts; issue 23 items 4-5): a stated
// TensorFlow / Paddle / JAX fraction or Paddle pool under which a small request failed, vLLM started with a low
// --gpu-memory-utilization, a second runtime (XLA, JAX, TF) of the same process holding what PyTorch's message shows
// "outside" it, and served weights over the whole card, which no freeing of other processes makes room for. Real
// examples are cases of the read splits blind6/blind7 (real public threads, their cases.json); the others are
// synthetic variants written from each library's fixed message text and setting names, and say so in their names.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;
const first = async (paste: string) => (await diagnosePaste(paste))?.fixes[0]?.summary ?? '';

describe('a memory cap set by the stack is the lever when a small request failed under it', () => {
  it(
    'real: blind6/3853 (TF GPU_MEMORY_FRACTION = 0.05) and 3857 (PaddleOCR gpu_mem=4000, fraction 0.50 now)',
    async () => {
      const tf = await firstOfCase('blind6', '3853');
      expect(tf!.fixes[0].summary).toMatch(/^The run is capped by its own memory setting \(GPU_MEMORY_FRACTION = 0\.05\)/);
      const paddle = await firstOfCase('blind6', '3857');
      expect(paddle!.fixes[0].summary).toMatch(/capped by its own memory setting \(gpu_mem=4000 \(MB\), FLAGS_fraction_of_gpu_memory_to_use = 0\.50\)/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: a TF session config fraction, a JAX env fraction, a Paddle 2.x message with its flag value',
    async () => {
      const tf =
        'gpu_options = tf.GPUOptions(per_process_gpu_memory_fraction=0.2)\n' +
        '2019-03-01 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1273] OP_REQUIRES failed at conv_ops.cc:446 : Resource exhausted: OOM when allocating tensor with shape[2,128,256,256] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc';
      expect(await first(tf)).toMatch(/capped by its own memory setting \(per_process_gpu_memory_fraction = 0\.2\).*it is not the batch$/);
      const jax =
        'export XLA_PYTHON_CLIENT_MEM_FRACTION=.15\njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 402653184 bytes.';
      expect(await first(jax)).toMatch(/capped by its own memory setting \(XLA_PYTHON_CLIENT_MEM_FRACTION = \.15\)/);
      const paddle =
        'ResourceExhaustedError:\n\nOut of memory error on GPU 1. Cannot allocate 64.000000MB memory on GPU 1, available memory is only 10.250000MB.\n\n' +
        'Please check whether there is any other process using GPU 1.\n1. If yes, please stop them, or start PaddlePaddle on another GPU.\n2. If no, please try one of the following suggestions:\n' +
        '   1) Decrease the batch size of your model.\n   2) FLAGS_fraction_of_gpu_memory_to_use is 0.30 now, please set it to a higher value but less than 1.0.\n';
      expect(await first(paddle)).toMatch(/capped by its own memory setting \(FLAGS_fraction_of_gpu_memory_to_use = 0\.30\)/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic controls: a default-sized fraction, and a request that is most of the card, keep their own levers',
    async () => {
      const high =
        'Out of memory error on GPU 0. Cannot allocate 64.000000MB memory on GPU 0, available memory is only 10.250000MB.\n   2) FLAGS_fraction_of_gpu_memory_to_use is 0.92 now, please set it to a higher value but less than 1.0.';
      expect(await first(high)).not.toMatch(/capped by its own memory setting/);
      const big =
        'gpu_options = tf.GPUOptions(per_process_gpu_memory_fraction=0.5)\nResource exhausted: OOM when allocating tensor with shape[64,512,256,256] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc';
      expect(await first(big)).not.toMatch(/capped by its own memory setting/);
    },
    TEST_TIMEOUT,
  );
});

describe("TensorFlow 1.x's up-front reservation of nearly the whole card failed: its share is the lever", () => {
  it(
    'real: nonpt10/5302 (failed to allocate 5.93G from device on a GTX 1060 6GB at batch 1)',
    async () => {
      const d = await firstOfCase('nonpt10', '5302');
      expect(d!.fixes[0].summary).toMatch(/^TensorFlow asked for 5\.93 GiB in one piece.*per_process_gpu_memory_fraction 0\.8-0\.9/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: an 11 GB card; a control where 1.2 GiB failed mid-run keeps its own lever',
    async () => {
      const at = (size: string, bytes: number) =>
        `I tensorflow/core/common_runtime/gpu/gpu_device.cc:1030] Creating TensorFlow device (/gpu:0) -> (device: 0, name: GeForce GTX 1080 Ti 11GB, pci bus id: 0000:01:00.0)\nE tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to allocate ${size} (${bytes} bytes) from device: CUDA_ERROR_OUT_OF_MEMORY`;
      expect(await first(at('10.62G', 11408507904))).toMatch(/^TensorFlow asked for 10\.6\d GiB in one piece/);
      expect(await first(at('1.20G', 1288490188))).not.toMatch(/^TensorFlow asked for/); // a tenth of the card: no up-front grab
    },
    TEST_TIMEOUT,
  );
});

describe('vLLM started with a low --gpu-memory-utilization: raising it comes first', () => {
  it(
    'real: blind6/3885 (0.3 of an A100 80 GB) and blind7/3962 (0.4, V1 engine)',
    async () => {
      for (const [g, n, u] of [
        ['blind6', '3885', '0.3'],
        ['blind7', '3962', '0.4'],
      ]) {
        const d = await firstOfCase(g, n);
        expect(d?.rule).toBe('vllm-kv-cache-too-small');
        expect(d!.fixes[0].summary).toMatch(
          new RegExp(`^vLLM was started with --gpu-memory-utilization ${u.replace('.', '\\.')}: .*Raise --gpu-memory-utilization`),
        );
      }
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: an engine-config line with 0.5; a control at 0.9 keeps the general advice',
    async () => {
      const at = (u: string) =>
        `INFO 01-01 10:00:00 llm_engine.py:100] Initializing an LLM engine with config: model='org/model-7b', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, gpu_memory_utilization=${u}\n` +
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 200, in _init_cache\n' +
        'ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.';
      expect(await first(at('0.5'))).toMatch(/^vLLM was started with --gpu-memory-utilization 0\.5:/);
      expect(await first(at('0.9'))).not.toMatch(/^vLLM was started with/);
    },
    TEST_TIMEOUT,
  );
});

describe('memory outside PyTorch with a second runtime named is that runtime of this process, not another job', () => {
  it(
    'real: blind7/3986 (torch_xla beside an mmcv CUDA op: 886 MiB reserved of 79.20 GiB)',
    async () => {
      const d = await firstOfCase('blind7', '3986');
      expect(d!.facts.holder).toBe('not_capacity');
      expect(d!.fixes[0].summary).toMatch(/the paste names XLA beside PyTorch.*Cap that runtime's share before it starts: XLA_PYTHON_CLIENT_MEM_FRACTION/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: JAX imported in the traceback; a control without a second runtime stays another process',
    async () => {
      const oom =
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 39.38 GiB of which 18.00 MiB is free. Of the allocated memory 1.10 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.';
      const withJax = '  File "/opt/venv/lib/python3.11/site-packages/jax/_src/api.py", line 100, in device_put\n' + oom;
      expect(await first(withJax)).toMatch(/names JAX \(XLA\) beside PyTorch.*XLA_PYTHON_CLIENT_PREALLOCATE=false/);
      expect(await first(oom)).not.toMatch(/beside PyTorch/);
    },
    TEST_TIMEOUT,
  );
});

describe("served weights over the whole card come before another process's memory", () => {
  it(
    'real: blind7/3971 (Qwen1.5-72B on one 80 GB GPU shared with six processes)',
    async () => {
      const d = await firstOfCase('blind7', '3971');
      expect(d!.facts.holder).toBe('weights');
      expect(d!.fixes[0].summary).toMatch(/^The weights alone do not fit one GPU .*--tensor-parallel-size 4/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: a 34B model on a 24 GB card with another process; a 7B model with one keeps freeing first',
    async () => {
      const oom = (model: string) =>
        `python -m vllm.entrypoints.openai.api_server --model /models/${model}\n` +
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 500.00 MiB. GPU 0 has a total capacity of 23.64 GiB of which 100.00 MiB is free. Process 4242 has 9.00 GiB memory in use. Including non-PyTorch memory, this process has 14.50 GiB memory in use. Of the allocated memory 14.00 GiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but unallocated.';
      expect(await first(oom('Yi-34B-Chat'))).toMatch(/^The weights alone do not fit this GPU/);
      expect(await first(oom('Mistral-7B-Instruct'))).toMatch(/^Another process holds GPU memory/);
    },
    TEST_TIMEOUT,
  );
});
