// Is one process's GPU memory creeping, or just the caching allocator being itself?
//
// The allocator reserves memory in blocks (2 MiB small pool, 20 MiB / larger segments) and keeps it,
// so nvidia-smi shows steps then plateaus; transient peaks (validation, workspaces) come back down.
// We therefore look at the *floor*: per 10-minute window the second-lowest sample (robust to one
// empty_cache dip), median-of-3 across windows, then the suffix minimum (the level memory never goes
// below again): a non-decreasing staircase. Saw-tooth never raises it. Creep is a run of at least
// minSteps steps, each within maxStepGapHours of the next, still going on, no step over half the
// rise, neither decelerating (warm-up / dynamic-shape records: rarer, smaller steps) nor flat at the
// start (then it began later); its rate is the Theil–Sen slope of the staircase with one-off records
// taken out. A few blocks of 2 MiB show a 10 MiB/h creep within 3 h; 20 MiB segments need ~3.5 h.
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

type GrowthOptions = Pick<DetectorOptions, 'minSlopeMiBPerHour' | 'minDurationHours' | 'warmupMinutes' | 'minSteps' | 'maxStepGapHours' | 'windowMinutes'>;

const none = (reason: string, totalRiseMiB = 0): Growth => ({
  growing: false,
  reason,
  slopeMiBPerHour: 0,
  onsetMs: NaN,
  steps: 0,
  riseMiB: 0,
  totalRiseMiB,
});

/** The floor of a series after warm-up: E is non-decreasing; t in hours; E[0..end) is confirmed. */
export interface Floor {
  from: number;
  t: Float64Array;
  E: Float64Array;
  /** Filtered window lows that E is the suffix minimum of. */
  low: Float64Array;
  end: number;
  noise: number;
}

export function floorEnvelope(w: Windows, processStartMs: number, o: Pick<GrowthOptions, 'warmupMinutes' | 'windowMinutes'>): Floor | null {
  const wMs = o.windowMinutes * 60_000;
  const firstIdx = Math.ceil((processStartMs + o.warmupMinutes * 60_000) / wMs);
  let from = 0;
  while (from < w.length && w.idx[from] < firstIdx) from++;
  const m = w.length - from;
  if (m < 6) return null;
  // Window lows, median-of-3 filtered: a dip or peak confined to one window is not a level.
  const raw = new Float64Array(m);
  for (let i = 0; i < m; i++) raw[i] = w.low(from + i);
  const low = new Float64Array(m);
  for (let i = 1; i < m - 1; i++) low[i] = med3(raw[i - 1], raw[i], raw[i + 1]);
  // Edges have one neighbour: a dip there must not become the floor of everything before it.
  low[0] = Math.max(raw[0], raw[1]);
  low[m - 1] = Math.max(raw[m - 1], raw[m - 2]);
  // Suffix minimum: the level memory never goes below again.
  const E = new Float64Array(m);
  const t = new Float64Array(m);
  let run = Infinity;
  for (let i = m - 1; i >= 0; i--) {
    run = Math.min(run, low[i]);
    E[i] = run;
    t[i] = ((w.idx[from + i] + 0.5) * wMs) / HOUR;
  }
  // Noise of the floor: median absolute change between neighbouring windows.
  const diffs = new Float64Array(m - 1);
  for (let i = 1; i < m; i++) diffs[i - 1] = Math.abs(low[i] - low[i - 1]);
  return { from, t, E, low, end: m - UNCONFIRMED, noise: median(diffs) };
}

export function analyzeGrowth(w: Windows, processStartMs: number, nowMs: number, o: GrowthOptions): Growth {
  const f = floorEnvelope(w, processStartMs, o);
  if (!f) return none('too short');
  const { from, t, E, low, end, noise } = f;
  const wMs = o.windowMinutes * 60_000;
  const m = E.length;
  const totalRise = E[end - 1] - E[0];
  if (totalRise <= 0) return none('flat', 0);

  // Steps: rises of E of at least the noise (small rises accumulate into one step).
  const stepMin = Math.max(1, noise);
  const pos: number[] = [];
  const size: number[] = [];
  // Growth of a stretch we could not see (a sampling gap, or windows held up by a long validation
  // pass whose end reveals the creep underneath in one go): exempt from the one-off step rules.
  const acrossGap: boolean[] = [];
  let carry = 0;
  for (let i = 1; i < end; i++) {
    carry += E[i] - E[i - 1];
    if (carry >= stepMin) {
      pos.push(i);
      size.push(carry);
      acrossGap.push(w.idx[from + i] - w.idx[from + i - 1] > 1 || low[i] > E[i] || low[i - 1] > E[i]);
      carry = 0;
    }
  }
  const last = pos.length - 1;
  if (pos.length < o.minSteps) return none('too few steps', totalRise);

  // The latest run: walk back from the last step while steps are close (in observed windows).
  const maxGapW = (o.maxStepGapHours * HOUR) / wMs;
  let k0 = last;
  while (k0 > 0 && pos[k0] - pos[k0 - 1] <= maxGapW) k0--;
  if (last - k0 + 1 < o.minSteps) return none('too few steps in the latest run', totalRise);

  // Longest suffix of the run that looks like creep: warm-up or first-validation steps before the
  // creep are trimmed off rather than vetoing it, and one-off records inside it (steps over 4x the
  // run's 75th-percentile step) are taken out of its rate.
  const tol = SLOPE_TOLERANCE * o.minSlopeMiBPerHour;
  let reason = '';
  for (let k = k0; k <= last - o.minSteps + 1; k++) {
    const sizes: number[] = [];
    for (let j = k; j <= last; j++) sizes.push(size[j]);
    sizes.sort((a, b) => a - b);
    const p75 = sizes[Math.floor(0.75 * (sizes.length - 1))];
    const outlier = (j: number) => !acrossGap[j] && size[j] > 4 * p75;
    // The run starts at a typical step: not at a one-off record, nor at a jitter-sized wiggle.
    if (outlier(k) || size[k] < 0.25 * p75) continue;
    const kept: number[] = [];
    for (let j = k; j <= last; j++) if (!outlier(j)) kept.push(j);
    if (kept.length < o.minSteps) {
      reason ||= 'too few steps';
      continue;
    }
    const gaps: number[] = [];
    for (let j = 1; j < kept.length; j++) gaps.push(pos[kept[j]] - pos[kept[j - 1]]);
    const gapW = median(gaps);
    // Still growing: the last step is recent relative to the step rhythm.
    if (m - 1 - pos[kept[kept.length - 1]] > Math.max(2 * gapW, HOUR / wMs) + UNCONFIRMED) {
      reason ||= 'growth stopped';
      continue;
    }
    // Onset: half a step interval before the run's first step (when its first block filled).
    const onset = Math.max(0, pos[k] - Math.round(gapW / 2));
    const onsetMs = w.idx[from + onset] * wMs;
    const hours = (nowMs - onsetMs) / HOUR;
    if (hours < o.minDurationHours) {
      reason ||= 'run too short';
      break; // later suffixes are shorter still
    }
    const Ek = E.slice(onset, end);
    let removed = 0;
    for (let i = onset, j = k; i < end; i++) {
      for (; j <= last && pos[j] <= i; j++) if (outlier(j)) removed += size[j];
      Ek[i - onset] = E[i] - removed;
    }
    const n = Ek.length;
    const rise = Ek[n - 1] - Ek[0];
    if (rise < Math.max(8, 3 * noise) || rise < 0.5 * tol * hours) {
      reason ||= 'rise within noise';
      continue;
    }
    let biggest = 0;
    for (const j of kept) if (!acrossGap[j]) biggest = Math.max(biggest, size[j]);
    if (biggest > 0.5 * rise) {
      reason ||= 'one step dominates';
      continue;
    }
    // Not decelerating: the later half of the run rises at least 30% as much as the earlier half.
    const mid = (n - 1) >> 1;
    const riseA = Ek[mid] - Ek[0];
    const riseB = Ek[n - 1] - Ek[mid];
    if (riseB < 0.3 * riseA) {
      reason ||= 'decelerating (warm-up ratchet)';
      continue;
    }
    // Nor a mostly flat start: then the creep began later, and a later suffix fits it better.
    if (riseA < 0.4 * riseB) {
      reason ||= 'flat start';
      continue;
    }
    const slope = theilSen(t.subarray(onset, end), Ek);
    if (slope < tol) {
      reason ||= 'slope below threshold';
      continue;
    }
    // Report the onset where the fitted line leaves the floor: a few jitter-sized steps at the start
    // of the run would otherwise date it hours early.
    const fittedOnsetMs = (t[end - 1] - rise / slope) * HOUR;
    return {
      growing: true,
      reason: 'creep',
      slopeMiBPerHour: slope,
      onsetMs: Math.max(onsetMs, Math.min(fittedOnsetMs, nowMs)),
      steps: kept.length,
      riseMiB: rise,
      totalRiseMiB: totalRise,
    };
  }
  return none(reason || 'too few steps', totalRise);
}

function med3(a: number, b: number, c: number): number {
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}
