// The static part of a run (weights, and for full training gradients and optimizer state) against the card: the
// budget every lever's precondition reads. A module of its own so lever modules can read it without importing levers.ts,
// which imports them.
import { weightsMiB } from '../weights-size.js';
import { zeroPerRankMiB } from './zero.js';
import type { Incident } from '../incident/index.js';

/**
 * Bytes per parameter of full fine-tuning with AdamW in mixed precision, before any activation: half
 * weights and gradients, fp32 master weights and two moments (ZeRO paper's accounting; Hugging Face's
 * "model training anatomy" gives 16-18).
 */
export const FULL_TRAINING_BYTES_PER_PARAM = 16;

/** The card's memory as the log states it (the OOM message first). */
export function cardMiB(f: Incident): number | undefined {
  return f.figures.totalCapacityMiB ?? f.card.gpuMemoryMiB ?? f.card.statedGpuMemoryMiB ?? f.card.gpuModelMemoryMiB;
}

/**
 * The static part of the run in MiB when the log sizes the model: the weights, plus gradients and
 * optimizer state for full training; under ZeRO each GPU's share, unknown when the log does not state the ranks.
 */
export function staticMiB(f: Incident): number | undefined {
  if (f.model.paramsB === undefined) return undefined;
  if (!f.run.training || f.run.adapterTraining) return weightsMiB(f.model.paramsB, f.model.dtype);
  // Under ZeRO each GPU holds its share (levers/zero.ts): known only when the log states the ranks and no offload.
  if (f.distributed.zeroStage !== undefined && f.distributed.zeroStage > 0) return zeroPerRankMiB(f);
  return (f.model.paramsB * 1e9 * FULL_TRAINING_BYTES_PER_PARAM) / 2 ** 20;
}

export interface StaticCeiling {
  mib: number;
  /** card: the log sizes the card; family: the largest size the card it names is sold with. */
  basis: 'card' | 'family';
}

/**
 * What the static part is compared with: the card's memory as the log gives it, else the largest size the card
 * it names is sold with ("A100" -> 80 GB: a static part above that fits none of its sizes). A card the log does not
 * name is not assumed (it may be a 141 GB H200, or the run may already shard).
 */
export function staticCeiling(f: Incident): StaticCeiling | undefined {
  const card = cardMiB(f);
  if (card !== undefined) return { mib: card, basis: 'card' };
  if (f.card.familyMaxMiB !== undefined) return { mib: f.card.familyMaxMiB, basis: 'family' };
  return undefined;
}

/** The static part alone is at least the card (or every size of the card named): no batch size can fit it. */
export function staticOverCard(f: Incident): boolean {
  const need = staticMiB(f);
  const ceiling = staticCeiling(f);
  return need !== undefined && ceiling !== undefined && need >= ceiling.mib;
}
