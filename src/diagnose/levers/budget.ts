// The static part of the memory budget against the card (issue 23 item 2): weights = parameters × bytes
// per dtype, before any batch exists. When the weights alone, in the dtype the log states or its failed
// request shows (precision.ts: a request equal to one weight matrix in fp32), take the card while in half
// precision they would leave room, the lever is the dtype at load (torch_dtype=bfloat16), not the batch,
// which has not been allocated yet, and not quantization first. Full training is judged by its own
// arithmetic (levers.ts: ~16 B/param with Adam); this module is the load and inference side.
import { weightsMiB } from '../weights-size.js';
import { formatMiB } from '../fixes/arithmetic.js';
import { loadInFp32 } from '../levers.js';
import { cardMiB } from './static-fit.js';
import { t, type Locale } from '../../core/i18n.js';
import type { Incident, PhasePart } from '../incident/index.js';

/** Weights that take this share of the card leave no room for the activations or cache of even one input. */
const WEIGHTS_FILL = 0.85;
/** Phases where only the weights (and one request) are on the card: no batch, gradients or optimizer. */
const STATIC_PHASES = new Set<PhasePart['name']>([undefined, 'load', 'generate']);

export interface WeightBudget {
  dtype: 'fp32' | 'fp16' | 'bf16' | 'int8' | 'int4';
  weightsMiB: number;
  halfMiB: number;
  cardMiB: number;
}

/** The weights against the card when the log sizes both (the dtype as stated or inferred; fp16 when neither). */
export function weightBudget(f: Incident): WeightBudget | undefined {
  const card = cardMiB(f);
  if (f.model.paramsB === undefined || card === undefined) return undefined;
  const dtype = f.model.dtype ?? 'fp16';
  return { dtype, weightsMiB: weightsMiB(f.model.paramsB, dtype), halfMiB: weightsMiB(f.model.paramsB, 'bf16'), cardMiB: card };
}

/**
 * The weights are fp32 (stated, or read from the failed request), fill the card in fp32 and would fit in
 * half precision; not a full training run (its optimizer decides) and not the load-phase case levers.ts
 * already answers with its frame.
 */
export function fp32WeightsOverCard(f: Incident): boolean {
  if (f.model.dtype !== 'fp32' || (f.run.training && !f.run.adapterTraining) || !STATIC_PHASES.has(f.phase.name) || loadInFp32(f)) return false;
  const b = weightBudget(f);
  return b !== undefined && b.weightsMiB >= WEIGHTS_FILL * b.cardMiB && b.halfMiB < WEIGHTS_FILL * b.cardMiB;
}

/** The arithmetic the reply quotes ({budgetWhy}), with the request that showed the dtype when it was inferred. */
export function budgetWords(f: Incident, loc: Locale | undefined): void {
  if (!fp32WeightsOverCard(f)) return;
  const b = weightBudget(f)!;
  const from = f.model.dtypeEvidence
    ? t(loc, 'lever.budget.fromRequest', { matrix: f.model.dtypeEvidence })
    : f.model.dtypeDefaultOf
      ? t(loc, 'lever.budget.loadDefault', { call: f.model.dtypeDefaultOf })
      : t(loc, 'lever.budget.stated');
  f.budget.budgetWhy = t(loc, 'lever.budget.fp32', {
    params: f.model.paramsB!,
    weights: formatMiB(b.weightsMiB),
    card: formatMiB(b.cardMiB),
    half: formatMiB(b.halfMiB),
    from,
  });
}
