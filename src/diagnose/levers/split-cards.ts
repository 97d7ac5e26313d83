// The weights fill one card while the paste states several (issue 23, static memory that does not fit). A model is
// not split by making GPUs visible (CUDA_VISIBLE_DEVICES=0,1,2,3) or by launching one process per GPU: each process
// loads all of it on its own cuda:0. Outside training, where the 16-bit weights exceed one card but the stated GPUs
// hold them together, or where one process alone holds most of one card with several GPUs stated, the first lever is
// splitting the model across the cards in one process (device_map="auto" with max_memory, or the serving engine's
// tensor parallelism): it keeps the weights' precision; quantizing or a smaller model comes next. Training replicas
// are sharded by ZeRO / FSDP instead (static-order.ts). Pure functions over the incident.
import { thisProcessHolds } from '../holder.js';
import { weightsMiB } from '../weights-size.js';
import { cardMiB } from './static-fit.js';
import { t, type Locale } from '../../core/i18n.js';
import type { Incident } from '../incident/index.js';

/** Weights or one process's share at or above this share of a card leave no room on it. */
const FILLS_CARD = 0.85;

/** The GPUs the paste states: the launch's ranks, else "several" (CUDA_VISIBLE_DEVICES=0,1, 多卡) as two. */
const gpusStated = (f: Incident): number | undefined => f.distributed.worldSize ?? (f.stack.multiGpuStated === true ? 2 : undefined);

/** Outside training, the weights (or this process) fill one card and the stated GPUs would hold them split. */
export function splitOverCards(f: Incident): boolean {
  if (f.run.training === true || f.phase.name === 'eval' || f.phase.name === 'checkpoint') return false;
  // Already split by tensor parallelism (vLLM's --tensor-parallel-size above 1): the split is on, its own levers answer.
  if (f.stack.vllmTp !== undefined && f.stack.vllmTp > 1) return false;
  // Already dispatched over the GPUs (accelerate, device_map="auto"): the split is spent, fewer bytes per weight are next.
  if (f.distributed.dispatchedOverCards === true) return false;
  const n = gpusStated(f);
  const card = cardMiB(f);
  if (n === undefined || n < 2 || card === undefined) return false;
  if (f.model.paramsB !== undefined) {
    const weights = weightsMiB(f.model.paramsB, f.model.dtype === 'fp32' ? 'bf16' : f.model.dtype);
    return weights >= FILLS_CARD * card && weights < FILLS_CARD * card * n;
  }
  const mine = thisProcessHolds(f);
  const tried = f.figures.triedAllocMiB;
  return mine !== undefined && mine >= FILLS_CARD * card && (tried === undefined || tried < 0.1 * card);
}

/** {splitGpus}: the GPUs the reply names ("8 GPUs" where the launch states them, else "several GPUs"). */
export function splitWords(f: Incident, loc: Locale | undefined): void {
  if (!splitOverCards(f)) return;
  const n = f.distributed.worldSize;
  f.distributed.splitGpus = n !== undefined ? t(loc, 'lever.split.gpus', { n }) : t(loc, 'lever.split.several');
}
