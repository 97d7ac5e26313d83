// Which lever leads when the batch is already small or not stated and no lever's own preconditions hold (issue 23).
// The replies then give the experiment that decides, and its branches (another process, the static part, one input)
// are read in the order they are written: the first lever named is the one users pull first. Where the paste states
// a full fine-tune (no LoRA or other adapters), the static part is the first suspect: full training keeps the
// weights, their gradients and the AdamW state on the card before any input (about 16 bytes per parameter, the ZeRO
// paper's accounting), which fills a 24-80 GB card for any model of a few billion parameters, and no batch or
// input size changes it. So sharding and offloading lead, with the check that confirms it beside them.
// The budget decides instead wherever the paste sizes the model (static-order.ts, levers.ts): a model it sizes
// whose static part takes less than STATIC_SHARE of the card gets the usual experiment.
import { cardMiB, staticMiB } from './static-fit.js';
import { oomAfterSteps } from './progress.js';
import type { Incident, PhasePart } from '../incident/index.js';

/** A stated batch of this size or less is no lever beside a full fine-tune's static part. */
const SMALL_BATCH = 2;
/**
 * A sized static part under this share of the card leaves room for the inputs: the experiment decides then. At or
 * above it, at a batch of 1 or 2, what is left for one input's activations is a few GiB at most.
 */
const STATIC_SHARE = 0.5;
/** Phases where the static part is on the card: the model's move or setup, a training step, the optimizer's step. */
const STATIC_PHASES = new Set<PhasePart['name']>([undefined, 'load', 'forward', 'backward', 'optimizer']);

const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';
const smallOrUnstatedBatch = (f: Incident) =>
  f.run.batch === undefined || f.run.batchDefaultOf !== undefined || (f.run.batch >= 1 && f.run.batch <= SMALL_BATCH);

/** The paste sizes the model and the card, and the static part is well under the card: the budget says it fits. */
function staticSizedSmall(f: Incident): boolean {
  const need = staticMiB(f);
  const card = cardMiB(f);
  if (need === undefined) return false;
  return card !== undefined ? need < STATIC_SHARE * card : f.model.paramsB! < 1;
}

/**
 * A stated full fine-tune in a training step at a batch of 1 or 2 or none stated, no growth and no steps done at these
 * settings, whose static part the paste does not size as small: sharding and offloading the static part lead.
 */
export function fullTuneStaticFirst(f: Incident): boolean {
  if (f.run.training !== true || f.run.fullTrainingStated !== true || f.run.adapterTraining || f.run.inference || f.phase.generating) return false;
  if (!STATIC_PHASES.has(f.phase.name) || !smallOrUnstatedBatch(f)) return false;
  return !grows(f) && !oomAfterSteps(f) && !staticSizedSmall(f);
}
