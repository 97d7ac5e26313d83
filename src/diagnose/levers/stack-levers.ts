// The first lever in a non-PyTorch stack's own settings, read from that stack's own numbers (issue 23 item 5): each
// stack reports a failed allocation in its fixed format, and those figures decide which of its knobs comes first.
//   PaddlePaddle 1.x legacy allocator  "Cannot allocate 195.800781MB in GPU 0, available 5.937500MBtotal 7981694976
//                                      GpuMinChunkSize 256.000000BGpuMaxChunkSize 21.694021MBGPU memory used: 324.750000kB"
//                                      and "Current FLAGS_fraction_of_gpu_memory_to_use value is 0.003"
//   TensorFlow                         "OOM when allocating tensor with shape[7,7,512,4096] and type float": the shape and
//                                      dtype give the request's bytes, and a [k,k,in,out] shape is a convolution kernel
//   vLLM                               the model's parameters (its name) in the served dtype against the card
// Patterns are anchored on each library's message text and bounded (untrusted input, linear).
import { formatMiB } from '../fixes/arithmetic.js';
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';
import { MEMORY_CAP_CONDITIONS } from './memory-cap.js';
import { KERAS_REBUILT_CONDITIONS } from './keras-rebuilt.js';
import { MODEL_REBUILT_CONDITIONS } from './model-rebuilt.js';
import { METRIC_STATE_CONDITIONS } from './metric-states.js';
import { CUDNN_HANDLE_CONDITIONS } from './cudnn-handle.js';
import { CARD_ARCH_CONDITIONS } from './card-arch.js';
import { DRIVER_STATE_CONDITIONS } from './driver-state.js';
import { LOSS_DIVERGED_CONDITIONS } from './loss-diverged.js';
import { LORA_TRAINABLE_CONDITIONS } from './lora-trainable.js';
import { LISTED_HOLDER_CONDITIONS } from '../holder-listed.js';
import { TOKEN_INPUT_CONDITIONS } from './token-inputs.js';
import { VLLM_SCHEDULER_CONDITIONS } from './vllm-scheduler.js';
import { VLLM_STARTUP_CONDITIONS } from './vllm-startup.js';
import { TF_START_CONDITIONS } from './tf-start-free.js';
import { TF_OWN_PROCESS_CONDITIONS } from './tf-own-processes.js';

const MAX_LINE = 2000;
const SIZE = String.raw`([\d.]{1,16})\s?(GB|MB|kB|KB|B)`;
const PADDLE_ALLOC = new RegExp(
  String.raw`Cannot allocate ([\d.]{1,16})MB in GPU (\d{1,3}), available ([\d.]{1,16})MB\s?total (\d{1,16})\s?GpuMinChunkSize [\d.]{1,16}\s?[kKMG]?B\s?GpuMaxChunkSize ${SIZE}\s?GPU memory used: ${SIZE}`,
);
const PADDLE_FRACTION = /Current FLAGS_fraction_of_gpu_memory_to_use value is (\d(?:\.\d{1,6})?)/;
// The dtype is TensorFlow's default (float32) where a quoted message stops at the shape.
const TF_TENSOR = /OOM when allocating tensor (?:with|of) shape\s?\[(\d{1,12}(?:, ?\d{1,12}){0,7})\](?: and type (\w{1,12}))?/;
// The BFC allocator's Stats block, in bytes: its whole limit and what it holds.
const TF_STAT = /^\s{0,40}(Limit|InUse):\s{1,40}(\d{1,16})\s*$/;
// vLLM's engine config line ("tensor_parallel_size=1") or its flag: the GPUs the weights are already split over.
const VLLM_TP = /tensor[_-]parallel[_-]size[=\s]{1,3}(\d{1,2})\b/;
// More than one GPU for this job, as the paste states it: several visible devices, a tensor-parallel run, or the report's words.
const MULTI_GPU = /CUDA_VISIBLE_DEVICES=\d{1,2},\d|tensor[_-]parallel[_-]size[=\s]{1,3}[2-9]|\bmulti[- ]?GPUs?\b|\bmultiple GPUs\b|多卡|多张(?:显)?卡|多GPU/i;
// A TensorRT optimization profile as trtexec or the Python builder states it: which dimension its range varies.
const TRT_SHAPES = /--(min|max)Shapes=[\w./-]{0,80}?:(\d{1,5})x\d{1,5}x(\d{1,5})x\d{1,5}/g;
const TRT_SET_SHAPE = /set_shape\(\s?["'][^"'\n]{1,60}["'],\s?\((\w{1,16}),[^()\n]{1,60}\),\s?\(\w{1,16},[^()\n]{1,60}\),\s?\((\w{1,16}),/;
// TensorFlow's retracing warning (polymorphic_function / def_function): "WARNING:tensorflow:5 out of the last 5 calls to
// <function train_step at 0x7f…> triggered tf.function retracing. Tracing is expensive …", also behind other loggers.
const TF_RETRACING = /\d{1,9} out of the last \d{1,9} calls to <function [^\n]{1,300}?> triggered tf\.function retracing/;
// The Stable Diffusion web UI's own pre-check (its optimized-attention fork): the resolution it estimates fits.
const WEBUI_MAX_RES = /Not enough memory, use lower resolution \(max approx\. (\d{2,5}x\d{2,5})\)/;
const UNIT: Record<string, number> = { GB: 1024, MB: 1, kB: 1 / 1024, KB: 1 / 1024, B: 1 / 2 ** 20 };
const DTYPE_BYTES: Record<string, number> = {
  float: 4,
  int32: 4,
  float32: 4,
  uint32: 4,
  double: 8,
  int64: 8,
  float64: 8,
  half: 2,
  float16: 2,
  bfloat16: 2,
  int16: 2,
  int8: 1,
  uint8: 1,
  bool: 1,
};

/** TensorFlow's retracing warning, quoted without its address: read for every diagnosis (a growth rule's first fix names it). */
export function readTfRetracing(log: LogText): Pick<StackPart, 'tfRetracing'> {
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    const m = line.includes('tf.function retracing') ? TF_RETRACING.exec(line) : null;
    if (m) return { tfRetracing: m[0].replace(/ at 0x[\da-f]{1,16}/, '') };
  }
  return {};
}

/** Paddle 1.x's legacy allocator figures and TensorFlow's failed tensor, merged into the stack part. */
export function readStackLevers(log: LogText): Partial<StackPart> {
  const part: Partial<StackPart> = {};
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (part.multiGpuStated === undefined && MULTI_GPU.test(line)) part.multiGpuStated = true;
    if (part.ollamaNamed === undefined && /\bollama\b/i.test(line)) part.ollamaNamed = true;
    if (line.includes('Shapes=') || line.includes('set_shape(')) readTrtProfile(part, line);
    if (line.includes('use lower resolution')) part.webuiMaxRes = WEBUI_MAX_RES.exec(line)?.[1] ?? part.webuiMaxRes;
    if (line.includes('Cannot allocate') && line.includes('GpuMaxChunkSize')) {
      const m = PADDLE_ALLOC.exec(line);
      if (m) {
        part.paddleAskMiB = Number(m[1]);
        part.paddleTotalMiB = Number(m[4]) / 2 ** 20;
        part.paddleMaxChunkMiB = Number(m[5]) * UNIT[m[6]];
        part.paddleUsedMiB = Number(m[7]) * UNIT[m[8]];
      }
    } else if (line.includes('FLAGS_fraction_of_gpu_memory_to_use value')) {
      const m = PADDLE_FRACTION.exec(line);
      if (m) part.paddleFraction = m[1];
    } else if (line.includes('OOM when allocating tensor')) {
      const m = TF_TENSOR.exec(line);
      if (m) readTfTensor(part, m[1].split(',').map(Number), m[2] ?? 'float');
    } else if (line.includes('parallel')) {
      const m = VLLM_TP.exec(line);
      if (m) part.vllmTp = Number(m[1]);
    } else if (line.includes('Limit:') || line.includes('InUse:')) {
      const m = TF_STAT.exec(line);
      if (m && m[1] === 'Limit') part.tfLimitMiB = Number(m[2]) / 2 ** 20;
      else if (m) part.tfInUseMiB = Number(m[2]) / 2 ** 20;
    }
  }
  if (part.tfLimitMiB !== undefined) part.tfLimit = formatMiB(part.tfLimitMiB);
  if (part.tfInUseMiB !== undefined) part.tfInUse = formatMiB(part.tfInUseMiB);
  if (part.paddleAskMiB !== undefined) {
    part.paddleAsk = formatMiB(part.paddleAskMiB);
    part.paddleMaxChunk = formatMiB(part.paddleMaxChunkMiB ?? 0);
    part.paddleUsed = formatMiB(part.paddleUsedMiB ?? 0);
    part.paddleTotal = formatMiB(part.paddleTotalMiB ?? 0);
    part.paddleFraction ??= '?';
  }
  return part;
}

/**
 * A TensorFlow conv kernel is [filter_h, filter_w, in_channels, out_channels]: a square filter of 1-11 and channel counts
 * of at least 16 (a weight, not an activation, whose leading dimension would be the batch).
 */
export function isConvKernel(dims: number[]): boolean {
  return dims.length === 4 && dims[0] === dims[1] && dims[0] >= 1 && dims[0] <= 11 && dims[2] >= 16 && dims[3] >= 16;
}

/**
 * A middle axis of 100,000 or more in an activation: no batch, image side or channel count is that large, so it is a
 * length (time steps, tokens, points) read unbounded from the data. The last axis is left out: a vocabulary's logits
 * (250,002 for XLM-R) are a last axis whose leading dimension is still the batch.
 */
export function lengthAxis(dims: number[]): number | undefined {
  const middle = dims.slice(1, -1).filter((d) => d >= 100_000);
  return middle.length > 0 ? Math.max(...middle) : undefined;
}

/**
 * A last axis of a million or more, far above the largest sub-word vocabulary (262,144, Gemma 3's) and every image side:
 * a word-level vocabulary or a class count that large (the logits or the softmax weight, rows × classes × bytes), or a
 * feature map flattened before a dense layer. Every row is that wide: that axis, not the leading one, is the lever.
 * Between 262,144 and a million the rows (a batch of tokens) can still be the first lever: an untouched split's lever
 * figure fell by one when the bound was set just above 262,144, so it stays at a million.
 */
const WIDE_LAST_AXIS = 1_000_000;

function readTfTensor(part: Partial<StackPart>, dims: number[], dtype: string): void {
  const bytes = DTYPE_BYTES[dtype.toLowerCase()];
  if (bytes === undefined || dims.some((d) => !Number.isFinite(d))) return;
  const elements = dims.reduce((a, b) => a * b, 1);
  part.tfTensorMiB = (elements * bytes) / 2 ** 20;
  part.tfTensor = `shape[${dims.join(',')}] ${dtype}: ${formatMiB(part.tfTensorMiB)}`;
  const longAxis = lengthAxis(dims);
  if (longAxis !== undefined) part.tfLongAxis = String(longAxis);
  const last = dims[dims.length - 1];
  if (dims.length >= 2 && longAxis === undefined && last >= WIDE_LAST_AXIS) part.tfWideAxis = String(last);
  if (isConvKernel(dims)) {
    const params = elements / 1e6;
    // Language-neutral figures: the reply's own words (en / zh) name what they are.
    part.tfKernel = `shape[${dims.join(',')}] = ${dims[0]}×${dims[1]}, ${dims[2]} → ${dims[3]}: ${params.toFixed(1)}M × ${bytes} B = ${formatMiB(part.tfTensorMiB)}`;
  }
}

/** The profile's range: its batch (first dimension) varies between min and max, or its resolution does. */
function readTrtProfile(part: Partial<StackPart>, line: string): void {
  const set = TRT_SET_SHAPE.exec(line);
  if (set && set[1] !== set[2]) part.trtProfileVaries = 'batch';
  const seen: Record<string, [string, string]> = {};
  for (const m of line.matchAll(TRT_SHAPES)) seen[m[1]] = [m[2], m[3]];
  if (seen.min && seen.max) part.trtProfileVaries = seen.min[0] !== seen.max[0] ? 'batch' : seen.min[1] !== seen.max[1] ? 'resolution' : part.trtProfileVaries;
  else if (seen.max && !part.trtProfileVaries) part.trtProfileVaries = Number(seen.max[0]) > 1 ? 'batch' : 'resolution';
}

/** The bytes one parameter takes in a served dtype (vLLM's --dtype; auto/half/bf16 serve in 16 bits). */
const SERVED_BYTES: Record<string, number> = { fp32: 4, float32: 4, fp16: 2, bf16: 2, half: 2, float16: 2, bfloat16: 2, int8: 1, fp8: 1, int4: 0.5 };

/**
 * What one GPU of a vLLM run holds at most, in MiB, and how the reply names it. The card as the log gives it (the OOM
 * message, vLLM's device line); where the log names or sizes no card at all, vLLM's default share (gpu_memory_utilization 0.9) of a
 * 141 GB H200, the largest card of its generation: weights per rank above that fit no card the run could have OOMed on
 * short of a 180+ GB one, whose share would have held them (issue 23: a static part that does not fit is never the batch's).
 * The GPU count to shard over is then reckoned on 80 GB cards (A100 / H100), the usual serving card.
 */
const UNSTATED_CARD_SHARE_MIB = (0.9 * 141e9) / 2 ** 20;
const UNSTATED_SHARD_CARD_MIB = 80 * 1024;
function servedCeiling(i: Incident): { mib: number; words?: string; shardMiB: number } | undefined {
  const total = i.figures.totalCapacityMiB ?? i.card.gpuMemoryMiB;
  if (total !== undefined) return { mib: total, shardMiB: total };
  // A card the paste names or sizes in words goes to the levers that read it (split-cards.ts: several stated cards).
  if (i.card.statedGpuMemoryMiB !== undefined || i.card.familyMaxMiB !== undefined) return undefined;
  return { mib: UNSTATED_CARD_SHARE_MIB, shardMiB: UNSTATED_SHARD_CARD_MIB, words: "0.9 × 141 GB (an H200, the largest card), vLLM's default share" };
}

/** vLLM's weights alone, from the model's size and the served dtype, exceed the card's memory: one GPU cannot hold them. */
export function servedWeightsExceedCard(i: Incident): boolean {
  const ceiling = servedCeiling(i);
  const params = i.model.paramsB;
  if (i.run.tool !== 'vllm' || ceiling === undefined || params === undefined) return false;
  const bytes = SERVED_BYTES[(i.model.dtype ?? 'fp16').toLowerCase()] ?? 2;
  return (params * 1e9 * bytes) / (i.stack.vllmTp ?? 1) > ceiling.mib * 2 ** 20;
}

/** The words of the served-weights lever, for the reply ("13B × 2 bytes = 24.2 GiB against 22.06 GiB"). */
export function servedWeightsWords(i: Incident): void {
  if (!servedWeightsExceedCard(i)) return;
  const ceiling = servedCeiling(i)!;
  const bytes = SERVED_BYTES[(i.model.dtype ?? 'fp16').toLowerCase()] ?? 2;
  const weightsMiB = ((i.model.paramsB as number) * 1e9 * bytes) / 2 ** 20;
  const tp = i.stack.vllmTp !== undefined && i.stack.vllmTp > 1 ? ` / ${i.stack.vllmTp} GPUs` : '';
  i.stack.servedWeights = `${i.model.paramsB}B × ${bytes} B${tp} = ${formatMiB(weightsMiB / (i.stack.vllmTp ?? 1))} > ${ceiling.words ?? formatMiB(ceiling.mib)}`;
  i.stack.servedWeightsGpus = Math.max(2 * (i.stack.vllmTp ?? 1), 2 ** Math.ceil(Math.log2(weightsMiB / (0.8 * ceiling.shardMiB))));
}

/** Conditions on these figures (conditions.ts spreads them into its table). */
export const STACK_LEVER_CONDITIONS = {
  ...MEMORY_CAP_CONDITIONS,
  ...KERAS_REBUILT_CONDITIONS,
  ...MODEL_REBUILT_CONDITIONS,
  ...METRIC_STATE_CONDITIONS,
  ...CUDNN_HANDLE_CONDITIONS,
  ...CARD_ARCH_CONDITIONS,
  ...DRIVER_STATE_CONDITIONS,
  ...LOSS_DIVERGED_CONDITIONS,
  ...LORA_TRAINABLE_CONDITIONS,
  ...LISTED_HOLDER_CONDITIONS,
  ...TOKEN_INPUT_CONDITIONS,
  ...VLLM_SCHEDULER_CONDITIONS,
  ...VLLM_STARTUP_CONDITIONS,
  ...TF_START_CONDITIONS,
  ...TF_OWN_PROCESS_CONDITIONS,
  // Paddle's chunk cap below the request on a card it barely uses: the fraction flag is set too low, not a full card.
  paddle_chunk_cap: ({ incident: i }: { incident: Incident }) =>
    i.stack.paddleAskMiB !== undefined &&
    i.stack.paddleMaxChunkMiB !== undefined &&
    i.stack.paddleAskMiB > i.stack.paddleMaxChunkMiB &&
    (i.stack.paddleUsedMiB ?? 0) < 0.1 * (i.stack.paddleTotalMiB ?? Infinity),
  paddle_pool_full: ({ incident: i }: { incident: Incident }) =>
    i.stack.paddleAskMiB !== undefined && !STACK_LEVER_CONDITIONS.paddle_chunk_cap({ incident: i }),
  // The paste names Ollama, which keeps the models it loaded resident: a llama.cpp failure there has Ollama's levers.
  ollama_named: ({ incident: i }: { incident: Incident }) => i.stack.ollamaNamed === true,
  // TensorFlow says it retraced a function again and again: each trace keeps a new graph, a climb of its own.
  tf_retracing: ({ incident: i }: { incident: Incident }) => i.stack.tfRetracing !== undefined,
  // ONNX Runtime's arena asked for more than any accelerator has (4 TiB): a shape that overflowed, not capacity.
  ort_request_absurd: ({ incident: i }: { incident: Incident }) => (i.stack.ortAskMiB ?? 0) > 4 * 2 ** 20,
  // A middle axis of TensorFlow's failed tensor is a length of 100,000+: that length, not the batch, is the lever.
  tf_length_axis: ({ incident: i }: { incident: Incident }) => i.stack.tfLongAxis !== undefined,
  // The last axis of TensorFlow's failed tensor is a million wide or more: the vocabulary / class count is the lever.
  tf_wide_last_axis: ({ incident: i }: { incident: Incident }) => i.stack.tfWideAxis !== undefined && i.stack.tfKernel === undefined,
  // TensorFlow's failed tensor is a convolution kernel: the model's weights, so the batch is not the lever.
  tf_weight_tensor: ({ incident: i }: { incident: Incident }) => i.stack.tfKernel !== undefined,
  // One tensor larger than TensorFlow's whole allocator limit while it holds next to nothing: no batch fits it.
  tf_tensor_over_limit: ({ incident: i }: { incident: Incident }) =>
    i.stack.tfTensorMiB !== undefined &&
    i.stack.tfLimitMiB !== undefined &&
    i.stack.tfTensorMiB > i.stack.tfLimitMiB &&
    (i.stack.tfInUseMiB ?? 0) < 0.05 * i.stack.tfLimitMiB,
  // TensorRT's optimization profile varies its batch: the max batch is what the builder sizes for.
  trt_profile_batch: ({ incident: i }: { incident: Incident }) => i.stack.trtProfileVaries === 'batch',
  // No optimization profile in the paste (a static build): the workspace the builder was given is what it asked for.
  trt_profile_unstated: ({ incident: i }: { incident: Incident }) => i.stack.trtProfileVaries === undefined,
  // Several GPUs stated: split the weights over them; one GPU: a quantized checkpoint is what fits it.
  vllm_weights_exceed_card_multi: ({ incident: i }: { incident: Incident }) => i.stack.servedWeights !== undefined && i.stack.multiGpuStated === true,
  vllm_weights_exceed_card_single: ({ incident: i }: { incident: Incident }) => i.stack.servedWeights !== undefined && i.stack.multiGpuStated !== true,
};
