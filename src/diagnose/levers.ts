// Levers with preconditions (issue 23): a fix is offered first only when the log holds the evidence it
// needs. The batch is the lever of a training step's activations, so halving it needs a training
// forward/backward, no growth that says something accumulates, and a static part (weights, and for
// full training gradients and optimizer state) that fits the card on its own. Each phase has its own
// lever: evaluation's gathering or graphs, the load's dtype, a checkpoint's map_location, a collective's
// device. Pure functions over the facts; conditions.ts names them for the rules.
import { formatMiB } from './fixes/arithmetic.js';
import { t, type Locale } from '../core/i18n.js';
import { evalLeverWords } from './levers/eval.js';
import { oomAfterSteps } from './levers/progress.js';
import { zeroRanksWords, zeroWhy } from './levers/zero.js';
import { sampleTensorWords, singleTensorWords } from './levers/single-tensor.js';
import type { Incident, PhasePart } from './incident/index.js';
import { FULL_TRAINING_BYTES_PER_PARAM, cardMiB, staticCeiling, staticMiB, staticOverCard } from './levers/static-fit.js';

export { cardMiB, staticCeiling, staticMiB, staticOverCard, type StaticCeiling } from './levers/static-fit.js';

export type BatchBlock = 'phase' | 'growth' | 'after_steps' | 'static_over_card' | 'inference';

export interface BatchLever {
  holds: boolean;
  blockedBy?: BatchBlock;
}

/** Phases whose memory grows with the training batch; none known (no frames) is judged by the other evidence. */
const BATCH_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'backward']);
const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';

/** Whether halving the training batch is a lever this log supports, and if not, the first reason why not. */
export function batchLever(f: Incident): BatchLever {
  if (f.run.inference || f.phase.generating) return { holds: false, blockedBy: 'inference' };
  if (!BATCH_PHASES.has(f.phase.name)) return { holds: false, blockedBy: 'phase' };
  if (grows(f)) return { holds: false, blockedBy: 'growth' };
  // Steps ran at this batch before the OOM: the step fit, so the batch is not what changed (progress.ts).
  if (oomAfterSteps(f)) return { holds: false, blockedBy: 'after_steps' };
  if (staticOverCard(f)) return { holds: false, blockedBy: 'static_over_card' };
  return { holds: true };
}

/**
 * The batch is already 1 in a training step whose other preconditions hold (a model under 1B: larger ones
 * get the sequence and sharding levers): the log cannot tell the static part from one input's activations,
 * so the reply gives the experiment that does.
 */
export const batchAtOne = (f: Incident) => f.run.batch === 1 && f.run.batchDefaultOf === undefined && (f.model.paramsB ?? 0) < 1 && batchLever(f).holds;

/** The OOM message gave any memory figure (requested, free, allocated, reserved, the card, this process). */
export const hasMemoryFigures = (f: Incident) =>
  [f.figures.triedAllocMiB, f.figures.freeMiB, f.figures.allocatedMiB, f.figures.reservedMiB, f.figures.totalCapacityMiB, f.figures.thisProcessMiB].some(
    (v) => v !== undefined,
  );

/** HF Trainer ran out while concatenating predictions on the GPU: eval_accumulation_steps moves them off it. */
export const evalGathers = (f: Incident) => f.phase.name === 'eval' && f.phase.gathersPredictions === true;
/** Lightning's validation runs without gradients too: what validation_step keeps, or the val batch. */
export const evalLightning = (f: Incident) => f.phase.name === 'eval' && f.phase.evalLoop === 'lightning';
/**
 * The model load ran out and the log says the weights load in fp32 (stated, or read from the failed
 * request): half precision is the first lever. An unstated dtype is no evidence: the weights lever
 * (quantize, split, offload) answers then.
 */
export const loadInFp32 = (f: Incident) => (f.phase.name === 'load' || (f.phase.name === undefined && f.phase.oomPhase === 'load')) && f.model.dtype === 'fp32';
export const checkpointLoad = (f: Incident) => f.phase.name === 'checkpoint';
export const collectiveOom = (f: Incident) => f.phase.name === 'collective';
/** Neither the batch nor a phase lever has evidence: the reply gives the experiment that decides. */
export const batchUnstated = (f: Incident) => f.run.batch === undefined && f.run.autobatch === undefined;

/** Bytes per parameter of the static part, as the reply states it. */
function staticBytesPerParam(f: Incident): number {
  if (f.run.training && !f.run.adapterTraining) return FULL_TRAINING_BYTES_PER_PARAM;
  return { fp32: 4, fp16: 2, bf16: 2, int8: 1, int4: 0.5 }[f.model.dtype ?? 'fp16'] ?? 2;
}

/** The words the lever advice quotes ({dtypeWhy}, {staticWhy}), from the facts that justify it. */
export function leverWords(f: Incident, loc: Locale | undefined): void {
  evalLeverWords(f, loc);
  singleTensorWords(f);
  sampleTensorWords(f);
  if (loadInFp32(f))
    f.model.dtypeWhy = f.model.dtypeEvidence ? t(loc, 'lever.dtypeWhy.matrix', { matrix: f.model.dtypeEvidence }) : t(loc, 'lever.dtypeWhy.fp32');
  const zero = zeroWhy(f, loc);
  if (staticOverCard(f)) {
    const ceiling = staticCeiling(f)!;
    const against = ceiling.basis === 'family' ? t(loc, 'lever.ceiling.family', { card: formatMiB(ceiling.mib) }) : formatMiB(ceiling.mib);
    f.budget.staticWhy = zero ? `${zero} ≥ ${against}` : `${f.model.paramsB}B × ${staticBytesPerParam(f)} B/param ≈ ${formatMiB(staticMiB(f)!)} ≥ ${against}`;
  } else if (staticDominates(f)) {
    const share = Math.round((100 * staticMiB(f)!) / cardMiB(f)!);
    const part = zero ?? `${f.model.paramsB}B × ${staticBytesPerParam(f)} B/param ≈ ${formatMiB(staticMiB(f)!)}`;
    f.budget.staticShareWhy = t(loc, 'lever.staticShare', { part, card: formatMiB(cardMiB(f)!), share });
  }
  zeroRanksWords(f, cardMiB(f), loc);
}

/**
 * The static part takes at least this share of the card: at batch 1 what is left for one input's activations,
 * the CUDA context and the allocator's workspace is a few GiB at most, so the static part is the lever.
 */
const STATIC_DOMINATES = 0.75;

/** Training whose static part (weights, gradients, optimizer state; per GPU under ZeRO) takes most of the card but not all of it. */
export function staticDominates(f: Incident): boolean {
  const need = staticMiB(f);
  const card = cardMiB(f);
  return f.run.training === true && need !== undefined && card !== undefined && need >= STATIC_DOMINATES * card && need < card;
}

/** The batch the log states (not a tool's default) is already 1: halving it is no lever. */
const statedBatchOne = (f: Incident) => f.run.batch === 1 && f.run.batchDefaultOf === undefined;

/**
 * At a stated batch of this size or less, halving it frees at most half of what the activations take beside a
 * static part of >= 3/4 of the card: the static part is the lever (a batch of 2 is one halving from batch 1).
 */
const SMALL_STATED_BATCH = 2;
const statedBatchSmall = (f: Incident) =>
  f.run.batch !== undefined && f.run.batch >= 1 && f.run.batch <= SMALL_STATED_BATCH && f.run.batchDefaultOf === undefined;

/** A stated batch of 1 or 2 and the static part takes most of the card: shrink the static part (shard, offload, 8-bit optimizer, LoRA). */
export const batchOneStaticDominates = (f: Incident) => statedBatchSmall(f) && staticDominates(f);

/**
 * Batch 1 in full training under ZeRO-1/2, which keep the whole fp16 weights on every GPU: what is left to shrink
 * is the static part (ZeRO-3, offload, more GPUs), whether or not the log sizes the model.
 */
export const batchOneZeroBelow3 = (f: Incident) =>
  statedBatchOne(f) &&
  f.run.training === true &&
  !f.run.adapterTraining &&
  f.distributed.zeroStage !== undefined &&
  f.distributed.zeroStage > 0 &&
  f.distributed.zeroStage < 3;
