// Conditions a rule or fix can require, computed from the facts; rules name them in YAML (`when: [fragmented]`), so rule files stay declarative.
import type { Condition } from './rule-types.js';
import type { Readings } from '../readings/types.js';
import { whoHoldsMemory } from './holder.js';
import { offloadedActivations, pipelineOffloadFirst, staticFullTrainingLever, type StaticLever } from './levers/static-order.js';
import { expandableSegmentsAvailable } from './environment.js';
import {
  batchAtOne,
  batchLever,
  cardMiB,
  batchOneStaticDominates,
  batchOneZeroBelow3,
  checkpointLoad,
  hasMemoryFigures,
  collectiveOom,
  evalGathers,
  evalLightning,
  loadInFp32,
} from './levers.js';
import { hostLeverUnstated, workersEvidence } from './levers/host-ram.js';
import { evalBatchNoGrad, evalBatchSaidFits, evalEngineBatch, evalHfGeneratesBatch, evalPlainGenerates } from './levers/eval-batch.js';
import { EVAL_SET_CONDITIONS } from './levers/eval-over-set.js';
import { EVAL_POST_CONDITIONS } from './levers/eval-post.js';
import { GGML_BUFFER_CONDITIONS } from './levers/ggml-buffer.js';
import { workersBlock, workersFirst, workersNotLever } from './levers/workers.js';
import { sequenceFirst } from './levers/sequence.js';
import { STACK_LEVER_CONDITIONS } from './levers/stack-levers.js';
import { CAFFE_TEST_CONDITIONS } from './levers/caffe-test.js';
import { PLACEMENT_CONDITIONS } from './levers/placement.js';
import { inputSaidLargeFirst, inputSizeFirst, visionAtBatchOne } from './levers/input-size.js';
import { inputLengthFirst } from './levers/input-length.js';
import { smallerInputFirst } from './levers/smaller-input.js';
import { vaeDecodeFirst } from './levers/vae-decode.js';
import {
  evalBatchHalves,
  evalBatchAboveTrain,
  evalAtBatchOneKeras,
  evalAtBatchOneTorch,
  evalGradsOnStated,
  evalWholeSet,
  evalHfAccumulates,
  evalHfGenerates,
  evalHfKeepsLogits,
  evalKeras,
  evalOneLargeInput,
  evalStatedLargeInput,
  evalEngineInput,
  evalUltralyticsVal,
  evalPlainCollects,
  evalPlainNoGrad,
  evalPlainNoGradShown,
} from './levers/eval.js';
import { oomAfterSteps } from './levers/progress.js';
import { fp32WeightsOverCard } from './levers/budget.js';
import { quantizeFirst, quantizeNotEnough } from './levers/quantize.js';
import { ampFirst } from './levers/amp.js';
import { fullTuneStaticFirst } from './levers/experiment-order.js';
import { inputLeverConditions } from './levers/input-conditions.js';
import { generationLengthFirst, servingContextFirst } from './levers/generation-length.js';
import { CACHE_CAPACITY_CONDITIONS } from './levers/cache-capacity.js';
import type { Incident } from './incident/index.js';
export interface Evidence {
  incident: Incident;
  readings: Readings;
}
/** Memory PyTorch's allocator holds but has not handed out: what fragmentation wastes. */
export function cachedUnusedMiB(f: Incident): number | undefined {
  if (f.figures.reservedUnallocatedMiB !== undefined) return f.figures.reservedUnallocatedMiB;
  if (f.figures.reservedMiB !== undefined && f.figures.allocatedMiB !== undefined) return Math.max(0, f.figures.reservedMiB - f.figures.allocatedMiB);
  return undefined;
}

/** GPU memory neither free nor held by this process's allocator: other processes (and the CUDA context). */
export function heldElsewhereMiB(f: Incident): number | undefined {
  if (f.figures.totalCapacityMiB === undefined || f.figures.freeMiB === undefined) return undefined;
  const mine = f.figures.reservedMiB ?? (f.figures.allocatedMiB !== undefined ? f.figures.allocatedMiB + (f.figures.reservedUnallocatedMiB ?? 0) : undefined);
  if (mine === undefined) return undefined;
  return Math.max(0, f.figures.totalCapacityMiB - f.figures.freeMiB - mine);
}

// Twice the card (the message's total, else the card the paste names), or more than the largest single GPU made
// (288 GB) when no card's size is known.
const LARGEST_GPU_MIB = 288 * 1024;
const isAbsurd = (f: Incident) => {
  const card = cardMiB(f);
  return f.figures.triedAllocMiB !== undefined && ((card !== undefined && f.figures.triedAllocMiB > 2 * card) || f.figures.triedAllocMiB > LARGEST_GPU_MIB);
};

// Fragmentation is the allocator's idle cache covering the failed request (reserved − allocated, or PyTorch's own
// "reserved but unallocated" figure, ≥ the request). Free memory on the device that exceeds it is "not capacity" (holder.ts).
const isFragmented = (f: Incident) => !isAbsurd(f) && whoHoldsMemory(f)?.holder === 'allocator_cache';
const holder = (f: Incident) => (isAbsurd(f) ? undefined : whoHoldsMemory(f)?.holder);
const HALF_OR_LESS = new Set(['fp16', 'bf16', 'int8', 'int4']);
/** Verdicts under which the static part can be the lever: nothing stated, or this process's own memory. */
const STATIC_HOLDERS = new Set<string | undefined>([undefined, 'activations', 'optimizer_state', 'weights']);

/** The static budget names `lever` first for full training over the card, and its words are there to quote. */
const staticFirst = (f: Incident, lever: StaticLever) =>
  staticFullTrainingLever(f) === lever && !oomAfterSteps(f) && f.budget.staticWhy !== undefined && f.budget.shardWhy !== undefined;
const keptEvident = (i: Incident) => i.series.keptReference !== undefined || (i.series.emptiesCache === true && i.series.memoryShape === 'sawtooth_rising');

export const CONDITION_CHECKS: Record<Condition, (e: Evidence) => boolean> = {
  ...STACK_LEVER_CONDITIONS,
  ...CAFFE_TEST_CONDITIONS,
  ...EVAL_SET_CONDITIONS,
  ...inputLeverConditions(holder),
  ...PLACEMENT_CONDITIONS,
  ...CACHE_CAPACITY_CONDITIONS,
  fragmented: ({ incident }) => isFragmented(incident),
  not_fragmented: ({ incident }) => !isFragmented(incident),
  absurd_request: ({ incident }) => isAbsurd(incident),
  not_absurd_request: ({ incident }) => !isAbsurd(incident),
  capacity_contradicts_gpu: ({ incident, readings }) => {
    const named = incident.card.gpuMemoryMiB ?? readings.gpus.find((g) => g.index === (incident.figures.gpuIndex ?? 0))?.memoryTotalMiB ?? undefined;
    return (
      incident.figures.totalCapacityMiB !== undefined && named !== undefined && named > 0 && Math.abs(incident.figures.totalCapacityMiB - named) / named > 0.15
    );
  },
  holder_other_processes: ({ incident }) => holder(incident) === 'other_processes',
  holder_not_capacity: ({ incident }) => holder(incident) === 'not_capacity',
  holder_weights: ({ incident }) => holder(incident) === 'weights',
  holder_optimizer_state: ({ incident }) => holder(incident) === 'optimizer_state',
  tool_tensorflow: ({ incident }) => incident.run.tool === 'tensorflow' || incident.run.tool === 'keras',
  batch_change_no_help: ({ incident }) => incident.tried.batchChangeNoHelp === true,
  not_batch_change_no_help: ({ incident }) => incident.tried.batchChangeNoHelp !== true,
  ggml_buffer_numbers: ({ incident }) => incident.stack.ggmlBuffer !== undefined,
  zero_below_3: ({ incident }) => incident.distributed.zeroStage !== undefined && incident.distributed.zeroStage < 3,
  not_zero_below_3: ({ incident }) => !(incident.distributed.zeroStage !== undefined && incident.distributed.zeroStage < 3),
  // Whether the log's figures or frames said who holds the memory at all.
  holder_stated: ({ incident }) => holder(incident) !== undefined,
  holder_unstated: ({ incident }) => holder(incident) === undefined,
  // The batch is the lever only when this process's own activations hold the card (or nothing says who),
  // and its preconditions hold (levers.ts): a training step, no growth, a static part that fits.
  batch_is_the_lever: ({ incident }) => {
    if (!batchLever(incident).holds) return false;
    const h = holder(incident);
    return h === undefined || h === 'activations';
  },
  // A smaller batch helps (not always first) when activations or other processes fill the card.
  batch_helps: ({ incident }) => {
    if (!batchLever(incident).holds) return false;
    const h = holder(incident);
    return h === undefined || h === 'activations' || h === 'other_processes';
  },
  // Each phase's own lever (issue 23): evaluation, the model load, a checkpoint, a collective, the DataLoader.
  phase_eval_gather: ({ incident }) => evalGathers(incident),
  phase_eval_hf: ({ incident }) => evalHfKeepsLogits(incident),
  phase_eval_hf_accumulates: ({ incident }) => evalHfAccumulates(incident),
  phase_eval_hf_generate: ({ incident }) => evalHfGenerates(incident) && !evalHfGeneratesBatch(incident),
  phase_eval_hf_generate_batch: ({ incident }) => evalHfGeneratesBatch(incident),
  phase_eval_batch_said_fits: ({ incident }) => evalBatchSaidFits(incident),
  phase_eval_batch_nograd: ({ incident }) => evalBatchNoGrad(incident),
  phase_eval_plain_generates: ({ incident }) => evalPlainGenerates(incident),
  phase_eval_lightning: ({ incident }) => evalLightning(incident),
  phase_eval_plain: ({ incident }) => evalPlainNoGrad(incident),
  phase_eval_plain_nograd_shown: ({ incident }) => evalPlainNoGradShown(incident),
  phase_eval_plain_collects: ({ incident }) => evalPlainCollects(incident),
  phase_eval_keras: ({ incident }) => evalKeras(incident),
  phase_eval_one_large_input: ({ incident }) => evalOneLargeInput(incident),
  phase_eval_stated_input: ({ incident }) => evalStatedLargeInput(incident),
  phase_eval_engine_input: ({ incident }) => evalEngineInput(incident),
  phase_eval_engine_batch: ({ incident }) => evalEngineBatch(incident),
  phase_eval_ultralytics: ({ incident }) => evalUltralyticsVal(incident),
  ...EVAL_POST_CONDITIONS,
  eval_batch_halves: ({ incident }) => evalBatchHalves(incident),
  phase_eval_grads_stated: ({ incident }) => evalGradsOnStated(incident),
  phase_eval_whole_set: ({ incident }) => evalWholeSet(incident),
  phase_eval_batch_above_train: ({ incident }) => evalBatchAboveTrain(incident),
  phase_eval_batch_one_keras: ({ incident }) => evalAtBatchOneKeras(incident),
  phase_eval_batch_one_torch: ({ incident }) => evalAtBatchOneTorch(incident),
  phase_load_dtype: ({ incident }) => loadInFp32(incident),
  phase_checkpoint: ({ incident }) => checkpointLoad(incident),
  phase_collective: ({ incident }) => collectiveOom(incident),
  phase_data: ({ incident }) => incident.phase.name === 'data',
  // Why the batch is not offered, when the holder's verdict did not already say so.
  batch_blocked_growth: ({ incident }) => batchLever(incident).blockedBy === 'growth',
  // (Training only: its text leads with LoRA and ZeRO; a load or inference whose weights fill the card gets holder_weights' quantize / split.)
  // Full training whose weights, gradients and optimizer state do not fit (levers/static-order.ts): the lever the budget names
  // (shard over the launch's GPUs, offload the optimizer state, or a 4-bit base with LoRA), with its arithmetic; not after steps ran at these settings.
  static_full_training_shard: ({ incident }) => staticFirst(incident, 'shard'),
  static_full_training_offload: ({ incident }) => staticFirst(incident, 'offload'),
  static_full_training_qlora: ({ incident }) => staticFirst(incident, 'qlora'),
  // The parameters are on the host already (levers/static-order.ts): checkpointing first, unless a long input is stated.
  checkpointing_first_offloaded: ({ incident }) => {
    const h = holder(incident);
    return offloadedActivations(incident) && !sequenceFirst(incident) && !inputSizeFirst(incident) && (h === undefined || h === 'activations');
  },
  batch_blocked_static: ({ incident }) =>
    incident.run.training === true && batchLever(incident).blockedBy === 'static_over_card' && incident.budget.staticWhy !== undefined,
  batch_unknown: ({ incident }) => incident.run.batch === undefined,
  // The batch is already 1 and this process's own tensors (or nothing stated) fill the card: the experiment that decides.
  // ... and the run is a vision network's (levers/input-size.ts): one image's activations lead the experiment.
  batch_one_vision: ({ incident }) => {
    const h = holder(incident);
    return batchAtOne(incident) && visionAtBatchOne(incident) && hasMemoryFigures(incident) && (h === undefined || h === 'activations');
  },
  // Training adapters (LoRA / PEFT) on a frozen base: its optimizer state is the adapters' only.
  adapter_training: ({ incident }) => incident.run.training === true && incident.run.adapterTraining === true,
  not_adapter_training: ({ incident }) => !(incident.run.training === true && incident.run.adapterTraining === true),
  batch_one_experiment: ({ incident }) => {
    const h = holder(incident);
    return batchAtOne(incident) && hasMemoryFigures(incident) && (h === undefined || h === 'activations');
  },
  // A long stated sequence at a small or unstated batch (levers/sequence.ts): the length, not the batch, when this
  // process's own tensors (or nothing stated) fill the card.
  sequence_first: ({ incident }) => {
    const h = holder(incident);
    return sequenceFirst(incident) && (h === undefined || h === 'activations');
  },
  // One large stated input at a batch of 1 or 2 or none (levers/input-size.ts): its pixels, not the batch, when this
  // process's own tensors (or nothing stated) fill the card.
  input_size_first: ({ incident }) => {
    const h = holder(incident);
    return inputSizeFirst(incident) && (h === undefined || h === 'activations');
  },
  // The report calls its one input large, with no size, outside training (levers/input-size.ts).
  input_size_said: ({ incident }) => {
    const h = holder(incident);
    return inputSaidLargeFirst(incident) && (h === undefined || h === 'activations');
  },
  // One long clip or recording (levers/input-length.ts): chunk it, not the batch; video and audio each have their words.
  input_length_first_video: ({ incident }) => {
    const h = holder(incident);
    return inputLengthFirst(incident) && incident.input.inputLengthKind !== 'audio' && (h === undefined || h === 'activations');
  },
  input_length_first_audio: ({ incident }) => {
    const h = holder(incident);
    return inputLengthFirst(incident) && incident.input.inputLengthKind === 'audio' && (h === undefined || h === 'activations');
  },
  // The failure is in a VAE decode (levers/vae-decode.ts): decode in tiles or at a lower resolution.
  vae_decode_input: ({ incident }) => {
    const h = holder(incident);
    return vaeDecodeFirst(incident) && (h === undefined || h === 'activations');
  },
  // The report's own experiment: a smaller size or length worked, a larger failed (levers/smaller-input.ts).
  smaller_input_worked: ({ incident }) => {
    const h = holder(incident);
    return smallerInputFirst(incident) && (h === undefined || h === 'activations');
  },
  // fp32 training shown at a batch of 1 or 2 or none (levers/amp.ts): mixed precision, one setting that halves the
  // activations, before a smaller batch or input, when this process's own tensors (or nothing stated) fill the card.
  amp_first: ({ incident }) => {
    const h = holder(incident);
    return ampFirst(incident) && (h === undefined || h === 'activations');
  },
  // Inference or adapter training whose 16-bit weights fill the card (levers/quantize.ts): fewer bits per weight, or
  // fewer weights, first; another process or a card that is not full comes first.
  // A diffusers pipeline whose weights fill the card (levers/static-order.ts): model CPU offload before quantizing.
  pipeline_offload_first: ({ incident }) => pipelineOffloadFirst(incident) && STATIC_HOLDERS.has(holder(incident)),
  quantize_first_inference: ({ incident }) =>
    quantizeFirst(incident) && !quantizeNotEnough(incident) && incident.run.training !== true && STATIC_HOLDERS.has(holder(incident)),
  quantize_first_adapter: ({ incident }) =>
    quantizeFirst(incident) && !quantizeNotEnough(incident) && incident.run.training === true && STATIC_HOLDERS.has(holder(incident)),
  quantize_not_enough: ({ incident }) => quantizeNotEnough(incident) && STATIC_HOLDERS.has(holder(incident)),
  // A long generation request with weights that leave room (levers/generation-length.ts): its length, not quantization.
  generation_length_first: ({ incident }) => {
    const h = holder(incident);
    return generationLengthFirst(incident) && (h === undefined || h === 'activations');
  },
  // A serving tool started with a long context (levers/generation-length.ts): the context length is its first knob.
  serving_context_first: ({ incident }) => {
    const h = holder(incident);
    return servingContextFirst(incident) && (h === undefined || h === 'activations');
  },
  // ... and with no figure at all: who holds the card is the first unknown (another process, a hung run).
  batch_one_no_figures: ({ incident }) => batchAtOne(incident) && !hasMemoryFigures(incident),
  // Batch 1 and the budget points at the static part (levers.ts): it takes most of the card, or ZeRO-1/2 keep the
  // whole weights on every GPU. Another process or a card that is not full comes first.
  batch_one_static_dominates: ({ incident }) => batchOneStaticDominates(incident) && STATIC_HOLDERS.has(holder(incident)),
  batch_one_zero_below_3: ({ incident }) => batchOneZeroBelow3(incident) && STATIC_HOLDERS.has(holder(incident)),
  // The report's own experiment: it fits with gradient checkpointing and runs out without it (levers/setting-experiment.ts).
  checkpointing_worked: ({ incident }) => incident.run.checkpointingWorked !== undefined && STATIC_HOLDERS.has(holder(incident)),
  // A stated full fine-tune at a small or unstated batch (levers/experiment-order.ts): shard / offload lead the experiment.
  full_tune_static_first: ({ incident }) => fullTuneStaticFirst(incident) && STATIC_HOLDERS.has(holder(incident)),
  // DDP's reducer errors (levers/ddp-unused.ts): a hook fired twice, or find_unused_parameters already on.
  ddp_marked_twice: ({ incident }) => incident.distributed.ddpMarkedTwice === true,
  ddp_find_unused_already: ({ incident }) => incident.distributed.ddpFindUnusedSet === true && incident.distributed.ddpMarkedTwice !== true,
  // Host RAM (levers/host-ram.ts, workers.ts, eval-gathered.ts): each lever on its evidence; none: the experiment that decides.
  workers_evidence: ({ incident }) => workersEvidence(incident),
  host_eval_gathered: ({ incident }) => incident.host.evalGathered !== undefined,
  host_eval_killed: ({ incident }) => incident.host.evalKilled !== undefined,
  // Fewer workers first only when nothing points elsewhere: levers/workers.ts's workersBlock lists what does.
  workers_first: ({ incident }) => workersFirst(incident),
  workers_not_lever_tried: ({ incident }) => workersNotLever(incident) && incident.host.workersTried !== undefined,
  workers_not_lever_few: ({ incident }) => workersNotLever(incident) && incident.host.workersTried === undefined,
  host_kept_reference: ({ incident }) => incident.series.keptReference !== undefined && incident.host.loaderCollected === undefined,
  host_ram_grows: ({ incident }) => workersBlock(incident) === 'growth' && incident.series.keptReference === undefined && incident.host.hostGrowthCjk !== true,
  host_ram_grows_unquoted: ({ incident }) =>
    workersBlock(incident) === 'growth' && incident.series.keptReference === undefined && incident.host.hostGrowthCjk === true,
  loader_collected: ({ incident }) => incident.host.loaderCollected !== undefined,
  worker_exit_in_container: ({ incident }) => workersBlock(incident) === 'container_shm',
  // The failure is raised in a spawned child process (levers/host-ram.ts): their number is what the host commits.
  spawned_children: ({ incident }) => incident.host.spawnedChildren === true,
  // The experiment that decides runs without workers: where the paste already runs with 0, say so and watch the main process.
  host_lever_unstated: ({ incident }) => hostLeverUnstated(incident) && incident.host.workers !== 0,
  host_lever_unstated_workers_zero: ({ incident }) => hostLeverUnstated(incident) && incident.host.workers === 0,
  // JAX's allocator preallocates a pool (XLA_PYTHON_CLIENT_MEM_FRACTION): nvidia-smi shows the pool, not the arrays.
  tool_jax: ({ incident }) => incident.run.tool === 'jax',
  // An nvidia-smi reading at JAX's preallocated share of the card: 0.75 by default (0.9 before jax 0.2.9, and where
  // XLA_PYTHON_CLIENT_PREALLOCATE is ignored), within the driver's and context's few percent.
  gpu_reading_jax_pool: ({ readings }) =>
    readings.gpus.some((g) => {
      if (!g.memoryUsedMiB || !g.memoryTotalMiB) return false;
      const share = g.memoryUsedMiB / g.memoryTotalMiB;
      return (share >= 0.72 && share <= 0.8) || (share >= 0.87 && share <= 0.93);
    }),
  // What llama.cpp's failed GPU buffer was for, and whether the paste names the GPU (levers/ggml-buffer.ts).
  ...GGML_BUFFER_CONDITIONS,
  // Where the job runs (environment.ts): a hosted notebook's GPU is its own; MPS and old or Windows PyTorch lack CUDA's levers.
  env_notebook: ({ incident }) => incident.environment.detected?.notebook !== undefined,
  not_env_notebook: ({ incident }) => incident.environment.detected?.notebook === undefined,
  env_mps: ({ incident }) => incident.environment.detected?.accelerator === 'mps',
  env_tpu: ({ incident }) => incident.environment.detected?.accelerator === 'tpu',
  not_env_tpu: ({ incident }) => incident.environment.detected?.accelerator !== 'tpu',
  env_windows: ({ incident }) => incident.environment.detected?.os === 'windows',
  not_env_windows: ({ incident }) => incident.environment.detected?.os !== 'windows',
  env_wsl: ({ incident }) => incident.environment.detected?.os === 'wsl',
  expandable_supported: ({ incident }) => expandableSegmentsAvailable(incident.environment.detected),
  // Ray's memory monitor killed a task for the node's RAM (stack-figures.ts): Ray's own knobs, not workers or the GPU.
  ray_memory_monitor: ({ incident }) => incident.stack.rayMonitor !== undefined,
  // The weights alone, in the fp32 the log states or its failed request shows, do not fit; in half precision they would (levers/budget.ts).
  static_fp32_weights: ({ incident }) => fp32WeightsOverCard(incident),
  expandable_unsupported: ({ incident }) => !expandableSegmentsAvailable(incident.environment.detected),
  // Mixed precision changes nothing for a run already in half precision or quantized.
  amp_would_help: ({ incident }) =>
    !incident.run.inference &&
    !incident.phase.generating &&
    incident.run.amp !== true &&
    !(incident.run.ampDefaultOn && incident.run.amp !== false) &&
    !(incident.model.dtype !== undefined && HALF_OR_LESS.has(incident.model.dtype)),
  // The run already computes in half precision (or quantized): "load in bf16" is no lever there (levers/experiment-order.ts).
  half_precision_on: (e) => !CONDITION_CHECKS.amp_would_help(e),
  inference_tool: ({ incident }) => incident.run.inference === true,
  // Generation or a diffusion pipeline ran out, and no serving tool with its own knobs was recognised.
  generating_untooled: ({ incident }) => incident.phase.generating === true && incident.run.inference !== true,
  // A host kill with no DataLoader workers in the log and a model of ≥ 1B parameters named: the
  // processes' copies of the weights hold host RAM, not loaders.
  host_ram_weights: ({ incident }) => incident.host.workers === undefined && (incident.model.paramsB ?? 0) >= 1,
  // DeepSpeed's last announced step was building the optimizer states (CPU offload puts them in RAM).
  deepspeed_optimizer_init: ({ incident }) => /^Before initializing optimizer states/.test(incident.phase.deepspeedPhase ?? ''),
  // The run died while from_pretrained was still reading shards: no batch had been loaded yet.
  // vLLM's own profile: the weights alone over its budget, or a higher utilization that leaves the cache room.
  vllm_weights_exceed_budget: ({ incident }) =>
    incident.stack.vllmProfile !== undefined && incident.stack.vllmProfile.weightsGiB >= incident.stack.vllmProfile.budgetGiB,
  vllm_util_would_fit: ({ incident }) => incident.stack.vllmUtilNeeded !== undefined,
  vllm_util_would_not_fit: ({ incident }) =>
    incident.stack.vllmProfile !== undefined &&
    incident.stack.vllmUtilNeeded === undefined &&
    incident.stack.vllmProfile.weightsGiB < incident.stack.vllmProfile.budgetGiB,
  // vLLM v1's own cache check: the GiB one request of max_model_len needs against what is left (stack-figures.ts).
  vllm_kv_needed: ({ incident }) => incident.stack.vllmKvNeeded !== undefined && incident.stack.kvCacheTokens !== undefined,
  kv_cache_numbers: ({ incident }) => incident.stack.maxModelLen !== undefined && incident.stack.kvCacheTokens !== undefined,
  weights_loading_incomplete: ({ incident }) => incident.phase.shardsLoadedPct !== undefined && incident.phase.shardsLoadedPct < 100,
  tool_known: ({ incident }) => incident.run.toolKnobs !== undefined,
  tool_unknown: ({ incident }) => incident.run.toolKnobs === undefined,
  other_process_holds_memory: ({ incident }) => {
    const held = heldElsewhereMiB(incident);
    if (held !== undefined && incident.figures.totalCapacityMiB !== undefined) return held > Math.max(1536, 0.25 * incident.figures.totalCapacityMiB);
    return (incident.processes.otherProcesses?.length ?? 0) > 1;
  },
  autobatch: ({ incident }) => incident.run.batch === -1 || incident.run.autobatch !== undefined,
  // The level the series never goes below again keeps rising (a creep, or saw-tooth on a rising floor).
  memory_series_grows: ({ incident }) => incident.series.memoryShape === 'growth' || incident.series.memoryShape === 'sawtooth_rising',
  // Rising inside epochs (or steadily, with no epochs printed): references kept across iterations.
  leak_grows_per_iteration: ({ incident }) =>
    incident.series.memoryGrowsAt === 'per_iteration' || (incident.series.memoryGrowsAt === undefined && incident.series.memoryShape === 'growth'),
  // Rising between epochs, or peaks that come back down to a higher level: what validation leaves behind.
  leak_grows_between_epochs: ({ incident }) => incident.series.memoryGrowsAt === 'between_epochs' || incident.series.memoryShape === 'sawtooth_rising',
  cache_not_emptied: ({ incident }) => incident.series.emptiesCache !== true,
  ranks_share_one_gpu: ({ incident }) => incident.processes.strayContextGpu !== undefined,
  // The last "Caching images" progress line stopped short of 100%: the run died while caching.
  ram_cache_incomplete: ({ incident }) => incident.host.cacheProgressPct !== undefined && incident.host.cacheProgressPct < 100,
  memory_series_flat: ({ incident }) => incident.series.memoryShape === 'flat',
  // The report ties the host-RAM climb to the DataLoader workers (levers/workers.ts): fewer workers is the lever it names.
  host_growth_names_workers: ({ incident }) => incident.host.growthWorkers !== undefined && incident.host.workersTried === undefined,
  // No series in the paste contradicts a report of growth (a warm-up that stopped, a sawtooth back to its level).
  memory_series_unsettled: ({ incident }) => incident.series.memorySettled !== true,
  // No host-RAM series in the paste contradicts a report of host growth (RSS flat or back to its level).
  host_series_unsettled: ({ incident }) => incident.series.hostSettled !== true,
  killed_while_loading: ({ incident }) => incident.host.killedWhileLoading === true,
  killed_loading_data: ({ incident }) => incident.host.killedLoadingData === true && incident.host.killedWhileLoading !== true,
  // Killed while the weights were still loading: shards stopped short, or the report says so.
  weights_loading_killed: ({ incident }) =>
    (incident.phase.shardsLoadedPct !== undefined && incident.phase.shardsLoadedPct < 100) || incident.host.killedWhileLoading === true,
  // Several epochs ran at the same settings before the card ran out: what fit then and not now grew.
  oom_after_epochs: ({ incident }) => incident.progress.oomAfterEpochs !== undefined && incident.series.memoryShape !== 'flat',
  // The paste shows training steps or epochs done at these settings before the OOM (levers/progress.ts).
  oom_after_steps: ({ incident }) => oomAfterSteps(incident),
  // The paste shows what growing memory keeps (levers/growth.ts): releasing it is the first lever; else the experiment that finds it.
  // What the growth keeps is evident: the paste shows it (levers/growth.ts), or the shape rules out the allocator's cache:
  // memory that drops back when the job empties its cache yet returns to a higher floor each time is live tensors kept
  // (the leak watch's sawtooth), so releasing them leads; otherwise the experiment that finds what is kept.
  kept_reference_shown: ({ incident }) => keptEvident(incident),
  kept_reference_unshown: ({ incident }) => !keptEvident(incident),
  not_oom_after_epochs: ({ incident }) => incident.progress.oomAfterEpochs === undefined || incident.series.memoryShape === 'flat',
};

export function holds(conditions: Condition[] | undefined, e: Evidence): boolean {
  return (conditions ?? []).every((c) => CONDITION_CHECKS[c](e));
}
