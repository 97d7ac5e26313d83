// Non-PyTorch stacks are read for their own numbers (issue 23 item 5), through the CLI: TensorFlow / XLA's
// BFC allocator (its ran-out line and Stats block, and which allocator it was: GPU or pinned host RAM),
// JAX's request and its preallocated pool, llama.cpp's failed CUDA buffer and what it was for, TGI's
// prefill warmup, vLLM's zero KV-cache blocks. A reply never says "the log gives no memory figures" when
// the stack gave them. Synthetic variants are written from each library's fixed format; real logs are in
// knowledge/<rule>/match and test/fixtures/stack-routes (sources on their first line).
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseFile, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';

const ROOT = resolve(import.meta.dirname, '../..');
// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const real = async (path: string) => diagnoseFile(join(ROOT, path));
const NO_FIGURES = /gives no memory figures/;
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const ts = '2024-03-11 10:21:33.104512';

// TensorFlow 2.x and XLA (same allocator, tsl/framework/bfc_allocator.cc in JAX) print the failed request
// and, in the allocation summary, a Stats block in bytes.
function bfcLog(o: { source?: string; allocator?: string; tried: string; limit: number; inUse: number; tail: string[] }): string {
  const src = o.source ?? 'tensorflow/core/common_runtime/bfc_allocator.cc';
  return [
    `${ts}: W ${src}:479] Allocator (${o.allocator ?? 'GPU_0_bfc'}) ran out of memory trying to allocate ${o.tried} (rounded to 1642070016)requested by op model/dense/MatMul`,
    'Current allocation summary follows.',
    `${ts}: I ${src}:1109] Stats: `,
    `Limit:                     ${o.limit}`,
    `InUse:                     ${o.inUse}`,
    `MaxInUse:                  ${o.inUse}`,
    'NumAllocs:                        4512',
    '',
    ...o.tail,
  ].join('\n');
}

describe("TensorFlow / XLA's BFC allocator: the ran-out line and the Stats block are the figures", () => {
  it('the Stats fixture: who holds the memory quotes InUse of Limit, no "no memory figures"', async () => {
    const d = await real('test/fixtures/stack-routes/tf-gpu-bfc-stats.log');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.facts.triedAllocMiB).toBeCloseTo(1566.72, 0);
    expect(d?.facts.bfcLimitMiB).toBeCloseTo(10311.4, 0);
    expect(d?.facts.holder).toBe('activations');
    expect(String(d?.facts.holderWhy)).toMatch(/GPU_0_bfc holds 9\.73 GiB of its 10\.07 GiB limit/);
    expect(String(d?.facts.holderWhy)).not.toMatch(NO_FIGURES);
  });

  it.each([
    [
      'TF 2 graph execution error',
      bfcLog({
        tried: '2.00GiB',
        limit: 22_548_578_304,
        inUse: 21_474_836_480,
        tail: ['tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:'],
      }),
      /holds 20\.00 GiB of its 21\.00 GiB limit/,
    ],
    [
      'TF 1.x, the request without "(rounded to ...)"',
      bfcLog({
        tried: '512.0MiB',
        limit: 11_330_676_327,
        inUse: 11_000_000_000,
        tail: [
          'Resource exhausted: OOM when allocating tensor with shape[64,512,64,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
        ],
      }).replace(' (rounded to 1642070016)requested by op model/dense/MatMul', '.  Current allocation summary follows.'),
      /holds 10\.24 GiB of its 10\.55 GiB limit/,
    ],
    [
      "JAX's XLA allocator (same format, tsl path)",
      bfcLog({
        source: 'external/xla/xla/tsl/framework/bfc_allocator.cc',
        tried: '6.90GiB',
        limit: 31_200_000_000,
        inUse: 27_000_000_000,
        tail: ['jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.'],
      }),
      /holds 25\.15 GiB of its 29\.06 GiB limit/,
    ],
  ])('%s', async (_name, text, why) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('cuda_oom');
    expect(String(d?.facts.holderWhy)).toMatch(why);
    expect(String(d?.facts.holderWhy)).not.toMatch(NO_FIGURES);
  });

  it('real: "The caller indicates that this is not a failure" lines alone are no OOM (sergiomsilva/alpr-unconstrained#128)', async () => {
    expect(await real('test/fixtures/stack-routes/alpr-128-bfc-not-a-failure.log')).toBeUndefined();
  });

  it.each([
    ['real: tensorflow/tensorflow#11915 (cuda_host_bfc at its 64 GiB limit)', 'knowledge/tensorflow-host-bfc/match/tensorflow-11915-cuda-host-bfc.log'],
  ])('%s: pinned host RAM, not the GPU', async (_name, file) => {
    const d = await real(file);
    expect(d?.category).toBe('host_oom_killed');
    expect(first(d)).toMatch(/TF_GPU_HOST_MEM_LIMIT_IN_MB/);
  });

  it.each(['gpu_host_bfc', 'cuda_host_bfc'])('%s in the synthetic format: host RAM; GPU_0_bfc with the same numbers: the GPU', async (allocator) => {
    const text = (name: string) =>
      bfcLog({
        allocator: name,
        tried: '3.72GiB',
        limit: 68_719_476_736,
        inUse: 68_719_476_736,
        tail: ['Resource exhausted: OOM when allocating tensor with shape[1000,1000,250,4]'],
      });
    expect((await diagnoseText(text(allocator)))?.category).toBe('host_oom_killed');
    expect((await diagnoseText(text('GPU_0_bfc')))?.category).toBe('cuda_oom');
  });
});

describe("JAX: the request is a figure, and the pool is JAX's own", () => {
  const jaxOom = (bytes: number) =>
    [
      'Traceback (most recent call last):',
      '  File "/workspace/train.py", line 61, in <module>',
      '    state, metrics = p_train_step(state, batch)',
      `jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate ${bytes} bytes.`,
    ].join('\n');
  it.each([
    [7_406_166_528, /6\.90 GiB/],
    [2_147_483_648, /2\.00 GiB/],
  ])('a request of %d bytes alone: the holder line quotes it, the first fix reads JAX memory_stats, not nvidia-smi', async (bytes, tried) => {
    const d = await diagnoseText(jaxOom(bytes));
    expect(d?.category).toBe('cuda_oom');
    expect(String(d?.facts.holderWhy)).toMatch(tried);
    expect(String(d?.facts.holderWhy)).not.toMatch(NO_FIGURES);
    expect(first(d)).toMatch(/memory_stats\(\).*XLA_PYTHON_CLIENT_MEM_FRACTION/);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });

  const smi = (used: number, total: number) =>
    [
      '+-----------------------------------------------------------------------------+',
      '| NVIDIA-SMI 535.129.03   Driver Version: 535.129.03   CUDA Version: 12.2     |',
      '|-------------------------------+----------------------+----------------------+',
      '| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |',
      '| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |',
      '|===============================+======================+======================|',
      `|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                    0 |`,
      `| N/A   33C    P0    62W / 400W |  ${used}MiB / ${total}MiB |      0%      Default |`,
      '+-------------------------------+----------------------+----------------------+',
    ].join('\n');
  it('real: jax-ml/jax#19213 (a one-element array, 12626 of 16160 MiB): the pool, not a leak', async () => {
    const d = await real('knowledge/jax-preallocation/match/jax-19213-preallocated-pool.log');
    expect(d?.rule).toBe('jax-preallocation');
    expect(first(d)).toMatch(/preallocated pool, not a leak/);
  });
  it.each([
    ['import jax, 75% of an 80 GiB card', 'import jax\nimport jax.numpy as jnp\n' + smi(61440, 81920)],
    ['from jax import numpy, 90% (older default)', 'from jax import numpy as jnp\n' + smi(14500, 16160)],
    ['XLA_PYTHON_CLIENT_MEM_FRACTION named, 76%', 'XLA_PYTHON_CLIENT_MEM_FRACTION=.75 python fit.py\n' + smi(18300, 24000)],
  ])('%s: jax-preallocation', async (_name, text) => {
    expect((await diagnoseText(text))?.rule).toBe('jax-preallocation');
  });
  it.each([
    ['40% of the card', 'import jax\n' + smi(32768, 81920)],
    ['JAX only named in prose', 'my JAX model leaks, nvidia-smi shows 75%\n' + smi(61440, 81920)],
    ['a real OOM beside the pool', jaxOom(2_147_483_648).replace('Traceback', 'import jax\nTraceback') + '\n' + smi(61440, 81920)],
  ])('%s: not the preallocation rule', async (_name, text) => {
    expect((await diagnoseText(text))?.rule).not.toBe('jax-preallocation');
  });
});

describe("llama.cpp: the failed CUDA buffer's size and what it was for decide the lever", () => {
  it.each([
    [
      'real: ikawrakow/ik_llama.cpp#235 (compute buffer)',
      'knowledge/ggml-cuda-buffer-alloc/match/ik-llama-235-compute-buffer.log',
      'activations',
      /-ub 256 -b 512/,
    ],
    ['real: ggml-org/llama.cpp#20431 (weights)', 'knowledge/ggml-cuda-buffer-alloc/match/llama-cpp-20431-weights.log', 'weights', /-ngl/],
    [
      'real: ggml-org/llama.cpp#26297 (compute buffer, n_ctx_slot)',
      'knowledge/ggml-cuda-buffer-alloc/match/llama-cpp-26297-compute-windows.log',
      'activations',
      /n_ctx = 50176/,
    ],
  ])('%s', async (_name, file, holder, lever) => {
    const d = await real(file);
    expect(d?.rule).toBe('ggml-cuda-buffer-alloc');
    expect(d?.facts.holder).toBe(holder);
    expect(String(d?.facts.holderWhy)).not.toMatch(NO_FIGURES);
    expect(first(d)).toMatch(lever);
    expect(first(d)).not.toMatch(/batch 1|mixed precision|AMP/);
  });

  const ggml = (mib: string, device: number, after: string, before: string[] = []) =>
    [...before, `ggml_backend_cuda_buffer_type_alloc_buffer: allocating ${mib} MiB on device ${device}: cudaMalloc failed: out of memory`, after].join('\n');
  it.each([
    [
      'KV cache with n_ctx',
      ggml('25600.00', 0, 'llama_kv_cache_init: failed to allocate buffer for kv cache', ['llama_new_context_with_model: n_ctx      = 32768']),
      /KV cache.*n_ctx = 32768/,
      /25\.00 GiB for the KV cache/,
    ],
    [
      'KV cache, llama_init_from_model (newer)',
      ggml(
        '204800.00',
        0,
        'llama_kv_cache_init: failed to allocate buffer for kv cache\nllama_init_from_model: llama_kv_cache_init() failed for self-attention cache',
      ),
      /-ctk q8_0 -ctv q8_0/,
      /200\.00 GiB/,
    ],
    [
      'compute buffer on device 2',
      ggml(
        '3072.00',
        2,
        'ggml_gallocr_reserve_n: failed to allocate CUDA2 buffer of size 3221225472\nllama_new_context_with_model: failed to allocate compute buffers',
      ),
      /device 2/,
      /GPU 2/,
    ],
    [
      'weights with the layers offloaded',
      ggml('11264.00', 0, 'alloc_tensor_range: failed to allocate CUDA0 buffer of size 11811160064', ['llm_load_tensors: offloaded 41/41 layers to GPU']),
      /-ngl/,
      /41\/41 layers offloaded/,
    ],
  ])('%s', async (_name, text, lever, why) => {
    const d = await diagnoseText(text);
    expect(d?.rule).toBe('ggml-cuda-buffer-alloc');
    expect(first(d)).toMatch(lever);
    expect(String(d?.facts.holderWhy)).toMatch(why);
  });
});

describe("text-generation-inference's warmup and vLLM's blocks", () => {
  it('real: predibase/lorax#354 (a TGI fork, 1024 prefill tokens): --max-batch-prefill-tokens halved first', async () => {
    const d = await real('knowledge/tgi-prefill-warmup/match/lorax-354-prefill.log');
    expect(d?.rule).toBe('tgi-prefill-warmup');
    expect(first(d)).toMatch(/--max-batch-prefill-tokens \(e\.g\. 512\)/);
    expect(String(d?.facts.holderWhy)).toMatch(/prefill batch of 1024 tokens/);
  });
  it.each([
    [
      'router line',
      'ERROR warmup{max_input_length=4095 max_prefill_tokens=4096}:warmup: text_generation_client: router/client/src/lib.rs:33: Server error: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`',
      /e\.g\. 2048/,
    ],
    [
      'launcher line',
      'Error: Warmup(Generation("Not enough memory to handle 16384 prefill tokens. You need to decrease `--max-batch-prefill-tokens`"))',
      /e\.g\. 8192/,
    ],
  ])('%s', async (_name, text, half) => {
    const d = await diagnoseText(text);
    expect(d?.rule).toBe('tgi-prefill-warmup');
    expect(first(d)).toMatch(half);
    expect(first(d)).not.toMatch(/batch 1/);
  });

  it.each([
    [
      'with the engine config',
      "INFO llm_engine.py:100] Initializing an LLM engine with config: model='meta-llama/Llama-2-13b-hf', gpu_memory_utilization=0.85\n",
      /0\.85/,
    ],
    ['without it', '', /0\.9 \(its default\)/],
  ])('vLLM "# GPU blocks: 0" %s: the holder quotes its own figures', async (_name, head, util) => {
    const d = await diagnoseText(
      head +
        'INFO 05-01 10:00:30 worker.py:200] # GPU blocks: 0, # CPU blocks: 327\nValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.',
    );
    expect(d?.rule).toBe('vllm-kv-cache-too-small');
    expect(String(d?.facts.holderWhy)).toMatch(/# GPU blocks: 0/);
    expect(String(d?.facts.holderWhy)).toMatch(util);
  });
});
