// The KV cache of a served model as the first lever (issue 23, the budget for inference). A server (llama.cpp and what
// runs it: Ollama, LM Studio, llama-cpp-python) sizes its KV cache for the whole context when it loads, not for the
// prompt: tokens of context × layers × (K + V values per token) × bytes of the cache's type. With a large context that
// cache, not the weights, is what the card cannot hold, and the context is the first lever (a smaller model or fewer
// layers only shrink the weights). The figures are read from llama.cpp's own fixed lines: the GGUF metadata
// ("phi3.block_count u32 = 32", "...attention.head_count_kv", "...embedding_length", "...attention.key_length") or its
// print_meta ("n_layer = 32", "n_embd_k_gqa = 1024"), the context ("llama_new_context_with_model: n_ctx = 131072",
// "llama_context: n_ctx = ...", "kv_size = ..."), the cache type ("type_k = 'q8_0'"), a cache size printed outright
// ("KV self size = 4096.00 MiB", "CUDA0 KV buffer size = ..."), Ollama's estimate ('memory.required.kv="4.0 GiB"'),
// the weights placed on the GPU ("Metal buffer size = 3772.58 MiB") and what the GPU may use (Metal's
// "recommendedMaxWorkingSetSize = 49152.00 MB" or the allocation's "( 3772.66 / 49152.00)", "using device CUDA0 (...) -
// 23306 MiB free", Ollama's 'memory.available="[3.6 GiB]"'). Per line, bounded patterns: linear.
import type { LogText } from '../normalize.js';
import type { Incident } from '../incident/index.js';
import type { KvBudget } from '../incident/stack.js';

export type { KvBudget };

const MAX_LINE = 2000;
/** Below this context (llama.cpp's and Ollama's own defaults are 2048-4096) the context is not what was raised. */
const LONG_CONTEXT = 8192;
/** A cache under this is no lever worth leading with. */
const MIN_KV_MIB = 1024;
/** The smallest context worth proposing: below it the weights, not the context, are the problem. */
const MIN_CONTEXT = 2048;

const NUM = String.raw`\s{0,40}=\s{0,12}(\d{1,8})\b`;
const LAYERS = new RegExp(String.raw`(?:\bn_layer|\.block_count(?:\s{1,6}u32)?)${NUM}`);
const HEADS_KV = new RegExp(String.raw`(?:\bn_head_kv|\.attention\.head_count_kv(?:\s{1,6}u32)?)${NUM}`);
const HEADS = new RegExp(String.raw`(?:\bn_head|\.attention\.head_count(?:\s{1,6}u32)?)${NUM}`);
const EMBD = new RegExp(String.raw`(?:\bn_embd|\.embedding_length(?:\s{1,6}u32)?)${NUM}`);
const HEAD_K = new RegExp(String.raw`(?:\bn_embd_head_k|\.attention\.key_length(?:\s{1,6}u32)?)${NUM}`);
const HEAD_V = new RegExp(String.raw`(?:\bn_embd_head_v|\.attention\.value_length(?:\s{1,6}u32)?)${NUM}`);
const GQA = new RegExp(String.raw`\bn_embd_([kv])_gqa${NUM}`);
// The context the cache is built for: the runtime's n_ctx (not n_ctx_train, the model's own), the cache's kv_size, and
// the runner's --ctx-size as Ollama starts it.
const CONTEXT =
  /\b(?:llama_new_context_with_model|llama_context|llama_init_from_model):\s{0,6}n_ctx\s{0,40}=\s{0,12}(\d{1,8})\b|\bkv_size\s{0,4}=\s{0,4}(\d{1,8})\b|--ctx-size[ =](\d{1,8})\b/;
// The context of one sequence where the cache holds several (llama.cpp's --parallel, Ollama's OLLAMA_NUM_PARALLEL):
// "n_ctx_per_seq (32768)", "n_ctx_per_seq = 32768", "n_ctx_slot = 32768".
const PER_SEQ = /\bn_ctx_(?:per_seq|slot)\s{0,4}(?:\(|=)\s{0,4}(\d{1,8})\b/;
const TYPE_K = /\btype_k\s{0,4}=\s{0,4}'(\w{1,8})'|(?:-ctk|--cache-type-k)[ =](\w{1,8})\b|OLLAMA_KV_CACHE_TYPE[:=]"?(\w{1,8})/;
const KV_SELF = /\bKV self size\s{0,6}=\s{0,6}(\d{1,9}(?:\.\d{1,3})?) MiB/;
const KV_BUFFER = /\b(\w{1,12}) KV buffer size\s{0,6}=\s{0,6}(\d{1,9}(?:\.\d{1,3})?) MiB/;
const OLLAMA_KV = /memory\.required\.kv="?(\d{1,6}(?:\.\d{1,3})?) ?([KMGT])i?B/;
const OLLAMA_AVAILABLE = /memory\.available="?\[(\d{1,6}(?:\.\d{1,3})?) ?([KMGT])i?B/;
const OLLAMA_WEIGHTS = /memory\.weights\.total="?(\d{1,6}(?:\.\d{1,3})?) ?([KMGT])i?B/;
// Weights the loader placed on a GPU ("llm_load_tensors: CUDA0 buffer size", "load_tensors: Metal model buffer size").
const WEIGHTS =
  /load_tensors:\s{0,12}(CUDA\d{1,2}|ROCm\d{1,2}|Vulkan\d{1,2}|SYCL\d{1,2}|Metal(?:_Mapped)?)(?: model)? buffer size\s{0,6}=\s{0,6}(\d{1,9}(?:\.\d{1,3})?) MiB/;
const METAL_SET = /recommendedMaxWorkingSetSize\s{0,6}=\s{0,6}(\d{1,9}(?:\.\d{1,3})?) MB/;
const METAL_ALLOCATED = /allocated buffer, size =\s{0,6}[\d.]{1,12} MiB, \(\s{0,6}[\d.]{1,12} \/ (\d{1,9}(?:\.\d{1,3})?)\)/;
const CUDA_FREE = /using device (?:CUDA|ROCm|Vulkan)\d{1,2} \([^()\n]{1,80}\)[^\n]{0,40}? - (\d{1,8}) MiB free/;

/** Bytes per cached value by the cache's ggml type (block types: bytes per 32 values). */
const TYPE_BYTES: Record<string, number> = {
  f32: 4,
  f16: 2,
  bf16: 2,
  q8_0: 34 / 32,
  q5_1: 24 / 32,
  q5_0: 22 / 32,
  q4_1: 20 / 32,
  q4_0: 18 / 32,
  iq4_nl: 18 / 32,
};

const mib = (value: string, unit: string) => Number(value) * { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 }[unit as 'K' | 'M' | 'G' | 'T'];
const first = (m: RegExpExecArray | null) => (m ? Number(m[1] ?? m[2] ?? m[3]) : undefined);
export const gib = (m: number) => `${(m / 1024).toFixed(2)} GiB`;

/** The served model's KV cache and what surrounds it, where the paste gives a context and a size or the model's shape. */
export function readKvBudget(log: LogText): KvBudget | undefined {
  const shape: Partial<Record<'layers' | 'headsKv' | 'heads' | 'embd' | 'headK' | 'headV' | 'gqaK' | 'gqaV', number>> = {};
  let context: number | undefined;
  let perSeq: number | undefined;
  let typeK: string | undefined;
  let kvSelf: number | undefined;
  const kvBuffers = new Map<string, number>();
  let ollamaKv: number | undefined;
  let budget: number | undefined;
  const weights = new Map<string, number>();
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (line.includes('n_') || line.includes('.block_count') || line.includes('.attention.') || line.includes('.embedding_length')) {
      shape.layers ??= first(LAYERS.exec(line));
      shape.headsKv ??= first(HEADS_KV.exec(line));
      if (!line.includes('head_count_kv') && !line.includes('n_head_kv')) shape.heads ??= first(HEADS.exec(line));
      shape.embd ??= first(EMBD.exec(line));
      shape.headK ??= first(HEAD_K.exec(line));
      shape.headV ??= first(HEAD_V.exec(line));
      const g = GQA.exec(line);
      if (g) shape[g[1] === 'k' ? 'gqaK' : 'gqaV'] ??= Number(g[2]);
    }
    if (line.includes('n_ctx') || line.includes('kv_size') || line.includes('--ctx-size')) context = first(CONTEXT.exec(line)) ?? context;
    if (line.includes('n_ctx_')) perSeq = first(PER_SEQ.exec(line)) ?? perSeq;
    if (line.includes('type_k') || line.includes('-ctk') || line.includes('cache-type-k') || line.includes('KV_CACHE_TYPE')) {
      const m = TYPE_K.exec(line);
      if (m) typeK = (m[1] ?? m[2] ?? m[3]).toLowerCase();
    }
    if (line.includes('KV ')) {
      kvSelf = first(KV_SELF.exec(line)) ?? kvSelf;
      const b = KV_BUFFER.exec(line);
      if (b) kvBuffers.set(b[1], Number(b[2]));
    }
    if (line.includes('memory.')) {
      const kv = OLLAMA_KV.exec(line);
      if (kv) ollamaKv = mib(kv[1], kv[2]);
      const a = OLLAMA_AVAILABLE.exec(line);
      if (a) budget = mib(a[1], a[2]);
      const w = OLLAMA_WEIGHTS.exec(line);
      if (w) weights.set('ollama', mib(w[1], w[2]));
    }
    if (line.includes('buffer size')) {
      const w = WEIGHTS.exec(line);
      if (w) weights.set(w[1], Number(w[2]));
    }
    if (line.includes('WorkingSetSize') || line.includes('allocated buffer') || line.includes('MiB free')) {
      budget = first(METAL_SET.exec(line)) ?? first(METAL_ALLOCATED.exec(line)) ?? first(CUDA_FREE.exec(line)) ?? budget;
    }
  }
  if (context === undefined || context <= 0) return undefined;
  const parallel = perSeq !== undefined && perSeq > 0 && context >= 2 * perSeq ? Math.round(context / perSeq) : undefined;
  const slots = parallel !== undefined ? { parallel, perSeq } : {};
  const ctxWords = parallel !== undefined ? `n_ctx ${context} = ${parallel} × ${perSeq}` : `n_ctx ${context}`;
  const bytes = TYPE_BYTES[typeK ?? 'f16'] ?? 2;
  const heads = shape.headsKv ?? shape.heads;
  const headK = shape.headK ?? (shape.embd && shape.heads ? shape.embd / shape.heads : undefined);
  const headV = shape.headV ?? headK;
  const k = shape.gqaK ?? (heads && headK ? heads * headK : undefined);
  const v = shape.gqaV ?? (heads && headV ? heads * headV : undefined);
  const weightsMiB = weights.size ? [...weights.values()].reduce((a, b) => a + b, 0) : undefined;
  const printed = kvSelf ?? (kvBuffers.size ? [...kvBuffers.values()].reduce((a, b) => a + b, 0) : undefined) ?? ollamaKv;
  if (printed !== undefined) {
    const how =
      kvSelf !== undefined
        ? `KV self size = ${kvSelf.toFixed(2)} MiB`
        : kvBuffers.size
          ? `KV buffer size = ${printed.toFixed(2)} MiB`
          : `memory.required.kv = ${gib(printed)}`;
    return { context, kvMiB: printed, perTokenMiB: printed / context, arithmetic: `${ctxWords}: ${how}`, weightsMiB, budgetMiB: budget, ...slots };
  }
  if (!shape.layers || !k || !v) return undefined;
  const perTokenMiB = (shape.layers * (k + v) * bytes) / 2 ** 20;
  const kvMiB = perTokenMiB * context;
  const tokens = parallel !== undefined ? `(${parallel} × ${perSeq})` : `${context}`;
  const arithmetic = `${tokens} × ${shape.layers} × (${k} + ${v}) × ${Number(bytes.toFixed(3))} B ≈ ${gib(kvMiB)}`;
  return { context, kvMiB, perTokenMiB, arithmetic, weightsMiB, budgetMiB: budget, ...slots };
}

/** The card's memory the incident knows (the message's capacity, the report's card), MiB; else the largest card of the
 *  family the paste names, an upper bound (a cache above half of it is the larger part on every card of that name). */
const cardOf = (f: Incident) => f.figures.totalCapacityMiB ?? f.card.gpuMemoryMiB ?? f.card.statedGpuMemoryMiB ?? f.card.gpuModelMemoryMiB;
const cardBound = (f: Incident) => cardOf(f) ?? f.card.familyMaxMiB;

/**
 * The context first: a context above the servers' defaults whose cache is a gigabyte or more and either does not fit
 * beside the weights in what the GPU may use, or is the larger part of the budget (at least the weights, at least half
 * of the GPU); and a smaller context that fits beside the weights exists (else the weights are the problem). Never
 * where the weights' own buffer is what failed.
 */
export function kvContextFirst(f: Incident): boolean {
  const kv = f.stack.kvBudget;
  if (!kv || kv.context < LONG_CONTEXT || kv.kvMiB < MIN_KV_MIB) return false;
  if (f.stack.ggmlCudaPurpose === 'weights') return false;
  const budget = kv.budgetMiB ?? cardOf(f);
  const weights = kv.weightsMiB;
  if (budget !== undefined && weights !== undefined && weights + kv.perTokenMiB * MIN_CONTEXT >= budget) return false;
  const overflows = budget !== undefined && kv.kvMiB > budget - (weights ?? 0);
  const bound = budget ?? cardBound(f);
  const largest = (weights !== undefined && kv.kvMiB >= weights) || (bound !== undefined && kv.kvMiB >= bound / 2);
  return overflows || largest;
}

/** The context to try: a power of two at most a quarter of the present one whose cache takes at most half of the room
 *  the weights leave (the compute buffer grows with the context too); never below MIN_CONTEXT. */
export function nextContext(f: Incident): number | undefined {
  const kv = f.stack.kvBudget;
  if (!kv) return undefined;
  const budget = kv.budgetMiB ?? cardOf(f);
  const room = budget !== undefined ? (budget - (kv.weightsMiB ?? 0)) / 2 : undefined;
  // Several slots: one slot with its own context is the first step (it divides the cache by the slots).
  if (kv.parallel !== undefined && kv.perSeq !== undefined && (room === undefined || kv.perSeq * kv.perTokenMiB <= room)) return kv.perSeq;
  let next = 2 ** Math.floor(Math.log2((kv.perSeq ?? kv.context) / (kv.parallel !== undefined ? 2 : 4)));
  while (room !== undefined && next > MIN_CONTEXT && next * kv.perTokenMiB > room) next /= 2;
  return Math.max(MIN_CONTEXT, next);
}

/** The reply's words: the cache, what is beside it, the context to try (kvContextFirst's fix). */
export function kvBudgetWords(f: Incident): void {
  const kv = f.stack.kvBudget;
  if (!kv || !kvContextFirst(f)) return;
  f.stack.kvCache = kv.arithmetic;
  f.stack.kvContext = kv.context;
  f.stack.kvContextNext = nextContext(f);
  const budget = kv.budgetMiB ?? cardOf(f);
  if (kv.weightsMiB !== undefined) f.stack.kvWeights = gib(kv.weightsMiB);
  if (budget !== undefined) f.stack.kvRoom = gib(budget);
}
