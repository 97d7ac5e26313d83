// What a paste says about the model and the card: the parameter count (from the name, prose or
// knowledge/models.json), the dtype of the weights, and the card's memory stated in words or fixed by its name
// (knowledge/gpus.json). Split from settings.ts; every pattern bounded (untrusted input, linear).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import RE2 from 're2';
import { PROJECT_ROOT } from '../core/paths.js';

// A card's memory stated in words: a model then its size ("A100 80G", "4090 24G显存", "3060 12GB"), or a size
// then a GPU word ("24G显存", "8gb graphics card", "16GB VRAM"). Bounded and anchored on digits: linear.
// nvidia-smi and torch name the data-centre cards with their form factor between: "A100-SXM4-80GB", "A100-PCIE-40GB".
// A count written against the name counts GPUs, not the card's size: "8xA100 80GB", "4xA6000(48GB)", "2x3090 24GB".
const GPU_MODEL_SIZE =
  /(?:\b|(?<=\d[xX×]))(?:A100|A800|H100|H800|H200|V100|P100|A6000|A40|A10G?|L40S?|L4|T4|RTX\s?\d{4}(?:\s?Ti)?|\d{4}\s?Ti|[1-5]0[5-9]0)\b(?:[-\s](?:SXM\d?|PCIE|NVL))?[^\n\d]{0,4}(\d{1,3})\s?G(?:B|iB)?\b/i;
// The same in MiB, as nvidia-smi and drivers print a card's total: "RTX 3060 (max 8192MiB)", "T4 15360MiB".
const GPU_MODEL_MIB =
  /(?:\b|(?<=\d[xX×]))(?:A100|A800|H100|H800|H200|V100|P100|A6000|A40|A10G?|L40S?|L4|T4|RTX\s?\d{4}(?:\s?Ti)?|\d{4}\s?Ti|[1-5]0[5-9]0)\b[^\n\d]{0,12}(\d{4,6})\s?MiB\b/i;
// "a GPU with 24gb of ram", "graphics card with 8 GB"
const GPU_WITH_SIZE = /\b(?:GPU|graphics card|video card)s? with (\d{1,3})\s?G(?:B|iB)?\b/i;
const SIZE_GPU_WORD = /\b(\d{1,3})\s?G(?:B|iB)?\s?(?:的)?\s?(?:显存|显卡|VRAM|GPU|graphics card|video card)/i;

// What a run needs or uses is not the card: "requires 28G GPU RAM", "uses 20GB VRAM", "占用了 30G 显存".
// Nor what is left of it: "还剩接近18G的显存" (nearly 18G remaining), "remaining 10GB GPU memory".
const USAGE_BEFORE =
  /(?:requires?|required|needs?|needed|uses?|using|used|takes?|took|occup\w{0,4}|consum\w{0,4}|需要|占用了?|用了|remaining|剩余?|剩下|还剩|空闲)\s{0,3}(?:about|around|roughly|nearly|almost|~|约|接近|将近|大约|近)?\s{0,3}$/i;
const SIZE_GPU_WORDS = new RegExp(SIZE_GPU_WORD.source, 'gi');

/** The first "<N>G <GPU word>" that names the card, not what the run needs or uses of it. */
function cardSizeWord(text: string): RegExpExecArray | null {
  SIZE_GPU_WORDS.lastIndex = 0;
  for (let m = SIZE_GPU_WORDS.exec(text); m; m = SIZE_GPU_WORDS.exec(text)) {
    if (!USAGE_BEFORE.test(text.slice(Math.max(0, m.index - 24), m.index))) return m;
  }
  return null;
}

// A report that moves between cards ("I first used a GPU with 24GB ... Later I tried a GPU with 48GB") ends on the
// card of the failure it shows: the last one stated is read.
const GPU_MODEL_SIZES = new RegExp(GPU_MODEL_SIZE.source, 'gi');
const GPUS_WITH_SIZE = new RegExp(GPU_WITH_SIZE.source, 'gi');
function lastMatch(re: RegExp, text: string): RegExpExecArray | null {
  re.lastIndex = 0;
  let last: RegExpExecArray | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) last = m;
  return last;
}

export function statedGpuMemoryMiB(text: string): number | undefined {
  const m = lastMatch(GPU_MODEL_SIZES, text) ?? cardSizeWord(text) ?? lastMatch(GPUS_WITH_SIZE, text);
  const mib = m ? undefined : GPU_MODEL_MIB.exec(text);
  const gib = m ? Number(m[1]) : mib ? Number(mib[1]) / 1024 : NaN;
  return gib >= 2 && gib <= 192 ? gib * 1024 : undefined;
}

// A parameter count inside a model name: "Llama-2-7b-hf", "chatglm-6b", "Qwen1.5-14B-Chat", "opt-1.3b".
// Dashes inside the name too ("llama-2-7b"), and right after Chinese text ("DPO全参训练qwen-14b-chat"); bounded, so a long line stays linear.
// BLOOM and Pythia spell a fraction after the B ("bloom-1b7", "bloom-7b1", "pythia-1b4"): 1.7, 7.1, 1.4 billion.
const PARAMS_IN_NAME = /(?:^|[/\s'"=:]|[^\x00-\x7F])[A-Za-z][\w.-]{0,40}[-_](\d{1,3}(?:\.\d{1,2})?)[bB](\d)?(?![\w.])/g;

// The same count told in prose: "the 13B model", "a 7b LLM", "1.5B parameters", "6B模型" (no model name).
const PARAMS_IN_PROSE = /(?:^|[^\w.])(\d{1,3}(?:\.\d{1,2})?)\s?[bB]\s?(?:models?\b|parameters?\b|params\b|LLM|模型|参数)/g;

// A model family's name, a space, then its size: "LLaMA 7B", "Llama 2 13B", "Qwen2.5 72B", "Mistral 7B" (the families'
// own spellings; a name with a dash is PARAMS_IN_NAME's).
const PARAMS_AFTER_FAMILY =
  /\b(?:LLaMA|Llama|Llama[- ]?[23](?:\.\d)?|Qwen\d?(?:\.\d)?|Mistral|Mixtral|Falcon|Baichuan\d?|ChatGLM\d?|InternLM\d?|Gemma\s?\d?|Vicuna|Alpaca|BLOOM|Pythia|StarCoder\d?|CodeLlama|DeepSeek(?:-\w{1,10})?|Yi|OPT|GPT-?J|GPT-?NeoX?)\s(\d{1,3}(?:\.\d{1,2})?)[bB](?![\w.])/g;

// A local folder named after the family with the size joined to it ("./baichuan13b_new", "llama7b-chat"): lowest.
const PARAMS_JOINED_TO_FAMILY = /(?:^|[/\s'"=:.])(?:baichuan|llama|qwen|mistral|falcon|internlm|chatglm|vicuna|gemma)(\d{1,3})b(?=[_\s'"/-]|$)/gim;

// Qwen's checkpoints spell the decimal point of the size as an underscore ("Qwen-1_8B", "Qwen1.5-0_5B"): 1.8 and 0.5
// billion, not 8 and 5. Only right after a dash or slash, so "llama_2_7b" stays 7B.
const UNDERSCORE_DECIMAL = /(?<=[-/])(\d)_(\d)(?=[bB](?![\w.]))/g;

/** Billions of parameters from the model named in the settings, else the last model-like name (or prose count) in the log. */
export function modelParamsB(text: string, model: string | undefined): number | undefined {
  const last = (s: string, re: RegExp) => {
    let v: number | undefined;
    re.lastIndex = 0;
    for (const m of s.replace(UNDERSCORE_DECIMAL, '$1.$2').matchAll(re)) v = Number(m[1]) + (m[2] !== undefined ? Number(m[2]) / 10 : 0);
    return v !== undefined && v > 0 && v <= 2000 ? v : undefined;
  };
  const body = text.length > 65536 ? text.slice(0, 32768) + text.slice(-32768) : text;
  return (
    (model ? last(' ' + model, PARAMS_IN_NAME) : undefined) ??
    last(body, PARAMS_IN_NAME) ??
    last(body, PARAMS_IN_PROSE) ??
    last(body, PARAMS_AFTER_FAMILY) ??
    last(body, PARAMS_JOINED_TO_FAMILY) ??
    knownModelParamsB(body)
  );
}

// A flag given the value False (`--fp16 False`, HfArgumentParser's booleans) states no half precision.
const DTYPES: [RegExp, 'fp32' | 'fp16' | 'bf16' | 'int8' | 'int4'][] = [
  [/load_in_4bit\s{0,2}[=:]\s{0,2}True|--load[-_]in[-_]4bit\b|\bnf4\b|bnb_4bit|quantization[^\n]{0,20}\b(?:awq|gptq|int4)\b/i, 'int4'],
  // torch.int8 is a cast's dtype (.to(dtype=torch.int8)), not a quantized load
  [/load_in_8bit\s{0,2}[=:]\s{0,2}True|--load[-_]in[-_]8bit\b|(?<!torch\.)\bint8\b/i, 'int8'],
  [
    /torch_dtype\s{0,2}[=:]\s{0,2}['"]?(?:torch\.)?bfloat16|--bf16\b(?![ \t=]{1,3}['"]?(?:False|false|no|0)\b)|\bbf16\s{0,2}[=:]\s{0,2}True|dtype\s{0,2}[=:]\s{0,2}['"]?(?:torch\.)?bfloat16|mixed_precision\s{0,2}[=:]\s{0,2}['"]?bf16/i,
    'bf16',
  ],
  [
    /torch_dtype\s{0,2}[=:]\s{0,2}['"]?(?:torch\.)?(?:float16|half)|--fp16\b(?![ \t=]{1,3}['"]?(?:False|false|no|0)\b)|\bfp16\s{0,2}[=:]\s{0,2}True|dtype\s{0,2}[=:]\s{0,2}['"]?(?:torch\.)?(?:float16|half)\b|--half\b|\.half\(\)|mixed_precision\s{0,2}[=:]\s{0,2}['"]?fp16|precision\s{0,2}[=:]\s{0,2}['"]?16/i,
    'fp16',
  ],
  // Full precision stated for the weights, after every half-precision form (which decides where both appear): "the
  // weights are transferred at full precision (fp32)", torch_dtype=torch.float32, and the web UIs' own switches that
  // load fp32 (Easy Diffusion's FORCE_FULL_PRECISION, AUTOMATIC1111's --no-half, --precision full).
  [
    /\b(?:weights?|model|parameters|params|checkpoint|tensors)\b[^\n]{0,60}?\b(?:in|at|as|to)\s{1,3}(?:full\s{1,3}precision|fp32|float32|single\s{1,3}precision)\b|torch_dtype\s{0,2}[=:]\s{0,2}['"]?(?:torch\.)?float32\b|\bFORCE_FULL_PRECISION\s{0,2}=\s{0,2}(?:T|true|1|yes)\b|--no-half\b(?!-)|--precision\s{1,3}full\b/i,
    'fp32',
  ],
];

// A checkpoint's name says how its weights are stored (issue 23, the memory budget): "-bnb-4bit" (Unsloth), "-4bit",
// "-GPTQ", "-AWQ", "-Int4" and llama.cpp's 4-bit GGUF types (Q4_K_M, Q4_0, IQ4_XS) are ~4 bits a weight; "-8bit",
// "-Int8", Q8_0 and an fp8 checkpoint ("_fp8_e4m3fn": one byte a weight) are 8. A name token ends in the marker; bounded, linear.
const QUANT_NAME =
  /[\w./-]{0,80}?[-_.](?:(?:bnb[-_.])?([48])bit|(GPTQ|AWQ)|int([48])|(?:I?Q([48])_(?:K(?:_[MSL])?|[01]|XS|NL))|(fp8)(?:_e4m3fn|_e5m2|_scaled){0,2})(?![\w])/gi;
// What ends in "4bit"/"8bit" but is no checkpoint: the loading flags (read with their value above) and 8-bit optimizers.
// torch.int8 is a dtype a cast names (.to(dtype=torch.int8)), no checkpoint.
const NOT_A_NAME = /load[-_]in|adam|optim|lion|sgd|paged|^torch\.int/i;

// The parameter count a quantized checkpoint's own name carries ("vicuna-7B-GPTQ-4bit" -> 7).
const SIZE_IN_NAME = /[-_/](\d{1,3}(?:\.\d{1,2})?)[bB](?![a-zA-Z])/;

/**
 * 4 or 8 when a model name in the paste carries a quantization marker (the first one found). A name that carries
 * another size than the model the paste sizes (`paramsB`) speaks for that other checkpoint only ("I also tried
 * Vicuna-7B-GPTQ-4bit" beside a 13B run): it says nothing of how the 13B weights are stored.
 */
export function quantizedNameBits(text: string, paramsB?: number): 4 | 8 | undefined {
  QUANT_NAME.lastIndex = 0;
  for (const m of text.matchAll(QUANT_NAME)) {
    if (NOT_A_NAME.test(m[0])) continue;
    // The whole name token the marker ends ("vicuna-7B-GPTQ-4bit": "-4bit" alone is matched after "vicuna-7B-GPTQ").
    let start = m.index;
    while (start > 0 && m.index - start < 120 && /[\w./-]/.test(text[start - 1])) start--;
    const own = SIZE_IN_NAME.exec(text.slice(start, m.index + m[0].length));
    if (paramsB !== undefined && own && Math.abs(Number(own[1]) - paramsB) > 0.05 * paramsB) continue;
    const bits = m[1] ?? m[3] ?? m[4] ?? (m[2] ? '4' : m[5] ? '8' : undefined);
    if (bits === '4' || bits === '8') return Number(bits) as 4 | 8;
  }
  return undefined;
}

const COMMENTED_LINE = /^[ \t]{0,40}#[^\n]*$/gm;

/** The dtype the log says the weights or compute use (quantized first: it decides the weights' size). */
export function weightsDtype(text: string, paramsB?: number): 'fp32' | 'fp16' | 'bf16' | 'int8' | 'int4' | undefined {
  // A commented-out line (`#load_in_4bit=True` in code, a YAML or shell comment) states a setting that is off.
  const head = (text.length > 65536 ? text.slice(0, 32768) + text.slice(-32768) : text).replace(COMMENTED_LINE, '');
  const named = quantizedNameBits(head, paramsB);
  for (const [re, dtype] of DTYPES) {
    if (re.test(head)) return dtype;
    // A quantized checkpoint's name decides before any compute dtype (bnb_4bit_compute_dtype=bfloat16 is not the weights).
    if ((dtype === 'int4' && named === 4) || (dtype === 'int8' && named === 8)) return dtype;
  }
  return undefined;
}

interface KnownModel {
  name: string;
  pattern: string;
  params_b: number;
  source: string;
}
let knownModels: { name: string; re: RE2; paramsB: number }[] | undefined;

/** knowledge/models.json: models whose names carry no size ("whisper large", "FLUX.1-dev"), each with its count. */
export function loadKnownModels(file = join(PROJECT_ROOT, 'knowledge', 'models.json')): { name: string; re: RE2; paramsB: number }[] {
  if (!existsSync(file)) return [];
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { models?: KnownModel[] };
  return (doc.models ?? []).map((m, i) => {
    if (typeof m.name !== 'string' || typeof m.pattern !== 'string' || !(m.params_b > 0) || !/^https?:\/\//.test(m.source ?? ''))
      throw new Error(`${file}: models.${i}: needs name, pattern, params_b > 0 and a source URL`);
    return { name: m.name, re: new RE2(m.pattern, 'i'), paramsB: m.params_b };
  });
}

/** Billions of parameters of the first known model (file order: specific names first) the log names. */
export function knownModelParamsB(text: string): number | undefined {
  knownModels ??= loadKnownModels();
  return knownModels.find((m) => m.re.test(text))?.paramsB;
}

let knownGpus: { re: RE2; gib: number }[] | undefined;

/** knowledge/gpus.json: cards whose name fixes their memory, tried in file order. */
export function loadKnownGpus(file = join(PROJECT_ROOT, 'knowledge', 'gpus.json')): { re: RE2; gib: number }[] {
  if (!existsSync(file)) return [];
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { gpus?: { pattern: string; gib: number }[] };
  return (doc.gpus ?? []).map((g, i) => {
    if (typeof g.pattern !== 'string' || !(g.gib > 0)) throw new Error(`${file}: gpus.${i}: needs a pattern and gib > 0`);
    return { re: new RE2(g.pattern, 'i'), gib: g.gib };
  });
}

/** GiB of the first card (file order) the log names, when its name fixes its memory. */
export function knownGpuMemoryGiB(text: string): number | undefined {
  knownGpus ??= loadKnownGpus();
  const head = text.length > 65536 ? text.slice(0, 32768) + text.slice(-32768) : text;
  return knownGpus.find((g) => g.re.test(head))?.gib;
}

let gpuFamilies: { re: RE2; gib: number }[] | undefined;

/** knowledge/gpus.json `families`: cards sold in several sizes, each with the largest it is sold with. */
export function loadGpuFamilies(file = join(PROJECT_ROOT, 'knowledge', 'gpus.json')): { re: RE2; gib: number }[] {
  if (!existsSync(file)) return [];
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { families?: { pattern: string; max_gib: number }[] };
  return (doc.families ?? []).map((g, i) => {
    if (typeof g.pattern !== 'string' || !(g.max_gib > 0)) throw new Error(`${file}: families.${i}: needs a pattern and max_gib > 0`);
    return { re: new RE2(g.pattern, 'i'), gib: g.max_gib };
  });
}

/** GiB of the largest size the first card family (file order) the log names is sold with ("A100" -> 80). */
export function gpuFamilyMaxGiB(text: string): number | undefined {
  gpuFamilies ??= loadGpuFamilies();
  const head = text.length > 65536 ? text.slice(0, 32768) + text.slice(-32768) : text;
  return gpuFamilies.find((g) => g.re.test(head))?.gib;
}
