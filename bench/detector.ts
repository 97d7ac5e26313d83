// npm run bench:detector: the leak detector's time over a stored-trace-like series, as a ratio to a plain
// linear pass over the same samples run side by side. The reference reads every sample once the way any
// detector must (its time parsed, its series looked up by GPU and pid, its peak memory kept):
// what is left of the ratio is the detector's own work. Each size is measured in alternating rounds
// (detector, reference, detector, ...) so a loaded machine slows both alike; medians are reported.
// Sizes: the 24 h single-process series of test/watch/detector.test.ts (a 1440-sample series, which
// used to be a timed assertion there), then a week of it and a week of 8 processes. The detector also
// has a cost per series (the growth fit over its 10-minute windows, the finding's text), so its ratio
// is highest on the short trace and falls as series grow: a ratio that rose with the trace's length
// would say its per-sample work is more than linear.
// BENCH_DETECTOR_ROUNDS sets the rounds (default 15).
import { loadavg } from 'node:os';
import { detectLeaks } from '../src/watch/detector.js';
import { toMs } from '../src/watch/series.js';
import type { Sample } from '../src/watch/types.js';
import { buildSamples, prng, trainingProcess } from '../test/watch/generator.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const H = 3_600_000;
const ROUNDS = Number(process.env.BENCH_DETECTOR_ROUNDS ?? 15);
// The sawtooth of a job that validates every hour, with a slow leak from hour 3 (detector.test.ts's trace).
const saw = { everyMin: 60, durMin: 8, peakMiB: 6000, emptyCache: true, dipProb: 0.5, dipMiB: 900 };

function trace(hours: number, procs: number): Sample[] {
  const rnd = prng(7);
  return buildSamples(
    {
      host: 'gpu1',
      t0: T0,
      hours,
      gpuTotalMiB: 81559,
      procs: Array.from({ length: procs }, (_, i) =>
        trainingProcess(
          { gpu: i, pid: 4242 + i, user: 'alice', command: 'python train.py', toMs: T0 + 1e3 * H },
          { baseMiB: 30000, validation: saw, leak: { slopeMiBPerHour: 20, startMs: T0 + 3 * H, blockMiB: 2 }, startMs: T0 },
          rnd,
        ),
      ),
    },
    rnd,
  );
}

/** The reference: every sample read once into its series (time parsed, series looked up by GPU and pid, peak kept). */
function linearPass(samples: Sample[]): number {
  const byGpu = new Map<number, Map<number, { n: number; lastMs: number; peakMiB: number }>>();
  let hostPeak = 0;
  for (const s of samples) {
    const ms = toMs(s.ts);
    if (s.kind === 'host') {
      hostPeak = Math.max(hostPeak, s.memTotalBytes - s.memAvailableBytes);
      continue;
    }
    let gpu = byGpu.get(s.gpu);
    if (!gpu) byGpu.set(s.gpu, (gpu = new Map()));
    const pid = s.pid ?? -1;
    const mib = s.pid === undefined ? s.gpuUsedMiB : (s.processMiB ?? 0);
    const e = gpu.get(pid);
    if (e) {
      e.n++;
      e.lastMs = ms;
      if (mib > e.peakMiB) e.peakMiB = mib;
    } else gpu.set(pid, { n: 1, lastMs: ms, peakMiB: mib });
  }
  return byGpu.size + hostPeak;
}

/** Milliseconds per call of fn over `samples`, `reps` calls timed together. */
function timeOf(fn: (s: Sample[]) => unknown, samples: Sample[], reps: number): number {
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) fn(samples);
  return (performance.now() - t0) / reps;
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

console.log(
  `bench:detector  ${ROUNDS} alternating rounds per size; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log('size                      samples  findings  detector ms  linear pass ms  ratio');
for (const [label, hours, procs] of [
  ['24 h, 1 process', 24, 1],
  ['168 h, 1 process', 168, 1],
  ['168 h, 8 processes', 168, 8],
] as const) {
  const samples = trace(hours, procs);
  const findings = detectLeaks(samples).length;
  // Warm-up of both, then as many calls per timed batch as take about 25 ms, so a batch is not one tick.
  const repsOf = (fn: (s: Sample[]) => unknown) => {
    let reps = 1;
    while (timeOf(fn, samples, reps) * reps < 25 && reps < 1e5) reps *= 2;
    return reps;
  };
  const dReps = repsOf(detectLeaks);
  const lReps = repsOf(linearPass);
  const detector: number[] = [];
  const reference: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    detector.push(timeOf(detectLeaks, samples, dReps));
    reference.push(timeOf(linearPass, samples, lReps));
  }
  const d = median(detector);
  const l = median(reference);
  console.log(
    `${label.padEnd(24)}  ${String(samples.length).padStart(7)}  ${String(findings).padStart(8)}  ${d.toFixed(3).padStart(11)}  ${l.toFixed(3).padStart(14)}  ${(d / l).toFixed(1).padStart(5)}x`,
  );
}
