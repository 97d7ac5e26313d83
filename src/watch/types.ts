// Shapes for the memory watch: what the sampler records every ~60 s and what the detector reports.
import type { MessageKey, Vars } from '../core/i18n.js';
import type { HostRamSample, ProcessSample, Sample } from '../readings/samples.js';

/** What a growing GPU series looks like (src/watch/creep-shape.ts decides), for choosing its fix. */
export type CreepPattern = 'steady' | 'validation_steps' | 'despite_empty_cache';

// The sample shapes live with the readings, where the hosts' sources may name them too.
export type { Timestamp, GpuSample, ProcessSample, HostRamSample, Sample } from '../readings/samples.js';

export const isHostSample = (s: Sample): s is HostRamSample => s.kind === 'host';
export const isProcessSample = (s: Sample): s is ProcessSample => s.kind !== 'host' && s.pid !== undefined;

export type FindingKind = 'leak' | 'rank0_growth' | 'host_ram' | 'idle_held';

/** Knowledge rule ids each finding points to; kept in one place so they can be re-pointed. */
export const WATCH_RULES: Readonly<Record<FindingKind, string>> = {
  leak: 'growing-memory-leak',
  rank0_growth: 'yolov5-rank0-validation-growth',
  host_ram: 'dataloader-worker-killed',
  idle_held: 'idle-gpu-memory-held',
};

export interface Finding {
  kind: FindingKind;
  host: string;
  gpu?: number;
  pid?: number;
  user?: string;
  command?: string;
  /** Robust growth rate (Theil–Sen); 0 for idle_held and for host RAM pressure without creep. */
  slopeMiBPerHour: number;
  /** Free memory (GPU: total - used; host: available) / slope; null when not growing. */
  hoursToFull: number | null;
  currentMiB: number;
  totalMiB: number;
  /** Downsampled per-10-minute peaks (MiB) for a sparkline. */
  series: number[];
  /** Knowledge rule id, from WATCH_RULES. */
  rule: string;
  /** Ordering score, higher is worse: 40..100 for growth by hours left (host RAM pressure 90+), 5..40 for idle waste. */
  severity: number;
  /** ISO time the growth (estimated onset) or the idle stretch began. */
  since?: string;
  /** Runs of the same job seen on this host+GPU (1 = no restart seen). */
  runs?: number;
  /** One line saying why, for the digest (English). */
  detail?: string;
  /** The same line as a catalogue message, so a digest shows it in its reader's language. */
  why?: { key: MessageKey; vars: Vars };
  /** How a GPU creep grows (src/watch/creep-shape.ts): it picks the first fix. */
  pattern?: CreepPattern;
}

export interface DetectorOptions {
  /** Creep slower than this is not reported (applied with 15% tolerance for estimator error). */
  minSlopeMiBPerHour: number;
  /** Growth must have lasted this long (from its estimated onset) before it is reported. */
  minDurationHours: number;
  /** Memory right after a process starts (allocator warm-up, cuDNN autotune) is ignored. */
  warmupMinutes: number;
  /** A rise of fewer steps than this is a step change (warm-up, first validation), not creep. */
  minSteps: number;
  /** Steps further apart than this do not belong to one sustained creep. */
  maxStepGapHours: number;
  idleHours: number;
  idleMinMiB: number;
  /** Utilisation at or below this counts as idle. */
  idleMaxUtilPct: number;
  /** Host RAM pressure: available below this percentage of total. */
  ramAvailablePct: number;
  /** Host RAM creep is reported when it would exhaust available memory within this many hours (a week:
   * a creep that fills RAM in days is worth a line with its horizon, as a GPU creep is). */
  ramFullWithinHours: number;
  minRamSlopeMiBPerHour: number;
  /** Nominal sampling interval; no sample for more than 3x this is a gap (unknown, not freed). */
  sampleIntervalSec: number;
  /** Summaries are kept per window of this length (bounded memory, streaming friendly). */
  windowMinutes: number;
  /** Older windows than this are dropped per series. */
  maxHistoryHours: number;
  /** Which commands run DataLoader workers (host RAM findings need one on the host). */
  isDataLoaderJob: (command: string) => boolean;
  /** Report series that ended before the latest sample of their host too (default: only live ones). */
  includeEnded: boolean;
}

export const DEFAULT_OPTIONS: DetectorOptions = {
  minSlopeMiBPerHour: 10,
  minDurationHours: 1.5,
  warmupMinutes: 20,
  minSteps: 3,
  maxStepGapHours: 4,
  idleHours: 2,
  idleMinMiB: 1024,
  idleMaxUtilPct: 0,
  ramAvailablePct: 10,
  ramFullWithinHours: 7 * 24,
  minRamSlopeMiBPerHour: 256,
  sampleIntervalSec: 60,
  windowMinutes: 10,
  maxHistoryHours: 72,
  isDataLoaderJob: (command) => /\b(python[\d.]*|torchrun|accelerate|deepspeed|lightning)\b/.test(command),
  includeEnded: false,
};
