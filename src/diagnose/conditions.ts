// Conditions a rule or fix can require, computed from the facts. Rules name them in YAML
// (`when: [fragmented]`); keeping the arithmetic here keeps rule files declarative.
import type { Condition } from './rule-types.js';
import type { Facts } from './facts.js';
import type { Readings } from '../readings/types.js';
import { whoHoldsMemory } from './holder.js';
import { expandableSegmentsAvailable } from './environment.js';
import {
  batchAtOne,
  batchLever,
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
import { workersBlock, workersFirst, workersNotLever } from './levers/workers.js';
import { sequenceFirst } from './levers/sequence.js';
import { inputSizeFirst } from './levers/input-size.js';
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
  evalPlainCollects,
  evalPlainNoGrad,
  evalPlainNoGradShown,
} from './levers/eval.js';
import { oomAfterSteps } from './levers/progress.js';
import { fp32WeightsOverCard } from './levers/budget.js';

export interface Evidence {
  facts: Facts;
  readings: Readings;
}

/** Memory PyTorch's allocator holds but has not handed out: what fragmentation wastes. */
export function cachedUnusedMiB(f: Facts): number | undefined {
  if (f.reservedUnallocatedMiB !== undefined) return f.reservedUnallocatedMiB;
  if (f.reservedMiB !== undefined && f.allocatedMiB !== undefined) return Math.max(0, f.reservedMiB - f.allocatedMiB);
  return undefined;
}

/** GPU memory neither free nor held by this process's allocator: other processes (and the CUDA context). */
export function heldElsewhereMiB(f: Facts): number | undefined {
  if (f.totalCapacityMiB === undefined || f.freeMiB === undefined) return undefined;
  const mine = f.reservedMiB ?? (f.allocatedMiB !== undefined ? f.allocatedMiB + (f.reservedUnallocatedMiB ?? 0) : undefined);
  if (mine === undefined) return undefined;
  return Math.max(0, f.totalCapacityMiB - f.freeMiB - mine);
}

// Twice the card, or more than the largest single GPU made (288 GB) when the card's size was cut from the paste.
const LARGEST_GPU_MIB = 288 * 1024;
const isAbsurd = (f: Facts) =>
  f.triedAllocMiB !== undefined && ((f.totalCapacityMiB !== undefined && f.triedAllocMiB > 2 * f.totalCapacityMiB) || f.triedAllocMiB > LARGEST_GPU_MIB);

// Fragmentation is the allocator's idle cache covering the failed request (reserved − allocated, or
// PyTorch's own "reserved but unallocated" figure, ≥ the request). Free memory on the device that
// exceeds the request is not fragmentation but "not capacity" (holder.ts).
const isFragmented = (f: Facts) => !isAbsurd(f) && whoHoldsMemory(f)?.holder === 'allocator_cache';
const holder = (f: Facts) => (isAbsurd(f) ? undefined : whoHoldsMemory(f)?.holder);
const HALF_OR_LESS = new Set(['fp16', 'bf16', 'int8', 'int4']);
/** Verdicts under which the static part can be the lever: nothing stated, or this process's own memory. */
const STATIC_HOLDERS = new Set<string | undefined>([undefined, 'activations', 'optimizer_state', 'weights']);

export const CONDITION_CHECKS: Record<Condition, (e: Evidence) => boolean> = {
  fragmented: ({ facts }) => isFragmented(facts),
  not_fragmented: ({ facts }) => !isFragmented(facts),
  absurd_request: ({ facts }) => isAbsurd(facts),
  not_absurd_request: ({ facts }) => !isAbsurd(facts),
  capacity_contradicts_gpu: ({ facts, readings }) => {
    const named = facts.gpuMemoryMiB ?? readings.gpus.find((g) => g.index === (facts.gpuIndex ?? 0))?.memoryTotalMiB ?? undefined;
    return facts.totalCapacityMiB !== undefined && named !== undefined && named > 0 && Math.abs(facts.totalCapacityMiB - named) / named > 0.15;
  },
  holder_other_processes: ({ facts }) => holder(facts) === 'other_processes',
  holder_not_capacity: ({ facts }) => holder(facts) === 'not_capacity',
  holder_weights: ({ facts }) => holder(facts) === 'weights',
  holder_optimizer_state: ({ facts }) => holder(facts) === 'optimizer_state',
  tool_tensorflow: ({ facts }) => facts.tool === 'tensorflow' || facts.tool === 'keras',
  batch_change_no_help: ({ facts }) => facts.batchChangeNoHelp === true,
  not_batch_change_no_help: ({ facts }) => facts.batchChangeNoHelp !== true,
  ggml_buffer_numbers: ({ facts }) => facts.ggmlBuffer !== undefined,
  zero_below_3: ({ facts }) => facts.zeroStage !== undefined && facts.zeroStage < 3,
  not_zero_below_3: ({ facts }) => !(facts.zeroStage !== undefined && facts.zeroStage < 3),
  // Whether the log's figures or frames said who holds the memory at all.
  holder_stated: ({ facts }) => holder(facts) !== undefined,
  holder_unstated: ({ facts }) => holder(facts) === undefined,
  // The batch is the lever only when this process's own activations hold the card (or nothing says who),
  // and its preconditions hold (levers.ts): a training step, no growth, a static part that fits.
  batch_is_the_lever: ({ facts }) => {
    if (!batchLever(facts).holds) return false;
    const h = holder(facts);
    return h === undefined || h === 'activations';
  },
  // A smaller batch helps (not always first) when activations or other processes fill the card.
  batch_helps: ({ facts }) => {
    if (!batchLever(facts).holds) return false;
    const h = holder(facts);
    return h === undefined || h === 'activations' || h === 'other_processes';
  },
  // Each phase's own lever (issue 23): evaluation, the model load, a checkpoint, a collective, the DataLoader.
  phase_eval_gather: ({ facts }) => evalGathers(facts),
  phase_eval_hf: ({ facts }) => evalHfKeepsLogits(facts),
  phase_eval_hf_accumulates: ({ facts }) => evalHfAccumulates(facts),
  phase_eval_hf_generate: ({ facts }) => evalHfGenerates(facts),
  phase_eval_lightning: ({ facts }) => evalLightning(facts),
  phase_eval_plain: ({ facts }) => evalPlainNoGrad(facts),
  phase_eval_plain_nograd_shown: ({ facts }) => evalPlainNoGradShown(facts),
  phase_eval_plain_collects: ({ facts }) => evalPlainCollects(facts),
  phase_eval_keras: ({ facts }) => evalKeras(facts),
  phase_eval_one_large_input: ({ facts }) => evalOneLargeInput(facts),
  eval_batch_halves: ({ facts }) => evalBatchHalves(facts),
  phase_eval_grads_stated: ({ facts }) => evalGradsOnStated(facts),
  phase_eval_whole_set: ({ facts }) => evalWholeSet(facts),
  phase_eval_batch_above_train: ({ facts }) => evalBatchAboveTrain(facts),
  phase_eval_batch_one_keras: ({ facts }) => evalAtBatchOneKeras(facts),
  phase_eval_batch_one_torch: ({ facts }) => evalAtBatchOneTorch(facts),
  phase_load_dtype: ({ facts }) => loadInFp32(facts),
  phase_checkpoint: ({ facts }) => checkpointLoad(facts),
  phase_collective: ({ facts }) => collectiveOom(facts),
  phase_data: ({ facts }) => facts.phase === 'data',
  // Why the batch is not offered, when the holder's verdict did not already say so.
  batch_blocked_growth: ({ facts }) => batchLever(facts).blockedBy === 'growth',
  // (Training only: its text leads with LoRA and ZeRO; a load or inference whose weights fill the card gets holder_weights' quantize / split.)
  batch_blocked_static: ({ facts }) => facts.training === true && batchLever(facts).blockedBy === 'static_over_card' && facts.staticWhy !== undefined,
  batch_unknown: ({ facts }) => facts.batch === undefined,
  // The batch is already 1 and this process's own tensors (or nothing stated) fill the card: the experiment that decides.
  batch_one_experiment: ({ facts }) => {
    const h = holder(facts);
    return batchAtOne(facts) && hasMemoryFigures(facts) && (h === undefined || h === 'activations');
  },
  // A long stated sequence at a small or unstated batch (levers/sequence.ts): the length, not the batch, when this
  // process's own tensors (or nothing stated) fill the card.
  sequence_first: ({ facts }) => {
    const h = holder(facts);
    return sequenceFirst(facts) && (h === undefined || h === 'activations');
  },
  // One large stated input at a batch of 1 or 2 or none (levers/input-size.ts): its pixels, not the batch, when this
  // process's own tensors (or nothing stated) fill the card.
  input_size_first: ({ facts }) => {
    const h = holder(facts);
    return inputSizeFirst(facts) && (h === undefined || h === 'activations');
  },
  // ... and with no figure at all: who holds the card is the first unknown (another process, a hung run).
  batch_one_no_figures: ({ facts }) => batchAtOne(facts) && !hasMemoryFigures(facts),
  // Batch 1 and the budget points at the static part (levers.ts): it takes most of the card, or ZeRO-1/2 keep the
  // whole weights on every GPU. Another process or a card that is not full comes first.
  batch_one_static_dominates: ({ facts }) => batchOneStaticDominates(facts) && STATIC_HOLDERS.has(holder(facts)),
  batch_one_zero_below_3: ({ facts }) => batchOneZeroBelow3(facts) && STATIC_HOLDERS.has(holder(facts)),
  // DDP's reducer errors (levers/ddp-unused.ts): a hook fired twice, or find_unused_parameters already on.
  ddp_marked_twice: ({ facts }) => facts.ddpMarkedTwice === true,
  ddp_find_unused_already: ({ facts }) => facts.ddpFindUnusedSet === true && facts.ddpMarkedTwice !== true,
  // Host RAM (levers/host-ram.ts): workers only with a stated count above 0 or a killed worker shown; with no
  // lever's evidence at all, the experiment that decides.
  workers_evidence: ({ facts }) => workersEvidence(facts),
  // Fewer workers first only when nothing points elsewhere (levers/workers.ts): host RAM that rises, a frame that keeps
  // every batch, workers already tried or at most one, a worker that exited in a container (its /dev/shm).
  workers_first: ({ facts }) => workersFirst(facts),
  workers_not_lever_tried: ({ facts }) => workersNotLever(facts) && facts.workersTried !== undefined,
  workers_not_lever_few: ({ facts }) => workersNotLever(facts) && facts.workersTried === undefined,
  host_kept_reference: ({ facts }) => facts.keptReference !== undefined && facts.loaderCollected === undefined,
  host_ram_grows: ({ facts }) => workersBlock(facts) === 'growth' && facts.keptReference === undefined && facts.hostGrowthCjk !== true,
  host_ram_grows_unquoted: ({ facts }) => workersBlock(facts) === 'growth' && facts.keptReference === undefined && facts.hostGrowthCjk === true,
  loader_collected: ({ facts }) => facts.loaderCollected !== undefined,
  worker_exit_in_container: ({ facts }) => workersBlock(facts) === 'container_shm',
  // The experiment that decides runs without workers: where the paste already runs with 0, say so and watch the main process.
  host_lever_unstated: ({ facts }) => hostLeverUnstated(facts) && facts.workers !== 0,
  host_lever_unstated_workers_zero: ({ facts }) => hostLeverUnstated(facts) && facts.workers === 0,
  // JAX's allocator preallocates a pool (XLA_PYTHON_CLIENT_MEM_FRACTION): nvidia-smi shows the pool, not the arrays.
  tool_jax: ({ facts }) => facts.tool === 'jax',
  // An nvidia-smi reading at JAX's preallocated share of the card: 0.75 by default (0.9 before jax 0.2.9, and where
  // XLA_PYTHON_CLIENT_PREALLOCATE is ignored), within the driver's and context's few percent.
  gpu_reading_jax_pool: ({ readings }) =>
    readings.gpus.some((g) => {
      if (!g.memoryUsedMiB || !g.memoryTotalMiB) return false;
      const share = g.memoryUsedMiB / g.memoryTotalMiB;
      return (share >= 0.72 && share <= 0.8) || (share >= 0.87 && share <= 0.93);
    }),
  // What llama.cpp's failed CUDA buffer was for (stack-figures.ts): each has its own lever.
  ggml_cuda_weights: ({ facts }) => facts.ggmlCudaPurpose === 'weights',
  ggml_cuda_kv: ({ facts }) => facts.ggmlCudaPurpose === 'kv_cache',
  ggml_cuda_compute: ({ facts }) => facts.ggmlCudaPurpose === 'compute',
  // Where the job runs (environment.ts): a hosted notebook's GPU is its own; MPS and old or Windows PyTorch lack CUDA's levers.
  env_notebook: ({ facts }) => facts.environment?.notebook !== undefined,
  not_env_notebook: ({ facts }) => facts.environment?.notebook === undefined,
  env_mps: ({ facts }) => facts.environment?.accelerator === 'mps',
  env_tpu: ({ facts }) => facts.environment?.accelerator === 'tpu',
  not_env_tpu: ({ facts }) => facts.environment?.accelerator !== 'tpu',
  env_windows: ({ facts }) => facts.environment?.os === 'windows',
  not_env_windows: ({ facts }) => facts.environment?.os !== 'windows',
  expandable_supported: ({ facts }) => expandableSegmentsAvailable(facts.environment),
  // Ray's memory monitor killed a task for the node's RAM (stack-figures.ts): Ray's own knobs, not workers or the GPU.
  ray_memory_monitor: ({ facts }) => facts.rayMonitor !== undefined,
  // The weights alone, in the fp32 the log states or its failed request shows, do not fit; in half precision they would (levers/budget.ts).
  static_fp32_weights: ({ facts }) => fp32WeightsOverCard(facts),
  expandable_unsupported: ({ facts }) => !expandableSegmentsAvailable(facts.environment),
  // Mixed precision changes nothing for a run already in half precision or quantized.
  amp_would_help: ({ facts }) =>
    !facts.inference &&
    !facts.generating &&
    facts.amp !== true &&
    !(facts.ampDefaultOn && facts.amp !== false) &&
    !(facts.dtype !== undefined && HALF_OR_LESS.has(facts.dtype)),
  inference_tool: ({ facts }) => facts.inference === true,
  // Generation or a diffusion pipeline ran out, and no serving tool with its own knobs was recognised.
  generating_untooled: ({ facts }) => facts.generating === true && facts.inference !== true,
  // A host kill with no DataLoader workers in the log and a model of ≥ 1B parameters named: the
  // processes' copies of the weights hold host RAM, not loaders.
  host_ram_weights: ({ facts }) => facts.workers === undefined && (facts.paramsB ?? 0) >= 1,
  // DeepSpeed's last announced step was building the optimizer states (CPU offload puts them in RAM).
  deepspeed_optimizer_init: ({ facts }) => /^Before initializing optimizer states/.test(facts.deepspeedPhase ?? ''),
  // The run died while from_pretrained was still reading shards: no batch had been loaded yet.
  // vLLM's own profile: the weights alone over its budget, or a higher utilization that leaves the cache room.
  vllm_weights_exceed_budget: ({ facts }) => facts.vllmProfile !== undefined && facts.vllmProfile.weightsGiB >= facts.vllmProfile.budgetGiB,
  vllm_util_would_fit: ({ facts }) => facts.vllmUtilNeeded !== undefined,
  vllm_util_would_not_fit: ({ facts }) =>
    facts.vllmProfile !== undefined && facts.vllmUtilNeeded === undefined && facts.vllmProfile.weightsGiB < facts.vllmProfile.budgetGiB,
  kv_cache_numbers: ({ facts }) => facts.maxModelLen !== undefined && facts.kvCacheTokens !== undefined,
  weights_loading_incomplete: ({ facts }) => facts.shardsLoadedPct !== undefined && facts.shardsLoadedPct < 100,
  tool_known: ({ facts }) => facts.toolKnobs !== undefined,
  tool_unknown: ({ facts }) => facts.toolKnobs === undefined,
  other_process_holds_memory: ({ facts }) => {
    const held = heldElsewhereMiB(facts);
    if (held !== undefined && facts.totalCapacityMiB !== undefined) return held > Math.max(1536, 0.25 * facts.totalCapacityMiB);
    return (facts.otherProcesses?.length ?? 0) > 1;
  },
  autobatch: ({ facts }) => facts.batch === -1 || facts.autobatch !== undefined,
  // The level the series never goes below again keeps rising (a creep, or saw-tooth on a rising floor).
  memory_series_grows: ({ facts }) => facts.memoryShape === 'growth' || facts.memoryShape === 'sawtooth_rising',
  // Rising inside epochs (or steadily, with no epochs printed): references kept across iterations.
  leak_grows_per_iteration: ({ facts }) => facts.memoryGrowsAt === 'per_iteration' || (facts.memoryGrowsAt === undefined && facts.memoryShape === 'growth'),
  // Rising between epochs, or peaks that come back down to a higher level: what validation leaves behind.
  leak_grows_between_epochs: ({ facts }) => facts.memoryGrowsAt === 'between_epochs' || facts.memoryShape === 'sawtooth_rising',
  cache_not_emptied: ({ facts }) => facts.emptiesCache !== true,
  ranks_share_one_gpu: ({ facts }) => facts.strayContextGpu !== undefined,
  // The last "Caching images" progress line stopped short of 100%: the run died while caching.
  ram_cache_incomplete: ({ facts }) => facts.cacheProgressPct !== undefined && facts.cacheProgressPct < 100,
  memory_series_flat: ({ facts }) => facts.memoryShape === 'flat',
  killed_while_loading: ({ facts }) => facts.killedWhileLoading === true,
  killed_loading_data: ({ facts }) => facts.killedLoadingData === true && facts.killedWhileLoading !== true,
  // Killed while the weights were still loading: shards stopped short, or the report says so.
  weights_loading_killed: ({ facts }) => (facts.shardsLoadedPct !== undefined && facts.shardsLoadedPct < 100) || facts.killedWhileLoading === true,
  // Several epochs ran at the same settings before the card ran out: what fit then and not now grew.
  oom_after_epochs: ({ facts }) => facts.oomAfterEpochs !== undefined && facts.memoryShape !== 'flat',
  // The paste shows training steps or epochs done at these settings before the OOM (levers/progress.ts).
  oom_after_steps: ({ facts }) => oomAfterSteps(facts),
  // The paste shows what growing memory keeps (levers/growth.ts): releasing it is the first lever; else the experiment that finds it.
  kept_reference_shown: ({ facts }) => facts.keptReference !== undefined,
  kept_reference_unshown: ({ facts }) => facts.keptReference === undefined,
  not_oom_after_epochs: ({ facts }) => facts.oomAfterEpochs === undefined || facts.memoryShape === 'flat',
};

export function holds(conditions: Condition[] | undefined, e: Evidence): boolean {
  return (conditions ?? []).every((c) => CONDITION_CHECKS[c](e));
}
