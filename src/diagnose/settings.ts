// Training settings stated anywhere in a paste: command lines, `engine/trainer:` dumps,
// Namespace(...), dict dumps, HF TrainingArguments. Only the head and tail of a big log are read,
// where launchers print them, so the cost stays bounded whatever the paste's size.
import { readInferenceSaid } from './levers/reported-load.js';
import { readPipelineLoad, readShardingNamed } from './levers/load-lever.js';

// HF TrainingArguments that run only evaluation or prediction (LLaMA-Factory's predict configs too): not training.
const EVAL_ONLY_RUN = /\bdo_(?:predict|eval)\s{0,2}[:=]\s{0,2}["']?true\b/i;
const TRAIN_RUN = /\bdo_train\s{0,2}[:=]\s{0,2}["']?true\b/i;
import { formatMiB } from './fixes/arithmetic.js';
import { classifyShape, extractHostSeries, extractMemorySeries, seriesSettled } from './memory-series.js';
import { readEvalSettings } from './levers/eval.js';
import { readVllmScheduler } from './levers/vllm-scheduler.js';
import { applyVllmStartup } from './levers/vllm-startup.js';
import { applyTfStartFree } from './levers/tf-start-free.js';
import { trainingProgress } from './levers/progress.js';
import { gpuFamilyMaxGiB, knownGpuMemoryGiB, modelParamsB, statedGpuMemoryMiB, weightsDtype } from './model-facts.js';
import { readCheckpointingOn, readDiffusionPipeline, readDispatchedOverCards, readParamsOffloaded } from './levers/static-order.js';
import { worldSize, zeroOffloadStated, zeroStage } from './levers/zero.js';
import { checkpointLoadedToHost, killedLoadingData, killedLoadingModel, readHostRam, TRAIN_PROGRESS } from './levers/host-ram.js';
import { readReportedHolder } from './levers/reported-holder.js';
import { readGpuSelection, readOtherGpuAsked } from './levers/other-gpu.js';
import { readSequenceLength } from './levers/sequence.js';
import { isConvKernel, lengthAxis } from './levers/stack-levers.js';
import { readInputSize } from './levers/input-size.js';
import { readInputLength } from './levers/input-length.js';
import { readSmallerInput } from './levers/smaller-input.js';
import { readInputSkipped } from './levers/input-skipped.js';
import { inferDefaultFp32 } from './levers/load-default-dtype.js';
import { readVaeDecode } from './levers/vae-decode.js';
import { readTiledRestoration } from './levers/tiled-restoration.js';
import { readHostRequest } from './levers/host-request.js';
import { readFp32Training, readHalfPrecisionWorked } from './levers/amp.js';
import { CHECKPOINTING, readSettingWorked } from './levers/setting-experiment.js';
import { mergeInto, newIncident, pruneUndefined, type Incident } from './incident/index.js';

// Moved to their own modules (model-facts.ts, levers/zero.ts, levers/host-ram.ts); named here for existing callers.
export { knownGpuMemoryGiB, knownModelParamsB, loadKnownGpus, loadKnownModels, modelParamsB, statedGpuMemoryMiB, weightsDtype } from './model-facts.js';
export { zeroStage } from './levers/zero.js';
export { killedLoadingData } from './levers/host-ram.js';

const WINDOW = 512 * 1024;

// `--name value`, `--name=value`, `--name="value"`, `name=value`, `'name': value`, `"name": value`, `name: value`.
function keyPattern(names: string, value: string): RegExp {
  // Key and value on one line: "the model:\n--model-id x" names no model called "--model-id".
  return new RegExp(
    String.raw`(?:--(?:${names})(?:=|[ \t]{1,4})['"]?|(?:^|[\s,({\u3000-\u9fff\uff00-\uffef])['"]?(?:${names})['"]?[ \t]{0,2}[=:][ \t]{0,2}['"]?)(${value})`,
    'gim',
  );
}

const INT = String.raw`-?\d{1,6}`;
// CJK text has no spaces around it: "将batchsize改小为4", "batch_size为4仍然".
// The reporter changed the batch and the error stayed: "try to change the batch_size，this error still
// occured", "even with batch size 1 the same error", "改了batch_size还是报错". Bounded, linear.
const BATCH_NO_HELP = [
  /\b(?:chang|lower|reduc|decreas|shrink|tri)\w{0,4}\s{1,3}(?:the\s{1,3})?batch[-_ ]?size\b[^\n]{0,60}?\b(?:still|same error|doesn'?t help|didn'?t help|does not help|did not help|no difference|not help)/i,
  /batch[-_ ]?size[^\n]{0,30}?(?:还是|依然|仍然|照样)(?:报错|出现|不行|会)/,
];
// "batch size =1", "batch size: 4" too (a space in the name, so no key pattern reads it).
// A total, global or effective batch (every device and accumulation step together) is not the batch one
// device runs, so it is never read as the batch ("Total batch size = 8", "global batch size: 256", "总batch size").
const PROSE_BATCH =
  /(?:^|[\s,(\u3000-\u9fff\uff00-\uffef])(?<!(?:total|global|effective|overall|总|全局)[ _-]?(?:train[ _-]?)?)batch[-_ ]?size[ \t]{0,2}(?:of|[为是＝：改小设置修成到=:]{1,4})?[ \t]{0,2}(\d{1,5})(?!\w|\.\d)/gim;
// The per-device batch as trainers print it: "Batch size per device = 2" (Unsloth), "Instantaneous batch size per device = 4" (HF Trainer).
const PER_DEVICE_BATCH = /batch[-_ ]?size per (?:device|gpu|card)[ \t]{0,2}[=:][ \t]{0,2}(\d{1,5})(?!\w|\.\d)/gim;
// The worker count told in prose or Chinese: "num_workers 为20", "num workers of 8", "num_workers: 4".
const PROSE_WORKERS = /(?:^|[\s,(\u3000-\u9fff\uff00-\uffef])num[-_ ]?workers[ \t]{0,2}(?:of|[为是＝：设置成到=:]{1,4})?[ \t]{0,2}(\d{1,3})(?!\w|\.\d)/gim;
// Host RAM in words: "32G的内存", "16 GB RAM", "64GB of RAM", "32GB system memory" (内存 is RAM; 显存 is the GPU's).
const HOST_RAM = /\b(\d{1,4}(?:\.\d{1,2})?)\s?G(?:B|iB)?\s?(?:的\s?)?(?:内存|RAM\b|of RAM\b|(?:system|host) memory\b)/i;
const PATTERNS = {
  batch: keyPattern('per_device_train_batch_size|train_batch_size|batch[-_]?size|batch|bs|IMS_PER_BATCH|SOLVER\\.IMS_PER_BATCH|BATCH_IMAGES', INT),
  workers: keyPattern('num[-_]workers|workers_per_gpu|workers|dataloader_num_workers|n_workers', INT),
  imgsz: keyPattern('img[-_]size|imgsz|img|image[-_]size|imgsize', String.raw`\d{2,5}`),
  epochs: keyPattern('epochs|num_train_epochs|max_epochs', String.raw`\d{1,6}`),
  accumulate: keyPattern('gradient_accumulation_steps|accumulate_grad_batches|accumulate|accum[-_]iter', String.raw`\d{1,4}`),
  cache: keyPattern('cache', String.raw`ram|disk|true|false|none`),
  singleCls: keyPattern('single[-_]cls', String.raw`true|false`),
  resume: keyPattern('resume', String.raw`true|false|[\w./-]{1,200}\.pth?`),
  amp: keyPattern('amp|fp16|mixed_precision', String.raw`true|false|fp16|bf16|no`),
  model: keyPattern('model|weights|cfg|model_name_or_path|model[-_]id|arch', String.raw`[\w./-]{1,120}`),
};

function lastValue(text: string, re: RegExp): string | undefined {
  let value: string | undefined;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) value = m[1];
  return value;
}

function bool(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  return !/^(false|none|no)$/i.test(v);
}

const COMMAND_START =
  /^[ \t$>]{0,8}((?:CUDA_VISIBLE_DEVICES=\S{1,40} |PYTORCH_CUDA_ALLOC_CONF=\S{1,80} )*(?:python3?(?:\s+-m)?|torchrun|accelerate launch|deepspeed|yolo)\s[^\n]{4,2000})$/m;

/** The training command line, with `\` continuations joined. */
export function findCommandLine(text: string): string | undefined {
  const m = COMMAND_START.exec(text);
  if (!m) return undefined;
  let line = m[1];
  let rest = text.slice(m.index + m[0].length + 1);
  for (let i = 0; i < 40 && /\\\s*$/.test(line); i++) {
    const nl = rest.indexOf('\n');
    const next = nl === -1 ? rest : rest.slice(0, nl);
    line = line.replace(/\\\s*$/, ' ') + next.trim();
    if (nl === -1) break;
    rest = rest.slice(nl + 1);
  }
  return line
    .replace(/\s+/g, ' ')
    .replace(/[_`*]+$/, '')
    .trim();
}

// LoRA or PEFT named as what the run is not: "without any PEFT and Quantization", "rather than lora", "不用 LoRA".
const ADAPTER_WORD = /\b(?:q?lora|peft)\b/gi;
const ADAPTER_WORD_ONCE = /\b(?:q?lora|peft)\b/i;
const ADAPTER_NEGATED =
  /(?:\bwithout|\bw\/o|\bno|\bnot|\bnon|rather than|instead of|不用|不使用|而不是|没有用?)[\s-]{0,3}(?:any\s{1,2}|using\s{1,2}|the\s{1,2})?(?:[\w-]{1,12}\s{0,2}(?:and|or|\/|,)\s{0,2})?$/i;

/** LoRA / PEFT named in the paste other than as what the run does without ("without PEFT", "not LoRA"). */
function adapterWordAffirmed(text: string): boolean {
  ADAPTER_WORD.lastIndex = 0;
  for (let m = ADAPTER_WORD.exec(text); m; m = ADAPTER_WORD.exec(text)) {
    if (!ADAPTER_NEGATED.test(text.slice(Math.max(0, m.index - 40), m.index))) return true;
  }
  return false;
}
/**
 * `commandLine: false` when the paste was flattened onto one line: its command cannot be told apart
 * from the log after it, so no corrected command is offered (settings are still read).
 */
export function extractSettings(fullText: string, options: { commandLine?: boolean } = {}): Incident {
  const text = fullText.length <= 2 * WINDOW ? fullText : fullText.slice(0, WINDOW) + '\n' + fullText.slice(-WINDOW);
  const incident: Incident = newIncident();
  const int = (re: RegExp) => {
    const v = lastValue(text, re);
    return v === undefined ? undefined : Number(v);
  };
  const commandLine = options.commandLine === false ? undefined : findCommandLine(text);
  if (commandLine) incident.run.commandLine = commandLine;
  // Prose states it without "=" ("batch size 16", "batch_size 1", "batch size为2"): only when no key does.
  incident.run.batch = int(PATTERNS.batch) ?? int(PER_DEVICE_BATCH) ?? int(PROSE_BATCH);
  // TensorFlow names the tensor it could not allocate; for an activation (3+ dimensions: NHWC, NTC) the
  // leading dimension is the batch. A 2-D tensor is a weight or its optimizer slot, not a batch.
  if (incident.run.batch === undefined) {
    let shape: RegExpExecArray | null = null;
    for (const m of text.matchAll(/OOM when allocating tensor with shape\[(\d{1,6})((?:, ?\d{1,7}){2,6})\]/g)) shape = m;
    // A 3-D tensor ending in 1-4 channels is one image (H, W, C: "shape[800,1280,3]", a decoded JPEG), not a batch.
    const dims = shape ? shape[2].split(',').slice(1).map(Number) : [];
    const oneImage = dims.length === 2 && dims[1] <= 4;
    // A [k,k,in,out] convolution kernel is a weight: its leading dimension is the filter, not a batch.
    const kernel = shape !== null && isConvKernel([Number(shape[1]), ...dims]);
    // A middle axis of 100,000+ is a length that blew up: the leading dimension is not the lever to read as a batch.
    const long = shape !== null && lengthAxis([Number(shape[1]), ...dims]) !== undefined;
    if (shape && !oneImage && !kernel && !long && Number(shape[1]) >= 1 && Number(shape[1]) <= 4096) {
      incident.run.batch = Number(shape[1]);
      incident.run.batchFromShape = `shape[${shape[1]}${shape[2]}]`;
    }
  }
  incident.host.workers = int(PATTERNS.workers) ?? int(PROSE_WORKERS);
  incident.run.imgsz = int(PATTERNS.imgsz);
  incident.run.epochs = int(PATTERNS.epochs);
  incident.run.accumulate = int(PATTERNS.accumulate);
  const cache = lastValue(text, PATTERNS.cache);
  if (cache !== undefined) incident.run.cache = /^(true)$/i.test(cache) ? true : /^(false|none)$/i.test(cache) ? false : cache.toLowerCase();
  else if (/(?:^|\s)--cache(?:\s|$)/m.test(commandLine ?? '')) incident.run.cache = true;
  else if (/Caching images \(\d/.test(text)) incident.run.cache = 'ram';
  incident.run.singleCls = bool(lastValue(text, PATTERNS.singleCls)) ?? (/--single[-_]cls\b/.test(text) ? true : undefined);
  incident.run.resume = bool(lastValue(text, PATTERNS.resume)) ?? (/--resume\b/.test(text) ? true : undefined);
  incident.run.amp = bool(lastValue(text, PATTERNS.amp));
  const model = lastValue(text, PATTERNS.model);
  // "model=model", "model = cls(...)" (code) or "model: None" name no model.
  if (model && /[a-z]/i.test(model) && !/^(model|none|null|true|false|cls|self|args|opt|config|cfg|net|module)$/i.test(model))
    incident.model.name = model.replace(/\.(pt|pth|yaml|yml)$/, '').replace(/^.*\//, '');
  const paramsB = modelParamsB(text, incident.model.name);
  if (paramsB !== undefined) incident.model.paramsB = paramsB;
  const dtype = weightsDtype(text, paramsB);
  if (dtype) incident.model.dtype = dtype;
  else inferDefaultFp32(incident, text);
  const gpu = /CUDA:\d{1,2} \(([^,()\n]{3,60}), (\d{3,7}(?:\.\d{1,6})?)\s?Mi?B\)/.exec(text);
  if (gpu) {
    incident.card.gpuName = gpu[1].trim();
    incident.card.gpuMemoryMiB = Math.round(Number(gpu[2]));
  }
  const stated = statedGpuMemoryMiB(text);
  if (stated !== undefined) incident.card.statedGpuMemoryMiB = stated;
  const ram = HOST_RAM.exec(text);
  if (ram) incident.host.hostRamGiB = Number(ram[1]);
  let caching: RegExpExecArray | null = null;
  for (const m of text.matchAll(/Caching images \([\d.]{1,8}\s?GB[^)\n]{0,20}\):?\s{0,4}(\d{1,3})%/g)) caching = m;
  if (caching) incident.host.cacheProgressPct = Number(caching[1]);
  const kv = /max seq len \((\d{1,9})\) is larger than the maximum number of tokens that can be stored in KV cache\s{0,4}\((\d{1,9})\)/.exec(text);
  if (kv) {
    incident.stack.maxModelLen = Number(kv[1]);
    incident.stack.kvCacheTokens = Number(kv[2]);
  }
  vllmProfile(text, incident);
  mergeInto(incident, { stack: readVllmScheduler(text) });
  applyVllmStartup(text, incident);
  // TF 1.x found most of the card held before this job allocated anything (levers/tf-start-free.ts).
  applyTfStartFree(text, incident);
  if (BATCH_NO_HELP.some((re) => re.test(text))) incident.tried.batchChangeNoHelp = true;
  // ggml's CPU buffer that could not be allocated: "failed to allocate buffer of size 137438953504" (bytes).
  let ggml = 0;
  for (const m of text.matchAll(/(?:_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size|failed to allocate CPU buffer of size) (\d{4,15})\b/g))
    ggml = Math.max(ggml, Number(m[1]));
  if (ggml > 0) incident.stack.ggmlBuffer = formatMiB(ggml / 2 ** 20);
  const zero = zeroStage(text);
  if (zero !== undefined) {
    // The per-rank budget needs the rank count and whether state is offloaded to CPU (levers/zero.ts).
    incident.distributed.zeroStage = zero;
    incident.distributed.worldSize = worldSize(text);
    if (zeroOffloadStated(text)) incident.distributed.zeroOffload = true;
  }
  if (
    /\bbackward\(|optimizer\.step|\bTrainer\b|trainer\.train\(|training_args|deepspeed|train_batch_size|finetun|fine[- ]tun|\bsft\b|训练|微调|\btrain(?:ing)?\s{1,2}(?:a|an|the|my|our|this)\s{1,2}(?:[\w.-]{1,30}\s{1,2}){0,2}model\b/i.test(
      text,
    )
  )
    incident.run.training = !EVAL_ONLY_RUN.test(text) || TRAIN_RUN.test(text);
  if (!incident.run.training) incident.run.inferenceSaid = readInferenceSaid(text);
  // A LoRA configuration says adapters; the word alone does not where the paste says the run is a full fine-tune
  // ("full fine-tuning", finetuning_type full, 全参): "have you compared LoRA and fully fine-tuning?" is a question.
  if (readDiffusionPipeline(text) || readPipelineLoad(text)) incident.run.diffusionPipeline = true;
  if (readShardingNamed(text)) incident.distributed.shardingNamed = true;
  if (readDispatchedOverCards(text)) incident.distributed.dispatchedOverCards = true;
  incident.run.paramsOffloaded = readParamsOffloaded(text);
  if (readCheckpointingOn(text)) incident.run.checkpointingOn = true;
  incident.run.checkpointingWorked = readSettingWorked(text, CHECKPOINTING);
  // The launch's GPU count for any run, not only under ZeRO: the static budget shards over them (levers/static-order.ts), inference splits over them (levers/split-cards.ts).
  if (incident.distributed.worldSize === undefined) {
    const ranks = worldSize(text);
    if (ranks !== undefined) incident.distributed.worldSize = ranks;
  }
  const adapterConfig = /\b(?:adapter_name|lora_r|lora_rank|lora_alpha|lora_target|LoraConfig|peft_config|use_peft|finetuning_type:?\s{0,2}lora)\b/i.test(text);
  const fullStated =
    /\bfull(?:y)?[ -]?(?:parameter[ -])?fine[- ]?tun|\bfinetuning_type:?\s{0,2}full\b|\b(?:sft|train)_type[\s=:]{1,3}['"]?full\b|全参|全量微调/i.test(text);
  // The trainer's own full-training setting wins over lora_* keys it then ignores (LLaMA-Factory's --finetuning_type full).
  // (ms-swift's --sft_type / --train_type full is the same setting.)
  const fullSetting = /\bfinetuning_type:?\s{0,2}full\b|\bfull_finetuning\s{0,2}=\s{0,2}True|\b(?:sft|train)_type[\s=:]{1,3}['"]?full\b/i.test(text);
  // Unsloth's banner, FastLanguageModel and get_peft_model train adapters without the word LoRA.
  const adapterTool = /==\(\(====\)\)==\s{0,4}Unsloth|\bFastLanguageModel\b|\bget_peft_model\(/.test(text);
  if (!fullSetting && (adapterConfig || adapterTool || (!fullStated && adapterWordAffirmed(text)))) incident.run.adapterTraining = true;
  // The paste says the run trains every weight (not inferred from "fine-tuning" alone, which is often LoRA).
  else if (fullStated || fullSetting || ADAPTER_WORD_ONCE.test(text)) incident.run.fullTrainingStated = true;
  let shards: RegExpExecArray | null = null;
  for (const m of text.matchAll(/Loading checkpoint shards:?\s{0,4}(\d{1,3})%/gi)) shards = m;
  if (shards) incident.phase.shardsLoadedPct = Number(shards[1]);
  // DeepSpeed's see_memory_usage names the step it is about to take; the last one is where a rank died.
  let dsPhase: RegExpExecArray | null = null;
  for (const m of text.matchAll(/see_memory_usage\] ((?:Before|After) [^\n]{1,80})/g)) dsPhase = m;
  if (dsPhase) incident.phase.deepspeedPhase = dsPhase[1].trim();
  const nccl = /Timeout\(ms\)=(\d{1,10})/.exec(text);
  if (nccl) incident.distributed.ncclTimeoutMs = Number(nccl[1]);
  const seq: Record<string, number> = {};
  for (const m of text.matchAll(/\[Rank (\d{1,6})\][^\n]{0,200}?SeqNum=(\d{1,12})/g)) seq[m[1]] = Math.max(seq[m[1]] ?? 0, Number(m[2]));
  if (Object.keys(seq).length) incident.distributed.ncclSeqByRank = seq;
  // No collective ever completed: every rank timed out in its group's first one (SeqNum=1), or PyTorch says so
  // ("last completed NCCL work: -1"). No rank fell behind then; the ranks could not move data at all.
  const seqs = Object.values(seq);
  const completed = [...text.matchAll(/last completed NCCL work: (-?\d{1,12})/g)].map((m) => Number(m[1]));
  if ((seqs.length > 0 && seqs.every((n) => n === 1)) || (completed.length > 0 && completed.every((n) => n === -1)))
    incident.distributed.ncclNeverCompleted = true;
  const auto = /AutoBatch: Using batch-size (\d{1,6})/.exec(text);
  if (auto) incident.run.autobatch = Number(auto[1]);
  const series = extractMemorySeries(text);
  if (series.length >= 2) {
    incident.series.memorySeriesMiB = series.map((p) => p.mib);
    const shape = classifyShape(series);
    if (shape) {
      incident.series.memoryShape = shape.shape;
      if (shape.growsAt) incident.series.memoryGrowsAt = shape.growsAt;
      if (seriesSettled(shape)) incident.series.memorySettled = true;
    }
  }
  const hostSeries = extractHostSeries(text);
  if (hostSeries.length >= 3) {
    incident.series.hostSeriesMiB = hostSeries.map((p) => p.mib);
    const shape = classifyShape(hostSeries);
    // A flat, warmed-up or returning series contradicts words of growth (one step or an irregular rise does not).
    if (shape) incident.series.hostShape = shape.shape;
    if (shape && seriesSettled(shape)) incident.series.hostSettled = true;
  }
  if (/\bempty_cache\(\)/.test(text)) incident.series.emptiesCache = true;
  if (
    /(?:模型加载|加载模型|loading (?:the )?(?:model|weights|checkpoint))[^\n]{0,30}(?:killed|被杀|已杀死|被kill)|killed[^\n]{0,40}(?:while|when) loading (?:the )?(?:model|weights|checkpoint)/i.test(
      text,
    )
  )
    incident.host.killedWhileLoading = true;
  // The kill right after a line that announces the model load (levers/host-ram.ts).
  else if (killedLoadingModel(text) || checkpointLoadedToHost(text)) incident.host.killedWhileLoading = true;
  if (killedLoadingData(text)) incident.host.killedLoadingData = true;
  // torchrun / DeepSpeed ranks SIGKILLed before any step logged a loss, with no DataLoader workers and no
  // data loading in sight: each rank was loading its own copy of the model into host RAM. (With the model's
  // size in the log, the host_ram_weights advice says it with the numbers.)
  else if (
    incident.model.paramsB === undefined &&
    /(?:exitcode\s{0,2}:\s{0,2}|failed \(exitcode: )-9\b/.test(text) &&
    /\blocal_rank\s{0,2}:\s{0,2}\d/.test(text) &&
    !/\bworkers?\b|DataLoader/i.test(text) &&
    !TRAIN_PROGRESS.test(text)
  )
    incident.host.killedWhileLoading = true;
  mergeInto(incident, { host: { ...readHostRam(text), ...readHostRequest(text) } });
  mergeInto(incident, { processes: { ...readReportedHolder(text), ...readGpuSelection(text), otherGpuAsked: readOtherGpuAsked(text) } });
  if (incident.card.statedGpuMemoryMiB === undefined) {
    const gib = knownGpuMemoryGiB(text);
    if (gib !== undefined) incident.card.gpuModelMemoryMiB = gib * 1024;
    else {
      const family = gpuFamilyMaxGiB(text);
      if (family !== undefined) incident.card.familyMaxMiB = family * 1024;
    }
  }
  // llama.cpp's load report: "llm_load_tensors:      CUDA0 buffer size =  3946.35 MiB" (weights on GPU 0)
  let onGpu = 0;
  for (const m of text.matchAll(/(?:llm_load_tensors|load_tensors):\s{1,12}CUDA\d{1,2} (?:model )?buffer size\s{0,4}=\s{0,4}(\d{1,7}(?:\.\d{1,3})?) MiB/g))
    onGpu = Math.max(onGpu, Number(m[1]));
  if (onGpu > 0) incident.stack.ggmlGpuWeightsMiB = onGpu;
  const after = epochsBeforeFailure(text);
  if (after) incident.progress.oomAfterEpochs = after;
  mergeInto(
    incident,
    readEvalSettings(text),
    trainingProgress(text),
    readSequenceLength(text),
    {
      input: {
        ...readInputSize(text),
        ...readInputLength(text),
        ...readSmallerInput(text),
        ...readVaeDecode(text),
        ...readTiledRestoration(text),
        ...readInputSkipped(text),
      },
    },
    { model: { fp32Setting: readFp32Training(text), halfPrecisionWorked: readHalfPrecisionWorked(text) } },
  );
  pruneUndefined(incident);
  return incident;
}

// "after 21 epochs", "after several epoch", "after training some epochs", "trained 5 epochs successfully",
// "on epoch number 4", "in the 21st epoch", "训练到第21个epoch", "跑了几个epoch": the run got through several
// epochs (4 or more, or words that say so) at the same settings before the failure. Three or fewer can
// be the first validation's peak, so they do not count. Bounded repetitions only: linear.
const MANY = String.raw`(?:[4-9]|[1-9]\d{1,4})`;
const EPOCHS_BEFORE: RegExp[] = [
  new RegExp(
    String.raw`\bafter\s{1,3}(?:training\s{1,3}(?:for\s{1,3})?)?((?:the\s{1,3})?${MANY}(?:st|nd|rd|th)?|several|many|a few|some|multiple)\s{1,3}epochs?\b`,
    'i',
  ),
  new RegExp(String.raw`\btrained\s{1,3}(?:for\s{1,3})?(${MANY})\s{1,3}epochs?\s{1,3}(?:successfully|fine|without)`, 'i'),
  // "the training runs fine for 10 epochs, then ...", "it worked well for 30 epochs": the run went on at its settings.
  new RegExp(
    String.raw`\b(?:runs?|ran|running|trains?|trained|training|works?|worked)\s{1,3}(?:fine|well|normally|ok(?:ay)?|without\s{1,3}(?:any\s{1,3})?(?:problems?|issues?|errors?))\s{1,3}for\s{1,3}(?:about\s{1,3}|around\s{1,3})?(${MANY})\s{1,3}epochs?\b`,
    'i',
  ),
  new RegExp(String.raw`\b(?:on|in|at|during)\s{1,3}(?:the\s{1,3})?(epoch\s{1,3}(?:number\s{1,3})?${MANY}\b|${MANY}(?:st|nd|rd|th)\s{1,3}epoch)`, 'i'),
  new RegExp(String.raw`(?:训练|跑)(?:了|到)?\s?((?:第\s?)?(?:${MANY}|几|多|若干)\s?个?\s?(?:epoch|轮))`, 'i'),
];

export function epochsBeforeFailure(text: string): string | undefined {
  for (const re of EPOCHS_BEFORE) {
    const m = re.exec(text);
    if (m) return m[0].replace(/\s+/g, ' ').trim().slice(0, 80);
  }
  return undefined;
}

// vLLM 0.6-0.8 print their memory profile before the KV cache is sized: "the current vLLM instance can use
// total_gpu_memory (8.00GiB) x gpu_memory_utilization (0.70) = 5.60GiB" and "model weights take 5.20GiB;
// non_torch_memory takes 0.03GiB; PyTorch activation peak memory takes 1.42GiB; the rest of the memory
// reserved for KV Cache is -1.05GiB." Bounded, linear.
const VLLM_BUDGET = /total_gpu_memory \((\d{1,4}(?:\.\d{1,3})?)GiB\) x gpu_memory_utilization \((\d(?:\.\d{1,3})?)\) = (\d{1,4}(?:\.\d{1,3})?)GiB/;
const VLLM_SPLIT =
  /model weights take (\d{1,4}(?:\.\d{1,3})?)GiB; non_torch_memory takes (-?\d{1,4}(?:\.\d{1,3})?)GiB; PyTorch activation peak memory takes (\d{1,4}(?:\.\d{1,3})?)GiB; the rest of the memory reserved for KV Cache is (-?\d{1,4}(?:\.\d{1,3})?)GiB/;

function vllmProfile(text: string, incident: Incident): void {
  const b = VLLM_BUDGET.exec(text);
  const s = VLLM_SPLIT.exec(text);
  if (!b || !s) return;
  const [totalGiB, util, budgetGiB] = [Number(b[1]), Number(b[2]), Number(b[3])];
  const [weightsGiB, nonTorchGiB, peakGiB, kvGiB] = [Number(s[1]), Number(s[2]), Number(s[3]), Number(s[4])];
  incident.stack.vllmProfile = { totalGiB, util, budgetGiB, weightsGiB, nonTorchGiB, peakGiB, kvGiB };
  const g = (v: number) => `${v.toFixed(2)} GiB`;
  incident.stack.vllmBudget = `${util.toFixed(2)} × ${g(totalGiB)} = ${g(budgetGiB)}`;
  incident.stack.vllmWeights = g(weightsGiB);
  incident.stack.vllmPeak = g(peakGiB);
  incident.stack.vllmNonTorch = g(Math.max(0, nonTorchGiB));
  incident.stack.vllmKv = g(kvGiB);
  // What the model needs, plus a KV cache of a tenth of the card, as a share of the card (rounded up to 0.05).
  const needed = Math.ceil(((weightsGiB + peakGiB + Math.max(0, nonTorchGiB) + 0.1 * totalGiB) / totalGiB) * 20) / 20;
  if (totalGiB > 0 && needed > util && needed <= 0.95) incident.stack.vllmUtilNeeded = needed.toFixed(2);
}
