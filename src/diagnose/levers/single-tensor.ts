// One failed request that is a large share of the card (issue 23): a tensor of half the card or more is one layer's
// output over whole inputs, an attention score matrix (batch × heads × L² × bytes), a feature map at full resolution or
// a logits matrix (tokens × vocabulary), and it grows with the square of the sequence length or with the input's
// pixels. At a batch of 1 or 2, or none stated, the batch cannot explain a single tensor of that size: the input's
// size is the first lever (a shorter sequence or context, a smaller image, tiles or chunks, attention that never
// materialises L²). Above twice the card the absurd-request rule answers instead; an allocator cache that covers the
// request is fragmentation (holder.ts), and another holder is checked beside it (conditions.ts).
import { formatMiB } from '../fixes/arithmetic.js';
import { cardMiB, staticOverCard } from './static-fit.js';
import { oomAfterSteps } from './progress.js';
import type { Incident, PhasePart } from '../incident/index.js';

/** A single request of at least this share of the card's total is one tensor over whole inputs. */
export const SINGLE_TENSOR_SHARE = 0.5;
/** Above this many times the card the request is absurd (conditions.ts isAbsurd): that rule answers. */
const ABSURD_TIMES = 2;
const SMALL_BATCH = 2;
const INPUT_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'backward', 'generate', 'eval']);

const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';

/** The failed request is one tensor of at least SINGLE_TENSOR_SHARE of the card, at a batch of 1-2 or none stated. */
export function singleTensorInput(f: Incident): boolean {
  const tried = f.figures.triedAllocMiB;
  const total = f.figures.totalCapacityMiB;
  if (tried === undefined || total === undefined || tried < SINGLE_TENSOR_SHARE * total || tried > ABSURD_TIMES * total) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  if (!INPUT_PHASES.has(f.phase.name)) return false;
  return !grows(f) && !oomAfterSteps(f) && !staticOverCard(f);
}

/** {singleTensorWhy}: the request against the card, as the reply quotes it. */
export function singleTensorWords(f: Incident): void {
  if (!singleTensorInput(f)) return;
  const tried = f.figures.triedAllocMiB!;
  const total = f.figures.totalCapacityMiB!;
  f.input.singleTensorWhy = `${formatMiB(tried)} / ${formatMiB(total)}, ${Math.round((100 * tried) / total)}%`;
}

/**
 * A failed activation tensor whose leading dimension is the batch (TensorFlow prints its shape): one sample's slice of it
 * is the tensor over that batch. A single layer's output of at least SAMPLE_SHARE of the card for ONE sample leaves no
 * batch that fits, since a forward keeps several maps of that size (each layer at that resolution, and backward's
 * copies): at batch 1 the input's size is still too large. With the card unknown, SAMPLE_UNKNOWN_CARD_MIB stands for a
 * quarter of a 16 GB card, the usual size of the cards such pastes come from (Colab's T4, consumer cards).
 */
const SAMPLE_SHARE = 0.25;
const SAMPLE_UNKNOWN_CARD_MIB = 4096;

/** The failed tensor's one-sample share, when it alone rules every batch out; undefined otherwise. */
export function sampleTensorMiB(f: Incident): number | undefined {
  const tensor = f.stack.tfTensorMiB;
  const batch = f.run.batch;
  if (f.run.batchFromShape === undefined || tensor === undefined || batch === undefined || batch < 1) return undefined;
  const sample = tensor / batch;
  const card = cardMiB(f);
  return sample >= (card !== undefined ? SAMPLE_SHARE * card : SAMPLE_UNKNOWN_CARD_MIB) ? sample : undefined;
}

/** One sample's slice of the failed tensor rules out every batch, in a phase that runs inputs, nothing growing. */
export function sampleTensorInput(f: Incident): boolean {
  return sampleTensorMiB(f) !== undefined && INPUT_PHASES.has(f.phase.name) && !grows(f) && !oomAfterSteps(f) && !staticOverCard(f);
}

/** {sampleTensorWhy}: the failed tensor over its batch, as the reply quotes it. */
export function sampleTensorWords(f: Incident): void {
  if (!sampleTensorInput(f)) return;
  f.input.sampleTensorWhy = `${f.run.batchFromShape}: ${formatMiB(f.stack.tfTensorMiB!)} / ${f.run.batch} = ${formatMiB(sampleTensorMiB(f)!)}`;
}
