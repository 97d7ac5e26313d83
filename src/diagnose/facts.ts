// Pulls the numbers a fix needs out of a log: the OOM message's figures and the run's settings
// (command lines, Ultralytics `engine/trainer:` dumps, argparse Namespace, YOLOv5 opt/hyp dumps,
// HF TrainingArguments). All patterns are bounded and anchored so a hostile paste cannot make them slow.
import type { MemoryShape } from './memory-series.js';
import type { LogText } from './normalize.js';
import { isGenerating, oomPhase, type OomPhase } from './holder-phase.js';
import { failurePhase, withPhase, type Phase } from './phase.js';

export interface OtherProcess {
  pid: number;
  memoryMiB: number;
}

export interface Facts {
  triedAllocMiB?: number;
  totalCapacityMiB?: number;
  freeMiB?: number;
  allocatedMiB?: number;
  reservedMiB?: number;
  reservedUnallocatedMiB?: number;
  cachedMiB?: number;
  thisProcessMiB?: number;
  /** The report says the kill came while the model was loading ("模型加载Killed", "killed while loading the model"). */
  killedWhileLoading?: boolean;
  /** Killed (host RAM) while the job loaded or prepared its data, before any training step reported a loss. */
  killedLoadingData?: boolean;
  /** CUDA's own "CUDA error: out of memory" (or the pre-1.0 "cuda runtime error (2)"): an allocation outside PyTorch's caching allocator, such as the context or the first tensor. */
  runtimeOom?: boolean;
  /** The card's memory as the report states it in words ("A100 80G", "4090 24G显存", "8gb graphics card"). */
  statedGpuMemoryMiB?: number;
  /** Free on the device when the process started, before it allocated anything (vLLM's start-up check). */
  startupFreeMiB?: number;
  /** XLA's compile-time HBM report: what the program needs in all, and how much of it is arguments (parameters and inputs) and program temporaries. */
  xlaUsedMiB?: number;
  xlaArgumentsMiB?: number;
  xlaProgramMiB?: number;
  gpuIndex?: number;
  otherProcesses?: OtherProcess[];
  batch?: number;
  autobatch?: number;
  workers?: number;
  imgsz?: number;
  cache?: string | boolean;
  singleCls?: boolean;
  resume?: boolean;
  amp?: boolean;
  accumulate?: number;
  epochs?: number;
  model?: string;
  /** Billions of parameters, from the model's name ("Llama-2-7b-hf", "Qwen1.5-14B"). */
  paramsB?: number;
  /** The dtype the weights are loaded in, where the log states it. */
  dtype?: 'fp32' | 'fp16' | 'bf16' | 'int8' | 'int4';
  /** The tool that wrote the log (knowledge/tools.yaml) and its own knobs, quoted by the fixes. */
  tool?: string;
  toolName?: string;
  /** A serving tool (vLLM, web UIs): no training batch or AMP to change. */
  inference?: boolean;
  /** The batch is the tool's default, not read from the log (its name, for the reply). */
  batchDefaultOf?: string;
  /** The batch was read from the failing tensor's leading dimension (TensorFlow's shape[...]). */
  batchFromShape?: string;
  /** How the tool's command line takes a batch it does not state (tools.yaml batch_arg). */
  batchArg?: string;
  batchFlag?: string;
  ampHow?: string;
  ampDefaultOn?: boolean;
  toolKnobs?: string;
  /** What the run was doing when the allocation failed, from the traceback's frames. */
  oomPhase?: OomPhase;
  /** What the run was doing when it failed (src/diagnose/phase.ts), the frame that showed it, and for evaluation whose loop it is. */
  phase?: Phase;
  phaseFrame?: string;
  evalLoop?: 'hf' | 'lightning' | 'plain';
  /** HF Trainer was concatenating every batch's predictions on the GPU (nested_concat). */
  gathersPredictions?: boolean;
  /** How the dtype was inferred when the log states none ("28672 × 8192 × 4 bytes (Llama-2-70B)"), and the reply's words for it. */
  dtypeEvidence?: string;
  dtypeWhy?: string;
  /** The static part against the card when it alone does not fit ("13B × 16 B/param ≈ 193.7 GiB ≥ 24.0 GiB"). */
  staticWhy?: string;
  /** Allocator settings (src/diagnose/alloc-conf.ts): the variable to advise, the torch version that decided it, one already set. */
  allocConfName?: string;
  torchVersion?: string;
  expandableAlreadySet?: string;
  /** The traceback runs through generation or a diffusion pipeline and no training step: inference. */
  generating?: boolean;
  /** The log is a training run (optimizer, backward, a trainer), and whether it trains adapters only (LoRA/PEFT). */
  training?: boolean;
  adapterTraining?: boolean;
  /** Who holds the GPU memory (src/diagnose/holder.ts) and the arithmetic that says so. */
  holder?: string;
  holderWhy?: string;
  /** The report says the run trained several epochs at these settings before the GPU ran out ("after 21 epochs", "after several epochs"). */
  oomAfterEpochs?: string;
  /** The tool's way to split weights over devices, for the weights fix. */
  weightsSplitHow?: string;
  gpuName?: string;
  gpuMemoryMiB?: number;
  hostRamGiB?: number;
  /** GPU memory per epoch or iteration, in MiB, as the training log printed it. */
  memorySeriesMiB?: number[];
  /** The series' shape (src/diagnose/memory-series.ts) and, for a rising one, where it rises. */
  memoryShape?: MemoryShape;
  memoryGrowsAt?: 'per_iteration' | 'between_epochs';
  /** The pasted code or log already calls torch.cuda.empty_cache(): advising it again changes nothing. */
  emptiesCache?: boolean;
  /** Ranks of one job that also hold a context on one shared GPU (src/diagnose/rank-contexts.ts). */
  strayContextGpu?: number;
  strayContextPids?: string;
  strayContextMiB?: string;
  commandLine?: string;
  ncclTimeoutMs?: number;
  /** Who never reached the distributed start-up, in words (src/diagnose/rendezvous.ts). */
  rendezvousFinding?: string;
  /** The rank that failed or diverged first, in words (src/diagnose/lost-rank.ts). */
  lostRankFinding?: string;
  /** The last step DeepSpeed's see_memory_usage announced ("Before initializing optimizer states"). */
  deepspeedPhase?: string;
  /** Highest NCCL SeqNum each rank reported in watchdog timeouts. */
  ncclSeqByRank?: Record<string, number>;
  /** vLLM: the model's max seq len and the tokens its KV cache can hold. */
  maxModelLen?: number;
  kvCacheTokens?: number;
  /** The report says a changed (smaller) batch did not help: "try to change the batch_size, this error still occured". */
  batchChangeNoHelp?: boolean;
  /** The card's memory from its model name alone (knowledge/gpus.json: "GTX 1050 Ti" -> 4 GiB), when nothing else states it. */
  gpuModelMemoryMiB?: number;
  /** Weights llama.cpp / ggml placed on the GPU ("CUDA0 buffer size = 3946.35 MiB"). */
  ggmlGpuWeightsMiB?: number;
  /** The host-RAM buffer ggml (llama.cpp) failed to allocate, as the reply shows it ("128.00 GiB"). */
  ggmlBuffer?: string;
  /** DeepSpeed ZeRO stage the run's config or command states (the config's "stage" wins over prose). */
  zeroStage?: number;
  /** vLLM's memory profile (v0.6+): its budget (util × card), what the weights, the profiled activation peak and
   *  memory outside PyTorch take of it, and what is left for the KV cache; all GiB. */
  vllmProfile?: { totalGiB: number; util: number; budgetGiB: number; weightsGiB: number; nonTorchGiB: number; peakGiB: number; kvGiB: number };
  /** The same, as the reply shows them ("0.70 × 8.00 GiB = 5.60 GiB", "5.20 GiB"). */
  vllmBudget?: string;
  vllmWeights?: string;
  vllmPeak?: string;
  vllmNonTorch?: string;
  vllmKv?: string;
  /** The --gpu-memory-utilization that would leave the KV cache 10% of the card, when one up to 0.95 does. */
  vllmUtilNeeded?: string;
  /** Figures in a non-PyTorch stack's own format (src/diagnose/stack-figures.ts): TF/XLA's BFC allocator (its
   *  name and Stats block), llama.cpp's failed CUDA buffer and what it was for, TGI's prefill, vLLM's blocks. */
  bfcAllocator?: string;
  bfcLimitMiB?: number;
  bfcInUseMiB?: number;
  bfcMaxInUseMiB?: number;
  ggmlCudaAskMiB?: number;
  ggmlCudaPurpose?: 'weights' | 'kv_cache' | 'compute';
  ggmlCtx?: number;
  ggmlCtxStated?: string;
  ggmlLayers?: string;
  prefillTokens?: number;
  prefillTokensHalf?: number;
  vllmGpuBlocks?: number;
  vllmUtil?: number;
  /** Where the job runs (src/diagnose/environment.ts): notebook host, OS, accelerator, library versions. */
  environment?: import('./environment.js').Environment;
  /** Why expandable_segments is not available there ("Windows", "PyTorch 1.13"), for the fix that replaces it. */
  expandableWhy?: string;
  /** Percent shown on the last "Loading checkpoint shards" progress line (Hugging Face from_pretrained). */
  shardsLoadedPct?: number;
  /** Percent shown on the last YOLO "Caching images (N GB)" progress line. */
  cacheProgressPct?: number;
  /** Who ran out of /dev/shm and how (src/diagnose/levers/shm.ts): NCCL's segment, DataLoader workers, or multiprocessing's semaphores. */
  shmWriter?: 'nccl' | 'workers' | 'semaphore';
  shmSegment?: string;
  shmDisableIgnored?: boolean;
  /** The weights' budget against the card when fp32 is what does not fit (src/diagnose/levers/budget.ts). */
  budgetWhy?: string;
  /** Ray's memory monitor killed a task for the node's RAM, with its figures (src/diagnose/stack-figures.ts). */
  rayMonitor?: string;
}

const UNIT_MIB: Record<string, number> = {
  b: 1 / 1048576,
  bytes: 1 / 1048576,
  kib: 1 / 1024,
  kb: 1 / 1024,
  mib: 1,
  mb: 1,
  gib: 1024,
  gb: 1024,
  tib: 1048576,
  tb: 1048576,
};

export function toMiB(value: string, unit: string): number | undefined {
  const n = Number(value.replace(/,/g, ''));
  const f = UNIT_MIB[unit.toLowerCase()];
  if (!Number.isFinite(n) || f === undefined) return undefined;
  return Math.round(n * f * 100) / 100;
}

// Paddle prints six decimals ("98.000244MB").
const NUM = String.raw`(\d{1,15}(?:\.\d{1,6})?)\s?([KMGT]i?B|bytes|B)`;
const OOM_FIELDS: [keyof Facts, RegExp][] = [
  // "Allocation on device 0 would exceed allowed memory. (out of memory)" then one figure a line (first: its "Free (according to CUDA)"
  // must not be read as the generic "<N> free" of the line joined before it):
  // "Currently allocated : 6.50 GiB", "Requested : 40.00 MiB", "Device limit : 8.00 GiB", "Free (according to CUDA): 0 bytes"
  ['allocatedMiB', new RegExp(String.raw`Currently allocated\s{0,3}:\s{0,3}${NUM}`, 'i')],
  ['triedAllocMiB', new RegExp(String.raw`Requested\s{0,3}:\s{0,3}${NUM}`, 'i')],
  ['totalCapacityMiB', new RegExp(String.raw`Device limit\s{0,3}:\s{0,3}${NUM}`, 'i')],
  ['freeMiB', new RegExp(String.raw`Free \(according to CUDA\)\s{0,3}:\s{0,3}${NUM}`, 'i')],
  ['triedAllocMiB', new RegExp(String.raw`Tried to allocate ${NUM}`, 'i')],
  ['totalCapacityMiB', new RegExp(String.raw`${NUM} total capac(?:i)?ty`, 'i')],
  ['totalCapacityMiB', new RegExp(String.raw`total capac(?:i)?ty of ${NUM}`, 'i')],
  ['freeMiB', new RegExp(String.raw`of which ${NUM} is free`, 'i')],
  ['freeMiB', new RegExp(String.raw`${NUM} free\b`, 'i')],
  ['allocatedMiB', new RegExp(String.raw`${NUM} already allocated`, 'i')],
  ['allocatedMiB', new RegExp(String.raw`${NUM} is allocated by PyTorch`, 'i')],
  ['reservedMiB', new RegExp(String.raw`${NUM} reserved in total`, 'i')],
  ['reservedUnallocatedMiB', new RegExp(String.raw`${NUM} is reserved by PyTorch but unallocated`, 'i')],
  ['cachedMiB', new RegExp(String.raw`${NUM} cached\b`, 'i')],
  ['thisProcessMiB', new RegExp(String.raw`this process has ${NUM} memory in use`, 'i')],
  // PaddlePaddle: "Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has been allocated and
  // available memory is only 0.000000B."
  ['triedAllocMiB', new RegExp(String.raw`Cannot allocate ${NUM} memory on GPU`, 'i')],
  ['allocatedMiB', new RegExp(String.raw`${NUM} memory has been allocated`, 'i')],
  ['freeMiB', new RegExp(String.raw`available memory is only ${NUM}`, 'i')],
  // JAX / XLA at run time: "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes."
  ['triedAllocMiB', new RegExp(String.raw`Out of memory (?:while trying to allocate|allocating) ${NUM}`, 'i')],
  // PaddlePaddle 1.x: "Cannot malloc 49.0002 MB GPU memory."
  ['triedAllocMiB', new RegExp(String.raw`Cannot malloc ${NUM} GPU memory`, 'i')],
  // Apple MPS: "(MPS allocated: 11.14 GB, other allocations: 6.65 GB, max allowed: 18.13 GB)"
  ['allocatedMiB', new RegExp(String.raw`MPS allocated: ${NUM}`, 'i')],
  ['totalCapacityMiB', new RegExp(String.raw`max allowed: ${NUM}`, 'i')],
];
const OOM_LINE =
  /out of memory|OutOfMemoryError|OOM when allocating|Tried to allocate [\d.]{1,10} ?[KMGT]i?B \(GPU \d|Cannot malloc [\d.]{1,14} ?[KMG]i?B GPU memory|Free memory on device \(/i;
const GPU_INDEX = /\((?:GPU|device) (\d{1,3});|\bGPU (\d{1,3}) has a total capac(?:i)?ty|Out of memory error on GPU (\d{1,3})|device:GPU:(\d{1,3})/i;
const OTHER_PROCESS = /Process (\d{1,10}) has (\d{1,9}(?:\.\d{1,4})?)\s?([KMGT]i?B) memory in use/gi;

/** The OOM message can be hard-wrapped over a few lines; join the lines until it looks complete. */
// A real OOM message is under 1 kB; reading at most this much keeps a hostile 10 MB "message" cheap.
const MAX_MESSAGE = 4096;

function oomMessage(log: LogText, line: number): string {
  let msg = clip(log.line(line));
  for (let next = line + 1; next < log.lineCount && next <= line + 6; next++) {
    // (The "would exceed allowed memory" form ends its first line with "(out of memory)" and puts its figures below.)
    if (/\)\s*$|PYTORCH_CUDA_ALLOC_CONF|Memory Management|\(\s*$/.test(msg) && /\)|CONF/.test(msg) && !/would exceed allowed memory/.test(msg)) break;
    const cont = clip(log.line(next));
    if (cont.length === 0 || /^\s*(Traceback|File "|\[|During handling|\w+Error\b)/.test(cont)) break;
    // A wrap inside a word or number ("allo|cated", "2.0|0 GiB") joins without a space.
    const inNumber = /[0-9.]$/.test(msg) && /^[0-9.]/.test(cont);
    const inWord = /[A-Za-z]$/.test(msg) && /^[a-z]/.test(cont) && msg.length >= 40;
    const glue = inNumber || inWord ? '' : ' ';
    msg += glue + cont.trim();
  }
  return msg.slice(0, 2 * MAX_MESSAGE);
}

/** The part of a line around its OOM words (the whole line when short). */
function clip(line: string): string {
  if (line.length <= MAX_MESSAGE) return line;
  const at = line.search(OOM_LINE);
  return at === -1 ? line.slice(0, MAX_MESSAGE) : line.slice(Math.max(0, at - 200), at + MAX_MESSAGE);
}

/**
 * PyTorch lists every process on the device, the failing one included ("Process 1791 has 75.52 GiB
 * memory in use. Including non-PyTorch memory, this process has 75.52 GiB"): drop the entry that is
 * this process, so `otherProcesses` holds only the others.
 */
function withoutThisProcess(all: OtherProcess[], f: Facts): OtherProcess[] {
  const mine = f.thisProcessMiB;
  if (mine !== undefined) {
    const self = all.findIndex((p) => Math.abs(p.memoryMiB - mine) <= Math.max(2, 0.005 * mine));
    return self === -1 ? all : all.filter((_, i) => i !== self);
  }
  // The one process holding about what this allocator reserved (plus a CUDA context) is itself.
  const reserved = f.reservedMiB ?? (f.allocatedMiB !== undefined ? f.allocatedMiB + (f.reservedUnallocatedMiB ?? 0) : undefined);
  if (reserved === undefined) return all;
  const fits = (p: OtherProcess) => p.memoryMiB >= reserved && p.memoryMiB <= reserved + (all.length === 1 ? 2048 : 1024);
  const candidates = all.filter(fits);
  return candidates.length === 1 ? all.filter((p) => p !== candidates[0]) : all;
}

export function extractOomFacts(log: LogText, lines: number[]): Facts {
  const facts: Facts = {};
  let lastOom: number | undefined;
  // The last OOM message in the log is the one that ended the run.
  for (let i = lines.length - 1; i >= 0; i--) {
    // A pattern that starts at the end of a line ("(?:^|[^:\w])OutOfMemoryError" takes its newline) lands on the line above the message.
    const at = OOM_LINE.test(log.line(lines[i])) ? lines[i] : lines[i] + 1 < log.lineCount && OOM_LINE.test(log.line(lines[i] + 1)) ? lines[i] + 1 : -1;
    if (at === -1) continue;
    lastOom ??= at;
    const msg = oomMessage(log, at);
    for (const [key, re] of OOM_FIELDS) {
      if (facts[key] !== undefined) continue;
      const m = re.exec(msg);
      const v = m && toMiB(m[1], m[2]);
      if (typeof v === 'number') (facts as Record<string, unknown>)[key] = v;
    }
    // PyTorch 1.0-1.3 printed "X cached" as the allocator's idle cache (amount_cached - amount_allocated);
    // 1.4+ prints the total ("reserved in total"). The old figure is the newer "reserved but unallocated".
    if (facts.cachedMiB !== undefined && facts.reservedMiB === undefined && facts.reservedUnallocatedMiB === undefined && facts.allocatedMiB !== undefined) {
      facts.reservedUnallocatedMiB = facts.cachedMiB;
    }
    const g = GPU_INDEX.exec(msg);
    if (g) facts.gpuIndex = Number(g[1] ?? g[2] ?? g[3] ?? g[4]);
    const others: OtherProcess[] = [];
    for (const m of msg.matchAll(OTHER_PROCESS)) {
      const mib = toMiB(m[2], m[3]);
      if (mib !== undefined) others.push({ pid: Number(m[1]), memoryMiB: mib });
    }
    const notSelf = withoutThisProcess(others, facts);
    if (notSelf.length) facts.otherProcesses = notSelf;
    xlaHbmReport(log, at, facts);
    if (/CUDA error: out of memory|cuda runtime error \(2\)/i.test(msg)) facts.runtimeOom = true;
    // vLLM's start-up check: what was free before this process allocated anything, of the card.
    const startup = /Free memory on device \((\d{1,6}(?:\.\d{1,3})?)\/(\d{1,6}(?:\.\d{1,3})?) ?GiB\) on startup/.exec(msg);
    if (startup) {
      facts.startupFreeMiB = Number(startup[1]) * 1024;
      facts.totalCapacityMiB ??= Number(startup[2]) * 1024;
    }
    if (Object.keys(facts).length > 0) {
      const phase = oomPhase(log, at);
      if (phase) facts.oomPhase = phase;
      if (isGenerating(log, at)) facts.generating = true;
      withPhase(facts, failurePhase(log, at));
      break;
    }
  }
  // A message without figures ("CUDA out of memory.") still has the frames that say what ran.
  if (Object.keys(facts).length === 0 && lastOom !== undefined) {
    if (/CUDA error: out of memory|cuda runtime error \(2\)/i.test(log.line(lastOom))) facts.runtimeOom = true;
    const phase = oomPhase(log, lastOom);
    if (phase) facts.oomPhase = phase;
    if (isGenerating(log, lastOom)) facts.generating = true;
    withPhase(facts, failurePhase(log, lastOom));
  }
  return facts;
}

// XLA's compile-time report (TPU, and GPU with XLA's allocator): "Ran out of memory in memory space hbm.
// Used 30.21G of 15.48G hbm." then "Total hbm usage >= 30.73G:" with "reserved / program / arguments"
// lines. Sizes carry a bare K/M/G suffix. Read from the message line and the dozen lines under it.
const XLA_USED = /Used (\d{1,7}(?:\.\d{1,3})?)([KMGT])i?B? of (\d{1,7}(?:\.\d{1,3})?)([KMGT])i?B? hbm/;
const XLA_PART = /^\s{0,12}(program|arguments)\s{1,20}(\d{1,7}(?:\.\d{1,3})?)([KMGT]?)i?B?\s*$/;
const SUFFIX_MIB: Record<string, number> = { '': 1 / 1048576, K: 1 / 1024, M: 1, G: 1024, T: 1048576 };

function xlaHbmReport(log: LogText, line: number, facts: Facts): void {
  const used = XLA_USED.exec(clip(log.line(line))) ?? XLA_USED.exec(clip(log.line(line + 1)));
  if (!used) return;
  facts.xlaUsedMiB = Number(used[1]) * SUFFIX_MIB[used[2]];
  facts.totalCapacityMiB ??= Number(used[3]) * SUFFIX_MIB[used[4]];
  for (let next = line + 1; next < log.lineCount && next <= line + 12; next++) {
    const m = XLA_PART.exec(log.line(next).slice(0, 200));
    if (!m) continue;
    const mib = Number(m[2]) * SUFFIX_MIB[m[3]];
    if (m[1] === 'arguments') facts.xlaArgumentsMiB ??= mib;
    else facts.xlaProgramMiB ??= mib;
  }
}
