// Who holds the GPU memory when an allocation fails, decided from the OOM message's own numbers before
// any fix is chosen: the fix follows the holder (issue 12). Each verdict carries the arithmetic that
// decided it, so the reply can show it and a reader can check it.
//   other_processes  the device is full and other processes hold a large share of it
//   allocator_cache  reserved − allocated ≥ the request: the bytes exist, not in one block
//   not_capacity     the device reports free ≥ the request: something else limits (device, limit, driver)
//   weights          the model's weights alone (parameters × bytes per dtype) nearly fill the card, or
//                    the allocation failed while the model was being loaded or moved to the GPU
//   optimizer_state  the allocation failed in the optimizer's step (Adam's state is 2 × fp32 parameters)
//   activations      this process holds the card: batch × input size is the lever
import { inferenceWeightsFill } from './levers/reported-load.js';
import { formatMiB } from './fixes/arithmetic.js';
import { t, type Locale } from '../core/i18n.js';
import type { Incident } from './incident/index.js';
import { evalGradsOnStated, evalPlainNoGrad } from './levers/eval.js';
import { fullCardInSnapshot } from './smi-snapshot.js';
import { asyncOwnMiB, listedHolder, ownPlusAskOverCard } from './holder-listed.js';
import { coRuntimePreallocates } from './levers/memory-cap.js';
import { capacityBeforeCache } from './levers/cache-capacity.js';
import { BYTES_PER_PARAM, weightsMiB } from './weights-size.js';

export type Holder = 'allocator_cache' | 'not_capacity' | 'other_processes' | 'weights' | 'optimizer_state' | 'activations';
export interface HolderVerdict {
  holder: Holder;
  /** The arithmetic behind the verdict, in words and numbers from the log (in the asker's language). */
  why: string;
}

export { weightsMiB } from './weights-size.js';

/** Memory this process's allocator holds but has not handed out. */
export function idleCacheMiB(f: Incident): number | undefined {
  if (f.figures.reservedUnallocatedMiB !== undefined) return f.figures.reservedUnallocatedMiB;
  if (f.figures.reservedMiB !== undefined && f.figures.allocatedMiB !== undefined) return Math.max(0, f.figures.reservedMiB - f.figures.allocatedMiB);
  return undefined;
}

/**
 * More than any accelerator has (4 TiB): a counter that wrapped below zero, as Paddle's "127.99 TB memory has been
 * allocated" with 0 B available, not memory this process holds. Such a figure is no evidence of who holds the card.
 */
const WRAPPED_COUNTER_MIB = 4 * 2 ** 20;
const plausible = (mib: number | undefined) => (mib !== undefined && mib < WRAPPED_COUNTER_MIB ? mib : undefined);

/** What this process holds on the device: its own figure, else what its allocator reserved. */
export function thisProcessHolds(f: Incident): number | undefined {
  // "this process has 0 bytes memory in use" next to GiBs allocated: the driver cannot see it (a container), not zero.
  const own = f.figures.thisProcessMiB === 0 && (f.figures.allocatedMiB ?? 0) > 0 ? undefined : f.figures.thisProcessMiB;
  const allocated = plausible(f.figures.allocatedMiB);
  return (
    own ?? plausible(f.figures.reservedMiB) ?? (allocated !== undefined ? allocated + (f.figures.reservedUnallocatedMiB ?? 0) : undefined) ?? asyncOwnMiB(f)
  );
}

const MiB = formatMiB;
// Outside memory this process's own CUDA context and libraries cannot explain: over 2 GiB (or a quarter) on a big card;
// under 4 GiB over half the card and over 1 GiB (a 2 GiB card never passes 2 GiB; a 1 GiB card's ~0.5 GiB context must not).
const outsideFloorMiB = (total: number) => (total < 4096 ? Math.max(1024, 0.5 * total) : Math.max(2048, 0.25 * total));
/** Weights that take this share of the card leave no room for anything else: they are the holder. */
const WEIGHTS_FILL = 0.85;
/** Training needs room for activations (and, without LoRA, gradients and optimizer state) beside the weights: weights over 70% of the card leave too little. */
const ADAPTER_BASE_FILL = 0.7;

export function whoHoldsMemory(f: Incident, loc?: Locale): HolderVerdict | undefined {
  const tried = f.figures.triedAllocMiB;
  const total = f.figures.totalCapacityMiB ?? f.card.gpuMemoryMiB ?? f.card.statedGpuMemoryMiB ?? f.card.gpuModelMemoryMiB;
  const idle = idleCacheMiB(f);
  // The model's weights as the log sizes them (parameters × bytes per dtype), when it names a size.
  // Per card: tensor parallelism (--tensor-parallel-size N) puts 1/N of them on each GPU.
  const weights = f.model.paramsB !== undefined ? weightsMiB(f.model.paramsB, f.model.dtype) / (f.stack.vllmTp ?? 1) : undefined;
  const mine = thisProcessHolds(f);
  const others = (f.processes.otherProcesses ?? []).reduce((s, p) => s + p.memoryMiB, 0);
  // A served model whose weights (over its tensor-parallel GPUs) exceed the whole card: no one's memory freed makes room.
  if (f.stack.servedWeights !== undefined && weights !== undefined && total !== undefined) {
    const vars = { params: f.model.paramsB!, bytes: BYTES_PER_PARAM[f.model.dtype ?? 'fp16'] ?? 2, dtype: f.model.dtype ?? t(loc, 'holder.why.dtypeAssumed') };
    return { holder: 'weights', why: t(loc, 'holder.why.weights', { ...vars, weights: MiB(weights), total: MiB(total) }) };
  }
  // Before this process allocated anything, part of the card was already taken: that is someone else's.
  if (f.figures.startupFreeMiB !== undefined && total !== undefined && total - f.figures.startupFreeMiB >= 1024) {
    return {
      holder: 'other_processes',
      why: t(loc, 'holder.why.startupFree', { free: MiB(f.figures.startupFreeMiB), total: MiB(total), held: MiB(total - f.figures.startupFreeMiB) }),
    };
  }
  // Processes the message names (this one excluded) holding a material share: freeing them is the lever.
  // Not when this process itself holds over four times what they do: freeing theirs would not make room.
  if (
    total !== undefined &&
    others >= Math.max(1024, 0.1 * total) &&
    (tried === undefined || others >= tried) &&
    (mine === undefined || others >= 0.25 * mine)
  ) {
    return {
      holder: 'other_processes',
      why: t(loc, 'holder.why.others', {
        others: MiB(others),
        total: MiB(total),
        list: f.processes.otherProcesses!.map((p) => `pid ${p.pid}: ${MiB(p.memoryMiB)}`).join(', '),
        mine: mine !== undefined ? t(loc, 'holder.why.othersMine', { mine: MiB(mine) }) : '',
      }),
    };
  }
  // No figure in the error at all, and the report names another holder in words (levers/reported-holder.ts): that
  // sentence is the only evidence of who holds the card. Any figure in the error is read above and decides first.
  const anyFigure = [tried, f.figures.freeMiB, f.figures.allocatedMiB, f.figures.reservedMiB, f.figures.totalCapacityMiB, f.figures.thisProcessMiB].some(
    (v) => v !== undefined,
  );
  if (f.processes.reportedHolder !== undefined && !anyFigure) {
    return { holder: 'other_processes', why: t(loc, 'holder.why.reported', { quote: f.processes.reportedHolder }) };
  }
  // Most of the card outside PyTorch with a second runtime named (XLA, JAX, TF): that runtime's preallocation, same process.
  if (coRuntimePreallocates(f) && total !== undefined && mine !== undefined) {
    const outside = MiB(total - (f.figures.freeMiB ?? 0) - mine);
    return { holder: 'not_capacity', why: t(loc, 'holder.why.coRuntime', { runtime: f.stack.coRuntime!, outside, total: MiB(total), mine: MiB(mine) }) };
  }
  if (total !== undefined && mine !== undefined) {
    const elsewhere = Math.max(others, total - (f.figures.freeMiB ?? 0) - mine);
    // When the driver could not see this process ("0 bytes"), "outside it" includes its own non-PyTorch
    // memory (NCCL, CUDA graphs): only most of the card outside is evidence of other processes then.
    const invisible = f.figures.thisProcessMiB === 0;
    if ((f.figures.freeMiB !== undefined || others > 0) && (!invisible || (total !== undefined && elsewhere >= 0.5 * total))) {
      // Others hold over a quarter of the card, and this process little of it or they nearly a third:
      // freeing theirs would let this job fit, whatever its own layout.
      if (elsewhere > outsideFloorMiB(total) && (mine < 0.5 * total || elsewhere >= 0.3 * total) && !ownPlusAskOverCard(mine, tried, total)) {
        const whom = f.processes.otherProcesses?.length
          ? t(loc, 'holder.why.whom', { list: f.processes.otherProcesses.map((p) => `pid ${p.pid}: ${MiB(p.memoryMiB)}`).join(', ') })
          : '';
        return { holder: 'other_processes', why: t(loc, 'holder.why.elsewhere', { total: MiB(total), mine: MiB(mine), elsewhere: MiB(elsewhere), whom }) };
      }
    }
  }
  // CUDA's own out-of-memory (outside PyTorch's allocator) while the model is first moved to the GPU: the
  // context or the first parameters could not be allocated, so the card was full before this job began,
  // unless the weights named in the log are themselves too big for it.
  const weightsTooBig = weights !== undefined && total !== undefined && weights >= WEIGHTS_FILL * total;
  // The coarse phase (five innermost frames) or the traceback's phase (phase.ts) says the model was loading.
  const loading = f.phase.oomPhase === 'load' || f.phase.name === 'load';
  if (f.figures.runtimeOom && loading && !weightsTooBig && f.figures.triedAllocMiB === undefined) {
    return {
      holder: 'other_processes',
      why: t(loc, 'holder.why.runtimeLoad'),
    };
  }
  // CUDA's own out-of-memory with no figure of its own, beside a pasted nvidia-smi / gpustat snapshot where the run's
  // card is nearly full: a failed run's memory is freed when it exits and a run not yet started holds none, so that
  // memory belongs to other processes (smi-snapshot.ts).
  const smiFull = f.figures.runtimeOom && tried === undefined ? fullCardInSnapshot(f.processes.smiCards ?? [], f.figures.gpuIndex) : undefined;
  if (smiFull) {
    return { holder: 'other_processes', why: t(loc, 'holder.why.smiFull', { gpu: smiFull.gpu, used: MiB(smiFull.usedMiB), total: MiB(smiFull.totalMiB) }) };
  }
  const listed = listedHolder(f, loc);
  if (listed) return listed;
  // TensorFlow created its device with under half the card: nearly all that was free as the job started, the rest
  // already held by other processes.
  if (f.figures.tfDeviceMiB !== undefined && total !== undefined && f.figures.tfDeviceMiB < 0.5 * total) {
    return { holder: 'other_processes', why: t(loc, 'holder.why.tfDevice', { device: MiB(f.figures.tfDeviceMiB), total: MiB(total) }) };
  }
  // CUDA's own out-of-memory at the process's first CUDA call (set_device, lazy init): only its context was
  // being created, so other processes (or another container's) filled the card before this job began.
  if (f.figures.runtimeOom && f.phase.oomPhase === 'context' && f.figures.triedAllocMiB === undefined) {
    return { holder: 'other_processes', why: t(loc, 'holder.why.runtimeContext') };
  }
  // A request of under a MiB with nothing free, and no figure for this process: the card had no room at all.
  if (
    tried !== undefined &&
    tried < 1 &&
    f.figures.freeMiB !== undefined &&
    f.figures.freeMiB < 1 &&
    plausible(f.figures.allocatedMiB) === undefined &&
    plausible(f.figures.reservedMiB) === undefined &&
    // (the async backend's own bytes in use: a GiB or more is this process's, not a card full before it began)
    (plausible(f.figures.asyncUsedMiB) ?? 0) < 1024
  ) {
    return {
      holder: 'other_processes',
      why: t(loc, 'holder.why.fullBefore', { tried: MiB(tried), free: MiB(f.figures.freeMiB) }),
    };
  }
  // One request larger than the whole card: this process's own request, which nobody's memory could hold;
  // the headline (an impossible request) and this line say the same, not "its tensors fill the card".
  if (tried !== undefined && total !== undefined && tried > total) {
    return { holder: 'activations', why: t(loc, 'holder.why.overCard', { tried: MiB(tried), total: MiB(total) }) };
  }
  // Clearly more free than asked (checked before the cache: with the bytes free on the device the allocator
  // would have taken a new segment, so its cache's layout is not what failed): equal printed figures ("1.50 GiB free", "Tried to allocate 1.50 GiB")
  // are rounding, not spare memory.
  if (tried !== undefined && f.figures.freeMiB !== undefined && f.figures.freeMiB >= 1.25 * tried && f.figures.freeMiB - tried >= 64) {
    return { holder: 'not_capacity', why: t(loc, 'holder.why.notCapacity', { free: MiB(f.figures.freeMiB), tried: MiB(tried) }) };
  }
  // An evaluation whose forwards keep their graphs (a script's own loop with no no_grad shown, or the report says
  // gradients are on): the card fills with those graphs, and the idle cache beside them, whatever its size, is their
  // churn: kept graphs pin blocks between the freed temporaries, so no_grad removes what splits the cache too; the kept
  // graphs, not the cache's layout, are what failed (levers/eval.ts gives no_grad first). Under no_grad a large idle
  // cache is the allocator's layout again (below).
  if ((evalPlainNoGrad(f) || evalGradsOnStated(f)) && idle !== undefined) {
    return { holder: 'activations', why: t(loc, 'holder.why.evalKeptGraphs', { idle: MiB(idle) }) };
  }
  // The idle cache must cover the request and be a material share of the card (5%; 10% of what this process reserved
  // when the capacity is not printed): a few MiB of slack on a full card is a full card, nor is a "free" within rounding.
  const reserved = f.figures.reservedMiB ?? (f.figures.allocatedMiB !== undefined && idle !== undefined ? f.figures.allocatedMiB + idle : undefined);
  // A few hundred MiB of idle cache is ordinary slack: half a GiB at least (on a big card 5% is over 2 GiB; two GiB is material on any card).
  const material = Math.max(512, Math.min(2048, total !== undefined ? 0.05 * total : reserved !== undefined ? 0.1 * reserved : Infinity));
  // A small cache that only just covers the request does not show fragmentation: its blocks are the
  // request's own neighbours. Below a GiB, it must exceed the request by a quarter.
  const covers = idle !== undefined && tried !== undefined && (idle >= 1024 ? idle >= tried : idle >= 1.25 * tried);
  // A cache of a GiB or more that is many times the request is fragmentation whatever the card's size; a smaller one
  // only when the budget fits (levers/cache-capacity.ts): else capacity, not the layout, is what failed.
  const largeCache = idle !== undefined && tried !== undefined && idle >= 1024 && idle >= 8 * tried;
  if (tried !== undefined && idle !== undefined && idle >= tried && ((covers && idle >= material && !capacityBeforeCache(f)) || largeCache)) {
    const how =
      f.figures.reservedUnallocatedMiB !== undefined
        ? t(loc, 'holder.why.cacheUnallocated', { idle: MiB(idle) })
        : t(loc, 'holder.why.cacheIdle', { reserved: MiB(f.figures.reservedMiB!), allocated: MiB(f.figures.allocatedMiB!), idle: MiB(idle) });
    return { holder: 'allocator_cache', why: t(loc, 'holder.why.fragmented', { how, tried: MiB(tried) }) };
  }
  // XLA sized the whole program: arguments (parameters and inputs) that alone nearly fill the device are
  // the weights; otherwise the program's temporaries (activations) are what does not fit.
  if (f.figures.xlaUsedMiB !== undefined && total !== undefined && f.figures.xlaUsedMiB > total) {
    const args = f.figures.xlaArgumentsMiB;
    if (args !== undefined && args >= 0.8 * total) {
      return {
        holder: 'weights',
        why: t(loc, 'holder.why.xlaWeights', { args: MiB(args), total: MiB(total) }),
      };
    }
    if (f.figures.xlaProgramMiB !== undefined && f.figures.xlaProgramMiB >= (args ?? 0)) {
      const besides = args ? t(loc, 'holder.why.xlaBesides', { args: MiB(args) }) : '';
      return {
        holder: 'activations',
        why: t(loc, 'holder.why.xlaProgram', { program: MiB(f.figures.xlaProgramMiB), besides, used: MiB(f.figures.xlaUsedMiB), total: MiB(total) }),
      };
    }
  }
  // A non-PyTorch stack's own figures (stack-figures.ts) say who holds it in that stack's terms.
  const stack = stackHolder(f, loc);
  if (stack) return stack;
  // vLLM sized its own budget: the weights against it, else what the profiled step and the cache need.
  if (f.stack.vllmProfile) {
    const p = f.stack.vllmProfile;
    const g = (v: number) => `${v.toFixed(2)} GiB`;
    const vars = { budget: g(p.budgetGiB), weights: g(p.weightsGiB), peak: g(p.peakGiB), kv: g(p.kvGiB) };
    return p.weightsGiB >= p.budgetGiB
      ? { holder: 'weights', why: t(loc, 'holder.why.vllmWeights', vars) }
      : { holder: 'activations', why: t(loc, 'holder.why.vllmPeak', vars) };
  }
  if (loading) {
    const size =
      f.model.paramsB !== undefined
        ? t(loc, 'holder.why.loadSize', { params: f.model.paramsB, weights: MiB(weightsMiB(f.model.paramsB, f.model.dtype)), dtype: f.model.dtype ?? 'fp16' })
        : '';
    return {
      holder: 'weights',
      why: t(loc, 'holder.why.load', { size, card: total !== undefined ? t(loc, 'holder.why.card', { total: MiB(total) }) : '' }),
    };
  }
  if (f.phase.oomPhase === 'optimizer' || f.phase.name === 'optimizer') {
    return {
      holder: 'optimizer_state',
      why: t(loc, 'holder.why.optimizer', { card: total !== undefined ? t(loc, 'holder.why.card', { total: MiB(total) }) : '' }),
    };
  }
  if ((f.phase.oomPhase === 'backward' || f.phase.oomPhase === 'forward') && (mine === undefined || total === undefined)) {
    return {
      holder: 'activations',
      why: t(loc, f.phase.oomPhase === 'backward' ? 'holder.why.backward' : 'holder.why.forward'),
    };
  }
  // llama.cpp reports the weights it put on the card: most of the card leaves nothing for the KV cache.
  if (f.stack.ggmlGpuWeightsMiB !== undefined && total !== undefined && f.stack.ggmlGpuWeightsMiB >= WEIGHTS_FILL * total) {
    return { holder: 'weights', why: t(loc, 'holder.why.ggmlWeights', { weights: MiB(f.stack.ggmlGpuWeightsMiB), total: MiB(total) }) };
  }
  // Parameters offloaded to the host (ZeRO-3 offload_param, Gemini, FSDP offload_params) are not on the card.
  const onCard = f.run.paramsOffloaded === undefined;
  if (f.model.paramsB !== undefined && weights !== undefined && total !== undefined && onCard) {
    if (weights >= WEIGHTS_FILL * total) {
      const dtype = f.model.dtype ?? t(loc, 'holder.why.dtypeAssumed');
      return {
        holder: 'weights',
        why: t(loc, 'holder.why.weights', {
          params: f.model.paramsB,
          bytes: BYTES_PER_PARAM[f.model.dtype ?? 'fp16'] ?? 2,
          dtype,
          weights: MiB(weights),
          total: MiB(total),
        }),
      };
    }
  }
  // Training keeps the whole model on the card (LoRA/PEFT its frozen base): when the weights take most of
  // it, they are what to shrink (a 4-bit base, QLoRA), not the batch.
  if (f.model.paramsB !== undefined && weights !== undefined && total !== undefined && onCard && f.run.training && weights >= ADAPTER_BASE_FILL * total) {
    return {
      holder: 'weights',
      why: t(loc, f.run.adapterTraining ? 'holder.why.adapterBase' : 'holder.why.trainBase', {
        params: f.model.paramsB,
        dtype: f.model.dtype ?? 'fp16',
        weights: MiB(weights),
        total: MiB(total),
      }),
    };
  }
  // ZeRO-0/1/2 shard the optimizer state (and gradients) but not the weights: a full fine-tune of a large
  // model keeps all of them, in fp16 plus what stage 1/2 leave, on every GPU. ZeRO-3 shards those too.
  if (
    f.model.paramsB !== undefined &&
    f.model.paramsB >= 7 &&
    f.run.training &&
    !f.run.adapterTraining &&
    f.distributed.zeroStage !== undefined &&
    f.distributed.zeroStage < 3
  ) {
    return {
      holder: 'optimizer_state',
      why: t(loc, 'holder.why.zeroReplicated', { stage: f.distributed.zeroStage, params: f.model.paramsB, weights: MiB(weightsMiB(f.model.paramsB, 'fp16')) }),
    };
  }
  // Full fine-tuning with Adam in mixed precision keeps ~16 bytes per parameter (fp16 weights and
  // gradients, fp32 master weights and two moments); LoRA/PEFT trains a tiny fraction of them.
  if (f.model.paramsB !== undefined && total !== undefined && f.run.training && !f.run.adapterTraining && onCard) {
    const state = (f.model.paramsB * 1e9 * 16) / 2 ** 20;
    if (state >= WEIGHTS_FILL * total) {
      return {
        holder: 'optimizer_state',
        why: t(loc, 'holder.why.fullFinetune', { params: f.model.paramsB, state: MiB(state), total: MiB(total) }),
      };
    }
  }
  // Outside training, said to be inference: nothing per step accumulates, so most of the card held is the weights.
  if (inferenceWeightsFill(f, mine, total)) {
    return { holder: 'weights', why: t(loc, 'holder.why.inferenceWeights', { mine: MiB(mine!), total: MiB(total!), said: f.run.inferenceSaid! }) };
  }
  if (mine !== undefined && total !== undefined) {
    return {
      holder: 'activations',
      why: t(loc, 'holder.why.own', {
        mine: MiB(mine),
        total: MiB(total),
        more: tried !== undefined ? t(loc, 'holder.why.ownMore', { tried: MiB(tried) }) : '',
      }),
    };
  }
  if (tried !== undefined && f.figures.freeMiB !== undefined) {
    return { holder: 'activations', why: t(loc, 'holder.why.freeLess', { free: MiB(f.figures.freeMiB), tried: MiB(tried) }) };
  }
  // TensorFlow named the tensor: 3+ dimensions led by the batch are an activation of this step.
  if (f.run.batchFromShape !== undefined) {
    return {
      holder: 'activations',
      why: t(loc, 'holder.why.tfShape', { shape: f.run.batchFromShape, batch: String(f.run.batch) }),
    };
  }
  return undefined;
}

/** A TensorFlow allocator limit under this is smaller than any card a model trains on minus its context. */
const BFC_TINY_LIMIT_MIB = 512;

/**
 * The holder from a non-PyTorch stack's own format: TF/XLA's BFC Stats (InUse against its Limit), what
 * llama.cpp's failed CUDA buffer was for, TGI's prefill warmup, vLLM's zero KV-cache blocks.
 */
function stackHolder(f: Incident, loc?: Locale): HolderVerdict | undefined {
  if (f.stack.ggmlCudaPurpose !== undefined && f.stack.ggmlCudaAskMiB !== undefined) {
    const vars = {
      device: f.figures.gpuIndex ?? 0,
      ask: MiB(f.stack.ggmlCudaAskMiB),
      ctx: f.stack.ggmlCtxStated ?? 'n_ctx = ?',
      layers: f.stack.ggmlLayers ? t(loc, 'holder.why.ggmlLayers', { layers: f.stack.ggmlLayers }) : '',
    };
    if (f.stack.ggmlCudaPurpose === 'weights') return { holder: 'weights', why: t(loc, 'holder.why.ggmlCudaWeights', vars) };
    return { holder: 'activations', why: t(loc, f.stack.ggmlCudaPurpose === 'kv_cache' ? 'holder.why.ggmlCudaKv' : 'holder.why.ggmlCudaCompute', vars) };
  }
  // The BFC allocator is full: what it holds and the request exceed the limit it was given.
  const {
    stack: { bfcAllocator: allocator, bfcLimitMiB: limit, bfcInUseMiB: inUse },
    figures: { triedAllocMiB: tried },
  } = f;
  if (allocator !== undefined && limit !== undefined && inUse !== undefined && tried !== undefined && inUse + tried > limit) {
    // TensorFlow sizes its allocator from the memory free when the session starts: a limit far below any card's (and
    // below a tenth of this one's) means the card was nearly full before this process began.
    const total = f.figures.totalCapacityMiB ?? f.card.gpuMemoryMiB ?? f.card.statedGpuMemoryMiB;
    if (limit < BFC_TINY_LIMIT_MIB && (total === undefined || limit < 0.1 * total))
      return { holder: 'other_processes', why: t(loc, 'holder.why.bfcTinyLimit', { allocator, limit: MiB(limit) }) };
    return {
      holder: 'activations',
      why: t(loc, 'holder.why.bfc', { allocator, inUse: MiB(inUse), limit: MiB(limit), maxInUse: MiB(f.stack.bfcMaxInUseMiB ?? inUse), tried: MiB(tried) }),
    };
  }
  if (f.stack.prefillTokens !== undefined) return { holder: 'activations', why: t(loc, 'holder.why.tgiPrefill', { tokens: f.stack.prefillTokens }) };
  if (f.stack.vllmGpuBlocks === 0 && f.stack.vllmProfile === undefined) {
    const util = f.stack.vllmUtil !== undefined ? String(f.stack.vllmUtil) : t(loc, 'holder.why.vllmDefaultUtil');
    return { holder: 'weights', why: t(loc, 'holder.why.vllmNoBlocks', { util }) };
  }
  return undefined;
}
