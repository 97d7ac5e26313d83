// Is one process's GPU memory creeping, or just the caching allocator being itself?
//
// The allocator reserves memory in blocks (2 MiB small pool, 20 MiB / larger segments) and keeps it,
// so nvidia-smi shows steps then plateaus; transient peaks (validation, workspaces) come back down.
// We therefore look at the *floor*: per 10-minute window the second-lowest sample (robust to one
// empty_cache dip), then the suffix minimum of those (the level memory never goes below again),
// which is a non-decreasing staircase. Creep is a run of several regular steps that is still going on;
// warm-up is one or a few steps whose size and frequency shrink; saw-tooth never raises the floor.
import { median, theilSen } from './stats.js';
import type { Windows } from './series.js';
import type { DetectorOptions } from './types.js';

const HOUR = 3_600_000;
/** Trailing windows whose level no later window has confirmed yet (a validation pass may be running). */
const UNCONFIRMED = 2;
/** Slope gate tolerance: a true 10 MiB/h creep may be estimated a little lower. */
const SLOPE_TOLERANCE = 0.85;

export interface Growth {
  growing: boolean;
  /** Why not (or "creep"), for tests and the digest's detail line. */
  reason: string;
  slopeMiBPerHour: number;
  onsetMs: number;
  steps: number;
  riseMiB: number;
  /** Rise of the floor over the whole post-warm-up history (peers of a growing rank use it). */
  totalRiseMiB: number;
}

type GrowthOptions = Pick<
  DetectorOptions,
  'minSlopeMiBPerHour' | 'minDurationHours' | 'warmupMinutes' | 'minSteps' | 'maxStepGapHours' | 'windowMinutes'
>;

const none = (reason: string, totalRiseMiB = 0): Growth => ({
  growing: false,
  reason,
  slopeMiBPerHour: 0,
  onsetMs: NaN,
  steps: 0,
  riseMiB: 0,
  totalRiseMiB,
});

export function analyzeGrowth(w: Windows, processStartMs: number, nowMs: number, o: GrowthOptions): Growth {
  const wMs = o.windowMinutes * 60_000;
  const firstIdx = Math.ceil((processStartMs + o.warmupMinutes * 60_000) / wMs);
  let from = 0;
  while (from < w.length && w.idx[from]! < firstIdx) from++;
  const m = w.length - from;
  if (m < 6) return none('too short');

  // Floor envelope E (suffix minimum of robust window lows) and window mid-times in hours.
  const E = new Float64Array(m);
  const tH = new Float64Array(m);
  let run = Infinity;
  for (let i = m - 1; i >= 0; i--) {
    run = Math.min(run, w.low(from + i));
    E[i] = run;
    tH[i] = ((w.idx[from + i]! + 0.5) * wMs) / HOUR;
  }
  const end = m - UNCONFIRMED; // E[0..end) is confirmed by later windows
  const totalRise = E[end - 1]! - E[0]!;
  if (totalRise <= 0) return none('flat', 0);

  // Noise of the floor: median absolute change between neighbouring windows.
  const diffs: number[] = [];
  for (let i = 1; i < m; i++) diffs.push(Math.abs(w.low(from + i) - w.low(from + i - 1)));
  const noise = median(diffs);
  const stepMin = Math.max(1, noise);

  // Steps: rises of E of at least stepMin (small rises accumulate into one step).
  const stepPos: number[] = [];
  const stepSize: number[] = [];
  const stepAcrossGap: boolean[] = [];
  let carry = 0;
  for (let i = 1; i < end; i++) {
    carry += E[i]! - E[i - 1]!;
    if (carry >= stepMin) {
      stepPos.push(i);
      stepSize.push(carry);
      stepAcrossGap.push(w.idx[from + i]! - w.idx[from + i - 1]! > 1);
      carry = 0;
    }
  }
  if (stepPos.length < o.minSteps) return none('too few steps', totalRise);

  // The sustained run: walk back from the latest step while steps are close (observed windows).
  const maxGapW = (o.maxStepGapHours * HOUR) / wMs;
  let k = stepPos.length - 1;
  while (k > 0 && stepPos[k]! - stepPos[k - 1]! <= maxGapW) k--;
  const steps = stepPos.length - k;
  if (steps < o.minSteps) return none('too few steps in the latest run', totalRise);
  const gaps: number[] = [];
  for (let j = k + 1; j < stepPos.length; j++) gaps.push(stepPos[j]! - stepPos[j - 1]!);
  const gapW = median(gaps);

  // Still growing: the last step is recent relative to the step rhythm.
  const sinceLast = m - 1 - stepPos[stepPos.length - 1]!;
  if (sinceLast > Math.max(2 * gapW, HOUR / wMs) + UNCONFIRMED) return none('growth stopped', totalRise);

  // Onset: half a step interval before the first step of the run (the first block filled up then).
  const onset = Math.max(0, stepPos[k]! - Math.round(gapW / 2));
  const onsetMs = (w.idx[from + onset]! * wMs);
  if ((nowMs - onsetMs) / HOUR < o.minDurationHours) return none('run too short', totalRise);

  const rise = E[end - 1]! - E[onset]!;
  if (rise < Math.max(8, 3 * noise)) return none('rise within noise', totalRise);
  let biggest = 0;
  for (let j = k; j < stepPos.length; j++) if (!stepAcrossGap[j] && stepSize[j]! > biggest) biggest = stepSize[j]!;
  if (biggest > 0.5 * rise) return none('one step dominates', totalRise);

  // Not decelerating: the later half of the run rises at least 30% as much as the earlier half.
  const mid = (onset + end - 1) >> 1;
  const riseA = E[mid]! - E[onset]!;
  const riseB = E[end - 1]! - E[mid]!;
  if (riseB < 0.3 * riseA) return none('decelerating (warm-up ratchet)', totalRise);

  const slope = theilSen(tH.subarray(onset, end), E.subarray(onset, end));
  if (slope < SLOPE_TOLERANCE * o.minSlopeMiBPerHour) return none('slope below threshold', totalRise);
  return { growing: true, reason: 'creep', slopeMiBPerHour: slope, onsetMs, steps, riseMiB: rise, totalRiseMiB: totalRise };
}
