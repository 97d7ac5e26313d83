// Quantize, or a smaller model, as the first lever (issue 23, the static part of the budget). When a run that
// keeps no optimizer state for the whole model (inference, generation, a load, or adapter training: LoRA keeps its
// base frozen) holds a model whose 16-bit weights alone take most of the card (parameters × 2 bytes, the size read
// from the model's name), no batch or input size can make room: only fewer bytes per weight (8- or 4-bit,
// QLoRA's 4-bit base) or fewer weights do. Full training is not this lever: its gradients and optimizer state
// (~16 B/param) are the bulk (levers.ts). fp32 weights that would fit in half precision get the dtype first
// (levers/budget.ts): half precision is the cheaper change and sure to help there.
import { weightsMiB } from '../weights-size.js';
import { formatMiB } from '../fixes/arithmetic.js';
import { cardMiB } from './static-fit.js';
import { fp32WeightsOverCard } from './budget.js';
import { t, type Locale } from '../../core/i18n.js';
import type { Incident, PhasePart } from '../incident/index.js';

/** 16-bit weights that take this share of the card leave no room for one input's activations or cache. */
const WEIGHTS_FILL = 0.85;
/** Phases that hold the weights and one input: a load, a generation, or an adapter's forward/backward. */
const WEIGHT_PHASES = new Set<PhasePart['name']>([undefined, 'load', 'generate', 'forward', 'backward']);

/** The weights the run holds now: 16-bit unless the paste loads them in 8 bits already (fp32 counts as its 16-bit size). */
const heldBits = (f: Incident): 16 | 8 => (f.model.dtype === 'int8' ? 8 : 16);

/** Inference or adapter training of a model whose weights (at 16 or the stated 8 bits) fill the card: fewer bits per weight first. */
export function quantizeFirst(f: Incident): boolean {
  if (f.run.training === true && !f.run.adapterTraining) return false;
  if (!WEIGHT_PHASES.has(f.phase.name) || f.model.paramsB === undefined || f.model.dtype === 'int4') return false;
  const card = cardMiB(f);
  if (card === undefined || fp32WeightsOverCard(f)) return false;
  // Tensor parallelism (vLLM's --tensor-parallel-size N) puts 1/N of the weights on each card.
  return weightsMiB(f.model.paramsB, heldBits(f) === 8 ? 'int8' : 'bf16') / (f.stack.vllmTp ?? 1) >= WEIGHTS_FILL * card;
}

/** Even at 4 bits the weights fill the card: a smaller model or more GPUs, not quantization, is what is left. */
export const quantizeNotEnough = (f: Incident) => quantizeFirst(f) && weightsMiB(f.model.paramsB!, 'int4') >= WEIGHTS_FILL * cardMiB(f)!;

/** The arithmetic the reply quotes ({quantizeWhy}): the weights at the bits they are held in, the card, and at 4 bits. */
export function quantizeWords(f: Incident, loc: Locale | undefined): void {
  if (!quantizeFirst(f)) return;
  const bits = heldBits(f);
  f.budget.quantizeWhy = t(loc, 'lever.quantize.why', {
    params: f.model.paramsB!,
    bytes: bits / 8,
    weights: formatMiB(weightsMiB(f.model.paramsB!, bits === 8 ? 'int8' : 'bf16')),
    card: formatMiB(cardMiB(f)!),
    four: formatMiB(weightsMiB(f.model.paramsB!, 'int4')),
  });
}
