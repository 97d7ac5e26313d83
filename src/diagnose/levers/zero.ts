// DeepSpeed ZeRO's per-rank memory budget (issue 23). Mixed-precision Adam keeps 16 bytes per parameter: fp16
// weights (2) and gradients (2), fp32 master weights and two moments (12). ZeRO-1 divides the 12 by the
// data-parallel ranks N, ZeRO-2 the gradients too, ZeRO-3 everything: 4 + 12/N, 2 + 14/N, 16/N bytes per
// parameter on each GPU before any activation (Rajbhandari et al., arXiv 1910.02054, Figure 1; DeepSpeed's
// estimators say 4 + 16/N for stage 2 and 18/N plus the largest layer for stage 3: knowledge/memory-budget.md).
// The budget is claimed only when the log states the stage and the rank count, and no CPU offload.
import { formatMiB } from '../fixes/arithmetic.js';
import { t, type Locale } from '../../core/i18n.js';
import type { Incident } from '../incident/index.js';

// DeepSpeed's ZeRO stage: the pasted config's "zero_optimization": { "stage": 2 } first, else the last
// mention in a file name, flag or prose ("ds_config_zero2.json", "--zero_stage 3", "ZeRO-2", "zero3").
const ZERO_CONFIG = /"zero_optimization"\s{0,4}:\s{0,4}\{[^}]{0,400}?"stage"\s{0,4}:\s{0,4}([0-3])\b/;
// ("_zero2" inside a file name counts: an underscore is no word boundary, so letters alone are excluded before it.)
const ZERO_MENTION = /(?:\bds_z|zero[-_ ]?stage[\s=:"]{0,4}|(?:^|[^a-z])zero[-_]?)([0-3])(?!\d|\.\d)/gi;

export function zeroStage(text: string): number | undefined {
  const c = ZERO_CONFIG.exec(text);
  if (c) return Number(c[1]);
  let last: number | undefined;
  for (const m of text.matchAll(ZERO_MENTION)) last = Number(m[1]);
  return last;
}

// The launch's rank count, from its own flags and settings (a commented-out line does not count), else from
// the report's words for the machine ("8 x A100", "4*A100 (80G)", "8卡V100", "on 2 GPUs"). Bounded, linear.
const RANK_FLAGS = [
  /--nproc[-_]per[-_]node[= ](\d{1,4})\b/g,
  /--num[-_]gpus[= ](\d{1,4})\b/g,
  /--num[-_]processes[= ](\d{1,5})\b/g,
  /\bnum_processes\s{0,2}:\s{0,2}(\d{1,5})\b/g,
  /\b(?:dist_)?world[-_]size["']?\s{0,2}[=:]\s{0,2}(\d{1,5})\b/gi,
  /\bnranks (\d{1,5})\b/g,
];
const INCLUDE = /--include[= ]["']?localhost:((?:\d{1,2},){0,63}\d{1,2})\b/;
const CARDS = String.raw`(?:NVIDIA\s)?(?:A100|A800|H100|H800|H200|H20|V100|A6000|A40|A10G?|L40S?|L4|T4|(?:RTX\s?)?[2-5]090|GPUs?|cards?)`;
const PROSE_RANKS = [
  new RegExp(String.raw`\b(\d{1,3})\s?[x×*]\s?${CARDS}`, 'i'),
  new RegExp(String.raw`\b${CARDS}\s?[x×*]\s?(\d{1,3})\b`, 'i'),
  /\bon (\d{1,3}) (?:GPUs|cards)\b/i,
  // "T4卡x2": the count after the card; a digit inside the card's name ("T4卡", "3090卡") is no count.
  /卡\s?[x×*]\s?(\d{1,2})\b/,
  /(?<![A-Za-z\d.])(\d{1,2})\s?(?:张|块)?卡/,
];

export function worldSize(text: string): number | undefined {
  const lines = text.split('\n', 20000).filter((l) => !/^\s{0,8}#/.test(l));
  const live = lines.join('\n');
  let n: number | undefined;
  for (const re of RANK_FLAGS) for (const m of live.matchAll(re)) n = Number(m[1]);
  const include = INCLUDE.exec(live);
  if (n === undefined && include) n = include[1].split(',').length;
  if (n === undefined) {
    for (const re of PROSE_RANKS) {
      const m = re.exec(live.slice(0, 65536));
      if (m) {
        n = Number(m[1]);
        break;
      }
    }
  }
  return n !== undefined && n >= 1 && n <= 100000 ? n : undefined;
}

export const zeroOffloadStated = (text: string) =>
  /offload_(?:optimizer|param)["']?\s{0,3}:\s{0,3}\{[^}]{0,200}?"device"\s{0,3}:\s{0,3}"(?:cpu|nvme)"|\bcpu_offload["']?\s{0,3}[=:]\s{0,3}true|\bzero3?_offload|offload_(?:optimizer|param)_device[= :]{1,3}["']?(?:cpu|nvme)/i.test(
    text,
  );

/** Bytes per parameter each GPU holds before any activation under ZeRO stage `stage` over `ranks` data-parallel ranks. */
export function zeroBytesPerParam(stage: number, ranks: number): number {
  if (stage <= 0) return 16;
  if (stage === 1) return 4 + 12 / ranks;
  if (stage === 2) return 2 + 14 / ranks;
  return 16 / ranks;
}

/** The per-rank static part in MiB for full training under ZeRO, when the log states the stage, the ranks and no offload. */
export function zeroPerRankMiB(f: Incident): number | undefined {
  if (
    f.model.paramsB === undefined ||
    f.distributed.zeroStage === undefined ||
    f.distributed.zeroStage <= 0 ||
    f.distributed.worldSize === undefined ||
    f.distributed.zeroOffload
  )
    return undefined;
  return (f.model.paramsB * 1e9 * zeroBytesPerParam(f.distributed.zeroStage, f.distributed.worldSize)) / 2 ** 20;
}

const round = (v: number) => Math.round(v * 100) / 100;

/** The per-rank arithmetic as the reply shows it ("13B × 5.5 B/param (ZeRO-2 over 4 GPUs: 2 + 14/4) ≈ 66.59 GiB"). */
export function zeroWhy(f: Incident, loc: Locale | undefined): string | undefined {
  const mib = zeroPerRankMiB(f);
  if (mib === undefined) return undefined;
  const stage = f.distributed.zeroStage!;
  const n = f.distributed.worldSize!;
  const formula = stage === 1 ? `4 + 12/${n}` : stage === 2 ? `2 + 14/${n}` : `16/${n}`;
  return t(loc, 'lever.zeroWhy', {
    params: f.model.paramsB!,
    bytes: round(zeroBytesPerParam(stage, n)),
    stage,
    ranks: n,
    formula,
    perRank: formatMiB(mib),
  });
}

/** {zeroRanksWhy}: the per-rank figure against the card where the log sizes it, else ''. */
export function zeroRanksWords(f: Incident, card: number | undefined, loc: Locale | undefined): void {
  if (f.distributed.zeroStage === undefined) return;
  const why = zeroWhy(f, loc);
  f.distributed.zeroRanksWhy = why && card !== undefined ? t(loc, 'lever.zeroRanks', { why, card: formatMiB(card) }) : '';
}
