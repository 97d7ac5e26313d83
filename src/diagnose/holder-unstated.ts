// "Who holds the memory" when no verdict could be reached (issue 23 items 4 and 7): the line agrees with the stack
// the paste is from. It names the figures that stack printed (TensorFlow's BFC Stats, XLA's HBM report, llama.cpp's
// buffer sizes, vLLM's start-up figures, Paddle's allocated/available, the MPS backend's, MLX's request), and when
// there are none says what that stack prints and which tool shows that device's memory: nvidia-smi only for an
// NVIDIA card, rocm-smi for ROCm, npu-smi for Ascend, Activity Monitor on a Mac, memory_stats() on a TPU.
// Stacks are told by their rule's id or their own message formats and module names, never by a thread's words.
// Patterns are bounded (untrusted input, linear).
import { t, type Locale } from '../core/i18n.js';
import { formatMiB } from './fixes/arithmetic.js';
import type { Incident } from './incident/index.js';

/** The stack that wrote the failure, as far as its memory figures go. */
export type MemoryStack = 'pytorch' | 'mps' | 'mlx' | 'tf' | 'jax' | 'llamacpp' | 'serving' | 'paddle' | 'mindspore' | 'sophon' | 'ort' | 'tensorrt' | 'other';
/** The device whose memory a tool shows. */
export type MemoryDevice = 'cuda' | 'rocm' | 'mac' | 'npu' | 'tpu' | 'sophon' | 'npuOrCuda';

/** Rules that belong to one stack, by their id's prefix. */
const RULE_STACK: [RegExp, MemoryStack][] = [
  [/^mlx-/, 'mlx'],
  [/^tensorflow-/, 'tf'],
  [/^jax-|^xla-/, 'jax'],
  [/^(?:ggml|ollama|llama)-/, 'llamacpp'],
  [/^(?:vllm|sglang|tgi)-/, 'serving'],
  [/^paddle-/, 'paddle'],
  [/^mindspore-/, 'mindspore'],
  [/^sophon-/, 'sophon'],
  [/^onnxruntime-/, 'ort'],
  [/^tensorrt/, 'tensorrt'],
  [/^(?:mxnet|caffe|ctranslate2)-/, 'other'],
];
/** Each stack's own out-of-memory formats, checked before PyTorch's (a TF or JAX log may name torch in passing). */
const OWN_FORMAT: [RegExp, MemoryStack][] = [
  [/\[malloc_or_wait\]|\[metal::malloc\]|\bmlx\.core\b|\bmlx_lm\b/, 'mlx'],
  [/\bggml_[a-z_]{2,40}|\bllama_[a-z_]{2,40}:|\bllm_load_tensors\b/, 'llamacpp'],
  [/XlaRuntimeError|Total hbm usage|\bjaxlib\b/, 'jax'],
  [/OOM when allocating tensor|ResourceExhaustedError|Allocator \([A-Za-z0-9_]{1,40}_bfc\)/, 'tf'],
  [/Out of memory error on (?:GPU|XPU|NPU) \d|\bpaddle\b/i, 'paddle'],
  [/\bmindspore\b/i, 'mindspore'],
  [/\bbm_malloc\b|\bbmrt_[a-z_]{2,30}|\bsophon\b/i, 'sophon'],
];
// PyTorch's own message (a title's "CUDA out of memory" in prose is no sign of it).
const TORCH = /OutOfMemoryError|CUDA out of memory\. Tried to allocate|\btorch[./]/;
/** Module names when no own format decided: serving engines run on PyTorch, so they come after its check. */
const MODULE: [RegExp, MemoryStack][] = [
  [/\bvllm\b|\bsglang\b|\btext_generation_server\b/i, 'serving'],
  [/\bollama\b/i, 'llamacpp'],
  [/\bonnxruntime\b/i, 'ort'],
  [/\btensorrt|\[TRT\]/i, 'tensorrt'],
  [/\bjax\b|\bflax\b/, 'jax'],
  [/\btensorflow\b|\bkeras\b/i, 'tf'],
  [/\bmxnet\b|\b(?:py)?caffe\b|\bctranslate2\b/i, 'other'],
];
const SERVING = /\bvllm\b|\bsglang\b|\btext_generation_server\b/i;

/** The stack the failure is from: its rule's id, else its own message formats, else PyTorch's, else module names. */
export function memoryStackOf(ruleId: string, text: string, f: Incident): MemoryStack {
  if (f.environment.detected?.accelerator === 'mps') return 'mps';
  const byRule = RULE_STACK.find(([re]) => re.test(ruleId));
  if (byRule) return byRule[1];
  const own = OWN_FORMAT.find(([re]) => re.test(text));
  if (own) return own[1];
  if (TORCH.test(text)) return SERVING.test(text) ? 'serving' : 'pytorch';
  return MODULE.find(([re]) => re.test(text))?.[1] ?? 'pytorch';
}

const NPU = /NPU out of memory|\btorch_npu\b|\bnpu-smi\b|\bAscend\b|昇腾/;
// PyTorch on ROCm says "HIP error: out of memory" where CUDA says "CUDA error"; rocm-smi and the ROCm builds name it too.
const ROCM = /\bHIP error\b|\bHIP out of memory\b|\bhipError|\brocm-smi\b|\+rocm\d/;
const MAC = /\bggml_metal_|\bApple M\d\b|\bMetal\b/;

/** The device whose memory a tool can show: the environment's accelerator, Ascend's and the Mac's own signs. */
export function memoryDeviceOf(stack: MemoryStack, text: string, f: Incident): MemoryDevice {
  const acc = f.environment.detected?.accelerator;
  if (stack === 'mlx' || stack === 'mps' || acc === 'mps') return 'mac';
  if (stack === 'sophon') return 'sophon';
  if (NPU.test(text)) return 'npu';
  if (acc === 'tpu') return 'tpu';
  if (acc === 'rocm' || ROCM.test(text)) return 'rocm';
  if (stack === 'llamacpp' && MAC.test(text)) return 'mac';
  // MindSpore runs on Ascend NPUs and on NVIDIA GPUs: with no sign of either, both tools.
  return stack === 'mindspore' ? 'npuOrCuda' : 'cuda';
}

const STACK_NAME: Partial<Record<MemoryStack, string>> = {
  mps: "PyTorch's MPS backend",
  mlx: 'MLX',
  tf: 'TensorFlow',
  jax: 'XLA',
  llamacpp: 'llama.cpp',
  serving: 'the server',
  paddle: 'Paddle',
};

/** The tool that shows each device's memory. */
const TOOL = {
  cuda: 'holder.tool.cuda',
  rocm: 'holder.tool.rocm',
  mac: 'holder.tool.mac',
  npu: 'holder.tool.npu',
  tpu: 'holder.tool.tpu',
  sophon: 'holder.tool.sophon',
  npuOrCuda: 'holder.tool.npuOrCuda',
} as const satisfies Record<MemoryDevice, string>;

/** What each stack prints of its memory, where it prints any (the others name only the request, or nothing). */
const SEE = {
  pytorch: 'holder.see.pytorch',
  serving: 'holder.see.serving',
  mps: 'holder.see.mps',
  mlx: 'holder.see.mlx',
  tf: 'holder.see.tf',
  jax: 'holder.see.jax',
  llamacpp: 'holder.see.llamacpp',
  paddle: 'holder.see.paddle',
} as const;

const BFC_STAT = /(?:^|[\s\]])(Limit|InUse|MaxInUse):[ \t]{1,40}(\d{1,16})[ \t]*$/gm;
const HBM = /\b(Total hbm usage >= ?[\d.]{1,10}[KMGT]?i?B?|HBM capacity [\d.]{1,10}[KMGT]?i?B?)/g;
const GGML_BUFFER = /\b((?:CUDA|ROCm|Metal|Vulkan|SYCL)\d{0,2}) {0,2}(model |KV |compute )?buffer size\s{0,4}=\s{0,12}([\d.]{1,12}) MiB/g;
// llama.cpp's memory breakdown table (2025+): "|   - CUDA0 (GTX 1080 Ti) | 11165 = 8702 + (10001 =  9814 +  134 +  51) + …".
const GGML_BREAKDOWN =
  /\|\s{1,4}- ((?:CUDA|ROCm|Metal|Vulkan|SYCL)\d{0,2})(?: \([^)|\n]{1,60}\))?\s{0,40}\|\s{0,12}(\d{1,9}) = (\d{1,9}) \+ \((\d{1,9}) =\s{0,12}(\d{1,9}) \+\s{0,12}(\d{1,9}) \+\s{0,12}(\d{1,9})\)/g;
const SERVING_FIGURES =
  /max seq len \(\d{1,9}\)|maximum number of tokens that can be stored in KV cache \(\d{1,10}\)|[\d.]{1,10} GiB KV cache is needed|available KV cache memory \(-?[\d.]{1,10} GiB\)|\b(?:model weights took|Model loading took) [\d.]{1,10} ?GiB|Available KV cache memory: [\d.]{1,10} ?GiB|# (?:GPU|cuda) blocks: \d{1,9}|KV Cache is allocated\. #tokens: \d{1,10}/g;
const PADDLE = /[\d.]{1,12} ?[KMGT]i?B memory has been allocated|available memory is only [\d.]{1,12} ?[KMGT]i?B/g;
const MPS_FIGURES = /MPS allocated: [\d.]{1,10} [KMGT]?i?B, other allocations: [\d.]{1,10} [KMGT]?i?B, max allowed: [\d.]{1,10} [KMGT]?i?B/;
const MLX_REQUEST = /\[(?:malloc_or_wait|metal::malloc)\] (?:Unable to allocate|Attempting to allocate) (\d{1,16}) bytes/;
const MAX_FIGURES = 4;

/** The stack's own words, quoted as the log printed them (distinct, the last few). */
const quoted = (texts: string[]) => [...new Set(texts)].slice(-MAX_FIGURES).map((s) => `"${s}"`);

/** The memory figures the stack printed, as it printed them (at most four, the last ones of each kind). */
export function stackFiguresNamed(stack: MemoryStack, text: string): string[] {
  const all = (re: RegExp) => [...text.matchAll(re)];
  const lastDistinct = (items: [string, string][]) => [...new Map(items).entries()].map(([k, v]) => `${k} ${v}`).slice(-MAX_FIGURES);
  switch (stack) {
    case 'tf':
      return lastDistinct(all(BFC_STAT).map((m) => [m[1], formatMiB(Number(m[2]) / 2 ** 20)]));
    case 'jax':
      return quoted(all(HBM).map((m) => m[1]));
    case 'llamacpp': {
      const table = lastDistinct(
        all(GGML_BREAKDOWN).map((m) => [m[1], `total ${m[2]} MiB, free ${m[3]}, self ${m[4]} (model ${m[5]}, context ${m[6]}, compute ${m[7]})`]),
      );
      return table.length ? table : lastDistinct(all(GGML_BUFFER).map((m) => [`${m[1]} ${m[2] ?? 'model '}buffer`, `${m[3]} MiB`]));
    }
    case 'serving':
      return quoted(all(SERVING_FIGURES).map((m) => m[0]));
    case 'paddle':
      return quoted(all(PADDLE).map((m) => m[0]));
    case 'mps': {
      const m = MPS_FIGURES.exec(text);
      return m ? quoted([m[0]]) : [];
    }
    case 'mlx': {
      const m = MLX_REQUEST.exec(text);
      return m ? [`request ${formatMiB(Number(m[1]) / 2 ** 20)}`] : [];
    }
    default:
      return [];
  }
}

/** The "who holds the memory" line when no verdict was reached: what the log gives, and how to see the rest. */
export function unstatedHolderWhy(f: Incident, ruleId: string, text: string, loc?: Locale): string {
  const stack = memoryStackOf(ruleId, text, f);
  const device = memoryDeviceOf(stack, text, f);
  const torch = stack === 'pytorch' || stack === 'serving';
  const tried = f.figures.triedAllocMiB;
  if (tried === undefined && f.figures.xlaUsedMiB !== undefined && f.figures.totalCapacityMiB !== undefined)
    return t(loc, 'diag.holder.xlaUsedOnly', { used: formatMiB(f.figures.xlaUsedMiB), total: formatMiB(f.figures.totalCapacityMiB) });
  const figures = stackFiguresNamed(stack, text);
  const lead =
    figures.length > 0
      ? t(loc, 'holder.unstated.figures', { stack: STACK_NAME[stack] ?? stack, figures: figures.join(', ') })
      : tried !== undefined
        ? t(loc, torch || stack === 'mps' ? 'diag.holder.requestOnly' : 'holder.unstated.request', { tried: formatMiB(tried) })
        : f.phase.phaseFrame
          ? t(loc, torch ? 'diag.holder.unstatedPhase' : 'holder.unstated.phase', { frame: f.phase.phaseFrame })
          : t(loc, torch ? 'diag.holder.unstated' : 'holder.unstated.none');
  const tool = t(loc, TOOL[device]);
  // Once the stack's figures are in the paste, only the tool that shows the rest of the device is left to say.
  const see = figures.length > 0 || !(stack in SEE) ? '' : t(loc, SEE[stack as keyof typeof SEE]);
  return t(loc, 'holder.unstated.line', { lead, advice: see ? t(loc, 'holder.unstated.seeOr', { see, tool }) : tool });
}
