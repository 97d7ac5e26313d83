// The loss a training log prints on its progress lines, read for divergence (issue 23, confusers: a NaN or an exploding
// loss read as memory). When the total loss jumps by orders of magnitude (or turns nan/inf) before a kernel fails with
// an illegal access or a device-side assert, the exploding values (box deltas, indices, logits) are what broke the
// kernel: the learning rate and gradient clipping are the lever, not memory nor the batch. Fixed forms only:
// mmcv/mmdet "Epoch [6][3250/3681]\tlr: 0.02000, ..., loss: 225192.6129", mmengine "Epoch(train) [1][ 50/1000] ...
// loss: 1.2345", HF Trainer "{'loss': 2.3456, 'grad_norm': ...". Bounded patterns (untrusted input, linear).
import type { SeriesPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 2000;
const MAX_READINGS = 5000;
// Lightning's progress bar postfix too: "Epoch 3: : 67190it [6:05:52,  3.06it/s, loss=2.15, v_num=m9eu]".
const PROGRESS =
  /\bEpoch\s?(?:\(train\)\s{0,4})?\[\s{0,6}\d{1,6}\]\s{0,4}\[\s{0,8}\d{1,9}\s?\/\s?\d{1,9}\]|^\s{0,4}\{'loss':|^\s{0,4}Epoch \d{1,5}:[^\n]{0,200}\bloss=/;
// The total loss: "loss: X" after a separator (never "loss_cls: X"), the dict's 'loss' key, or the bar's "loss=X".
const TOTAL_LOSS = /(?:^|[,\s{])'?loss'?(?::\s{0,3}|=)(-?\d{1,12}(?:\.\d{1,12})?(?:e[+-]?\d{1,3})?|nan|inf|-inf)(?=[,}\]\s]|$)/i;
/** A reading this many times the run's earlier median is a divergence, not noise. */
const JUMP = 100;

/** The total loss of each progress line, in order (nan/inf as NaN / Infinity). */
export function readLossSeries(log: LogText): number[] {
  const out: number[] = [];
  for (let l = 0; l < log.lineCount && out.length < MAX_READINGS; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (!line.includes('loss') || !PROGRESS.test(line)) continue;
    const m = TOTAL_LOSS.exec(line);
    if (m) out.push(/^-?inf$/i.test(m[1]) ? Infinity : Number(m[1]));
  }
  return out;
}

const fmt = (v: number) => (Number.isNaN(v) ? 'nan' : !Number.isFinite(v) ? 'inf' : v >= 1e5 ? v.toExponential(1) : String(Math.round(v * 1e4) / 1e4));

/** Where the loss left its level: "1.0083 -> 2.3e+5" (none: {}). Needs two finite readings before the jump. */
export function readLossDivergence(log: LogText): Pick<SeriesPart, 'lossJump'> {
  const s = readLossSeries(log);
  for (let i = 2; i < s.length; i++) {
    const before = s
      .slice(0, i)
      .filter((v) => Number.isFinite(v))
      .sort((a, b) => a - b);
    if (before.length < 2) continue;
    const median = Math.abs(before[Math.floor(before.length / 2)]);
    const v = s[i];
    if (Number.isNaN(v) || !Number.isFinite(v) || (median > 0 && Math.abs(v) >= JUMP * median)) return { lossJump: `${fmt(s[i - 1])} -> ${fmt(v)}` };
  }
  return {};
}

export const LOSS_DIVERGED_CONDITIONS = {
  loss_diverged: ({ incident: i }: { incident: { series: SeriesPart } }) => i.series.lossJump !== undefined,
};
