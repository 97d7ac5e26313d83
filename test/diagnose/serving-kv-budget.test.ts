// Issue 23, the budget for inference: a server (llama.cpp and what runs it: Ollama, LM Studio, llama-cpp-python) sizes
// its KV cache for the whole context when it loads: tokens × layers × (K + V values per token) × bytes of the cache's
// type. Where the paste prints that cache (or the model's shape and the context) and it does not fit beside the weights
// in what the GPU may use, or is the larger part of the budget, the context is the first lever; a smaller model or fewer
// GPU layers come after (levers/kv-budget.ts). Never where the weights' own buffer failed, nor for a context at the
// servers' defaults, nor where even a 2048-token cache does not fit beside the weights.
// Real threads: blind11 6672 (read split), serve14 7483 and the near miss 7487 (tuned group; URLs in their cases.json);
// the other texts are synthetic variants written from the principle. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readKvBudget } from '../../src/diagnose/levers/kv-budget.js';
import { LogText, normalizeLog } from '../../src/diagnose/normalize.js';

const KV_FIRST = /^The KV cache (?:is what the GPU cannot hold|is the largest part)/;
const read = (text: string) => readKvBudget(new LogText(normalizeLog(text)));

describe('real threads', () => {
  it('blind11/6672: Phi-3.5 at its 131072-token default on Metal: the cache is the whole 48 GiB working set', async () => {
    const first = (await firstOfCase('blind11', '6672'))?.fixes[0]?.summary ?? '';
    expect(first).toMatch(KV_FIRST);
    expect(first).toContain('131072 × 32 × (3072 + 3072) × 2 B ≈ 48.00 GiB');
    expect(first).toContain('3.68 GiB of weights in the 48.00 GiB');
  });
  it('serve14/7483: Ollama with 20 parallel slots of 32768: one slot first', async () => {
    const first = (await firstOfCase('serve14', '7483'))?.fixes[0]?.summary ?? '';
    expect(first).toMatch(KV_FIRST);
    expect(first).toContain('n_ctx 655360 = 20 × 32768');
    expect(first).toMatch(/e\.g\. 32768[\s\S]*OLLAMA_NUM_PARALLEL=1/);
  });
  it('serve14/7487 (near miss): a default 8192 context whose compute buffer fails after another model: not the cache', async () => {
    expect((await firstOfCase('serve14', '7487'))?.fixes[0]?.summary ?? '').not.toMatch(KV_FIRST);
  });
});

// Synthetic: llama.cpp's own lines around a failed buffer, written from the principle.
const META = (ctx: number, kvHeads: number) =>
  [
    'llama_model_loader: - kv  14:                          llama.block_count u32              = 32',
    'llama_model_loader: - kv  15:                 llama.attention.head_count u32              = 32',
    `llama_model_loader: - kv  16:              llama.attention.head_count_kv u32              = ${kvHeads}`,
    'llama_model_loader: - kv  17:                     llama.embedding_length u32              = 4096',
    'llm_load_tensors: offloaded 33/33 layers to GPU',
    'llm_load_tensors:      CUDA0 buffer size =  4403.49 MiB',
    `llama_new_context_with_model: n_ctx      = ${ctx}`,
  ].join('\n');
const CUDA_FREE = 'llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3060) - 11800 MiB free';
const KV_FAIL = [
  'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of memory',
  'llama_kv_cache_init: failed to allocate buffer for kv cache',
  'llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache',
].join('\n');

describe('the arithmetic from the paste (synthetic variants)', () => {
  it('GGUF metadata: layers × KV heads × head dim × context × 2 × 2 bytes', () => {
    const kv = read(META(32768, 32));
    expect(kv?.kvMiB).toBe(16384);
    expect(kv?.weightsMiB).toBeCloseTo(4403.49);
  });
  it('grouped-query attention: 8 KV heads of 32 make a quarter of the cache', () => {
    expect(read(META(32768, 8))?.kvMiB).toBe(4096);
  });
  it("print_meta's n_embd_k_gqa / n_embd_v_gqa and a q8_0 cache", () => {
    const text = [
      'print_info: n_layer          = 28',
      'print_info: n_embd_k_gqa     = 512',
      'print_info: n_embd_v_gqa     = 512',
      'llama_context: n_ctx         = 131072',
      "llama_kv_cache: kv_size = 131072, type_k = 'q8_0', type_v = 'q8_0', n_layer = 28",
    ].join('\n');
    expect(read(text)?.kvMiB).toBeCloseTo((131072 * 28 * 1024 * (34 / 32)) / 2 ** 20);
  });
  it('a printed cache size wins over the arithmetic', () => {
    expect(read(META(32768, 32) + '\nllama_new_context_with_model: KV self size  = 4096.00 MiB, K (f16): 2048.00 MiB, V (f16): 2048.00 MiB')?.kvMiB).toBe(4096);
  });
  it('no context printed: nothing to read', () => {
    expect(read('llama_model_loader: - kv  14:                          llama.block_count u32              = 32')).toBeUndefined();
  });
});

describe('the context first, and where it is not (synthetic variants)', () => {
  it('a 32768 context whose 16 GiB cache does not fit the 11.5 GiB free beside 4.3 GiB of weights', async () => {
    const first = (await diagnosePaste(`${CUDA_FREE}\n${META(32768, 32)}\n${KV_FAIL}`))?.fixes[0]?.summary ?? '';
    expect(first).toMatch(KV_FIRST);
    expect(first).toMatch(/e\.g\. \d{4,5}:/);
  });
  it('the same model at a 4096 context (a default): the cache is no lever to lead with', async () => {
    const first = (await diagnosePaste(`${CUDA_FREE}\n${META(4096, 32)}\n${KV_FAIL}`))?.fixes[0]?.summary ?? '';
    expect(first).not.toMatch(KV_FIRST);
  });
  it("the weights' own buffer failed: offloading fewer layers, not the context", async () => {
    const weightsFail = [
      CUDA_FREE,
      META(32768, 32),
      'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory',
      'llama_model_load: error loading model: unable to allocate CUDA0 buffer',
    ].join('\n');
    expect((await diagnosePaste(weightsFail))?.fixes[0]?.summary ?? '').not.toMatch(KV_FIRST);
  });
  it('weights that leave no room for even a 2048-token cache: the weights, not the context', async () => {
    const tight = `llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3050) - 4500 MiB free\n${META(32768, 32)}\n${KV_FAIL}`;
    expect((await diagnosePaste(tight))?.fixes[0]?.summary ?? '').not.toMatch(KV_FIRST);
  });
  it('Metal: the working set printed by ggml-metal and a 65536 context', async () => {
    const metal = [
      'ggml_metal_init: recommendedMaxWorkingSetSize  = 21845.34 MB',
      META(65536, 32).replace('CUDA0 buffer size', 'Metal buffer size'),
      'ggml_metal_graph_compute: command buffer 0 failed with status 5',
      'error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)',
    ].join('\n');
    const first = (await diagnosePaste(metal))?.fixes[0]?.summary ?? '';
    expect(first).toMatch(KV_FIRST);
    expect(first).toContain('in the 21.33 GiB the GPU may use');
  });
});
