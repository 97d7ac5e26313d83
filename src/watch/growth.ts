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

  // Window lows, median-of-3 filtered: a dip or peak confined to one window is not a level.
  const raw = new Float64Array(m);
  for (let i = 0; i < m; i++) raw[i] = w.low(from + i);
  const low = new Float64Array(m);
  for (let i = 0; i < m; i++)
    low[i] = i === 0 || i === m - 1 ? raw[i]! : med3(raw[i - 1]!, raw[i]!, raw[i + 1]!);

  // Floor envelope E (suffix minimum: the level memory never goes below again) and mid-times in hours.
  const E = new Float64Array(m);
  const tH = new Float64Array(m);
  let run = Infinity;
  for (let i = m - 1; i >= 0; i--) {
    run = Math.min(run, low[i]!);
    E[i] = run;
    tH[i] = ((w.idx[from + i]! + 0.5) * wMs) / HOUR;
  }
  const end = m - UNCONFIRMED; // E[0..end) is confirmed by later windows
  const totalRise = E[end - 1]! - E[0]!;
  if (totalRise <= 0) return none('flat', 0);

  // Noise of the floor: median absolute change between neighbouring windows.
  const diffs: number[] = [];
  for (let i = 1; i < m; i++) diffs.push(Math.abs(low[i]! - low[i - 1]!));
  const noise = median(diffs);
  const stepMin = Math.max(1, noise);

  // Steps: rises of E of at least stepMin (small rises accumulate into one step).
  const stepPos: number[] = [];
  const stepSize: number[] = [];
  let carry = 0;
  for (let i = 1; i < end; i++) {
    carry += E[i]! - E[i - 1]!;
    if (carry >= stepMin) {
      stepPos.push(i);
      // A rise across a sampling gap is the growth of the whole gap: not one dominating step.
      stepSize.push(w.idx[from + i]! - w.idx[from + i - 1]! > 1 ? 0 : carry);
      carry = 0;
    }
  }
  const last = stepPos.length - 1;
  if (stepPos.length < o.minSteps) return none('too few steps', totalRise);

  // The latest run: walk back from the last step while steps are close (in observed windows).
  const maxGapW = (o.maxStepGapHours * HOUR) / wMs;
  let k0 = last;
  while (k0 > 0 && stepPos[k0]! - stepPos[k0 - 1]! <= maxGapW) k0--;
  if (last - k0 + 1 < o.minSteps) return none('too few steps in the latest run', totalRise);
  // Biggest step from j on, to test dominance of any suffix of the run in O(1).
  const maxFrom = new Float64Array(stepPos.length + 1);
  for (let j = last; j >= k0; j--) maxFrom[j] = Math.max(stepSize[j]!, maxFrom[j + 1]!);

  // Longest suffix of the run that looks like creep: warm-up or first-validation steps (and the odd
  // jitter step) before the creep are trimmed off rather than vetoing it.
  const tol = SLOPE_TOLERANCE * o.minSlopeMiBPerHour;
  let reason = '';
  for (let k = k0; k <= last - o.minSteps + 1; k++) {
    const gaps: number[] = [];
    for (let j = k + 1; j <= last; j++) gaps.push(stepPos[j]! - stepPos[j - 1]!);
    const gapW = median(gaps);
    // Still growing: the last step is recent relative to the step rhythm.
    if (m - 1 - stepPos[last]! > Math.max(2 * gapW, HOUR / wMs) + UNCONFIRMED) {
      reason ||= 'growth stopped';
      continue;
    }
    // Onset: half a step interval before the run's first step (when its first block filled).
    const onset = Math.max(0, stepPos[k]! - Math.round(gapW / 2));
    const onsetMs = w.idx[from + onset]! * wMs;
    const hours = (nowMs - onsetMs) / HOUR;
    if (hours < o.minDurationHours) {
      reason ||= 'run too short';
      break; // later suffixes are shorter still
    }
    const rise = E[end - 1]! - E[onset]!;
    if (rise < Math.max(8, 3 * noise) || rise < 0.5 * tol * hours) {
      reason ||= 'rise within noise';
      continue;
    }
    if (maxFrom[k]! > 0.5 * rise) {
      reason ||= 'one step dominates';
      continue;
    }
    // Not decelerating: the later half of the run rises at least 30% as much as the earlier half.
    const mid = (onset + end - 1) >> 1;
    if (E[end - 1]! - E[mid]! < 0.3 * (E[mid]! - E[onset]!)) {
      reason ||= 'decelerating (warm-up ratchet)';
      continue;
    }
    const slope = theilSen(tH.subarray(onset, end), withoutOutlierSteps(E, stepPos, stepSize, k, onset, end));
    if (slope < tol) {
      reason ||= 'slope below threshold';
      continue;
    }
    return { growing: true, reason: 'creep', slopeMiBPerHour: slope, onsetMs, steps: last - k + 1, riseMiB: rise, totalRiseMiB: totalRise };
  }
  return none(reason || 'too few steps', totalRise);
}

/**
 * E[onset..end) with steps over 4x the run's median step taken out: a dynamic-shape record or a
 * first validation landing inside a creep is a one-off, not part of its rate.
 */
function withoutOutlierSteps(E: Float64Array, pos: number[], size: number[], k: number, onset: number, end: number): Float64Array {
  const sizes = size.slice(k).filter((x) => x > 0);
  const typical = median(sizes);
  const cap = 4 * typical;
  const out = E.slice(onset, end);
  let removed = 0;
  let j = k;
  for (let i = onset; i < end; i++) {
    while (j < pos.length && pos[j]! === i) {
      if (size[j]! > cap) removed += size[j]! - typical;
      j++;
    }
    out[i - onset] = E[i]! - removed;
  }
  return out;
}

function med3(a: number, b: number, c: number): number {
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}
