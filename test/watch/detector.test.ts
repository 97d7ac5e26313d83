import { describe, expect, it } from 'vitest';
import { detectLeaks, LeakDetector } from '../../src/watch/detector.js';
import { buildSamples, hostRamModel, idleProcess, prng, trainingProcess, type ProcModel, type TrainSpec } from './generator.js';
import { SeriesIndex, toMs } from '../../src/watch/series.js';
import { median, theilSen } from '../../src/watch/stats.js';
import { WATCH_RULES, type ProcessSample, type Sample } from '../../src/watch/types.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const H = 3_600_000;
const TOTAL = 81559;

function job(
  rnd: () => number,
  spec: Omit<TrainSpec, 'startMs'> & { startH?: number; endH?: number; gpu?: number; pid?: number; command?: string },
): ProcModel {
  const { startH = 0, endH = 1e3, gpu = 0, pid = 4242, command = 'python train.py', ...s } = spec;
  return trainingProcess({ gpu, pid, user: 'alice', command, toMs: T0 + endH * H }, { ...s, startMs: T0 + startH * H }, rnd);
}

function trace(
  hours: number,
  procs: (rnd: () => number) => ProcModel[],
  extra: { gaps?: [number, number][]; ram?: number; ramCreep?: number; seed?: number } = {},
): Sample[] {
  const rnd = prng(extra.seed ?? 7);
  return buildSamples(
    {
      host: 'gpu1',
      t0: T0,
      hours,
      gpuTotalMiB: TOTAL,
      procs: procs(rnd),
      gaps: extra.gaps,
      hostRam: extra.ram === undefined ? undefined : { totalBytes: 512 * 1024 ** 3, usedBytes: hostRamModel(rnd, T0, extra.ram, extra.ramCreep ?? 0) },
    },
    rnd,
  );
}

const saw = { everyMin: 60, durMin: 8, peakMiB: 6000, emptyCache: true, dipProb: 0.5, dipMiB: 900 };

describe('detectLeaks: not leaks', () => {
  it('warm-up steps then a plateau', () => {
    expect(detectLeaks(trace(24, (r) => [job(r, { baseMiB: 40000 })]))).toEqual([]);
  });

  it('saw-tooth around validation that returns to the same level (with empty_cache dips)', () => {
    expect(detectLeaks(trace(24, (r) => [job(r, { baseMiB: 40000, validation: saw })]))).toEqual([]);
  });

  it('a first validation that stays cached, and dynamic-shape records that stop', () => {
    const samples = trace(12, (r) => [
      job(r, {
        baseMiB: 40000,
        validation: { ...saw, emptyCache: false },
        ratchet: [
          [30, 800],
          [70, 400],
          [150, 200],
          [300, 90],
        ],
      }),
    ]);
    expect(detectLeaks(samples)).toEqual([]);
  });
});

describe('detectLeaks: creep', () => {
  it('50 MiB/h hidden under 20 MiB allocator steps: slope within 30%, hours to full from free memory', () => {
    const samples = trace(12, (r) => [job(r, { baseMiB: 40000, validation: saw, leak: { slopeMiBPerHour: 50, startMs: T0 + 2 * H, blockMiB: 20 } })]);
    const [f, ...rest] = detectLeaks(samples);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ kind: 'leak', host: 'gpu1', gpu: 0, pid: 4242, user: 'alice', rule: WATCH_RULES.leak, totalMiB: TOTAL });
    expect(Math.abs(f.slopeMiBPerHour - 50)).toBeLessThan(15);
    const last = samples.at(-1) as ProcessSample;
    const expected = (TOTAL - last.gpuUsedMiB) / 50;
    expect(Math.abs(f.hoursToFull! - expected) / expected).toBeLessThan(0.3);
    expect(Math.abs(Date.parse(f.since!) - (T0 + 2 * H))).toBeLessThan(H);
    expect(f.series.length).toBeLessThanOrEqual(48);
  });

  it('10 MiB/h in 2 MiB blocks is visible 3 h after it starts', () => {
    const samples = trace(8, (r) => [job(r, { baseMiB: 30000, jitterMiB: 3, leak: { slopeMiBPerHour: 10, startMs: T0 + 2 * H, blockMiB: 2 } })]);
    const upTo = (h: number) => samples.filter((s) => toMs(s.ts) <= T0 + h * H);
    expect(detectLeaks(upTo(5)).map((f) => f.kind)).toEqual(['leak']);
    expect(detectLeaks(upTo(2.5))).toEqual([]);
  });

  it('rank-0 growth across 8 GPUs: rank0_growth on GPU 0 only', () => {
    const samples = trace(10, (r) =>
      [...Array(8).keys()].map((g) =>
        job(r, {
          baseMiB: 50000,
          gpu: g,
          pid: 8000 + g,
          startH: g * 0.005,
          command: `python train.py --local_rank=${g}`,
          leak: g === 0 ? { slopeMiBPerHour: 150, startMs: T0 + H, blockMiB: 100 } : undefined,
        }),
      ),
    );
    const found = detectLeaks(samples);
    expect(found.map((f) => [f.kind, f.gpu, f.rule])).toEqual([['rank0_growth', 0, WATCH_RULES.rank0_growth]]);
  });

  it('every rank growing is a leak on each, not rank-0 growth', () => {
    const samples = trace(8, (r) =>
      [0, 1, 2].map((g) => job(r, { baseMiB: 30000, gpu: g, pid: 100 + g, leak: { slopeMiBPerHour: 40, startMs: T0 + H, blockMiB: 20 } })),
    );
    expect(
      detectLeaks(samples)
        .map((f) => `${f.kind}@${f.gpu}`)
        .sort(),
    ).toEqual(['leak@0', 'leak@1', 'leak@2']);
  });
});

describe('series', () => {
  it('a reused pid with a new start time is a new series; the old one is not compared with it', () => {
    const samples = trace(16, (r) => [job(r, { baseMiB: 20000, endH: 6 }), job(r, { baseMiB: 35000, startH: 6.2, command: 'python other.py' })]);
    const index = new SeriesIndex().addAll(samples);
    const series = [...index.processes()];
    expect(series.map((s) => [s.pid, s.command])).toEqual([
      [4242, 'python train.py'],
      [4242, 'python other.py'],
    ]);
    expect(detectLeaks(samples)).toEqual([]);
  });

  it('a restarted job (same host, user, command, gpu) is linked to its earlier run', () => {
    const samples = trace(12, (r) => [job(r, { baseMiB: 20000, endH: 5 }), job(r, { baseMiB: 20000, startH: 5.1, pid: 5555 })]);
    const [first, second] = [...new SeriesIndex().addAll(samples).processes()];
    expect(second.previous).toBe(first);
    expect(second.run).toBe(2);
  });

  it('a gap is unknown, not memory freed: recorded, not filled, and a creep across it is still measured', () => {
    const flat = trace(16, (r) => [job(r, { baseMiB: 30000 })], { gaps: [[5, 8]] });
    const [ps] = [...new SeriesIndex().addAll(flat).processes()];
    expect(ps.gaps).toHaveLength(1);
    expect(ps.gaps[0].toMs - ps.gaps[0].fromMs).toBeGreaterThan(2.9 * H);
    expect(Math.min(...ps.windows.lo.subarray(3, ps.windows.length))).toBeGreaterThan(29000); // no zero-filled windows
    expect(detectLeaks(flat)).toEqual([]);

    const creeping = trace(14, (r) => [job(r, { baseMiB: 30000, leak: { slopeMiBPerHour: 50, startMs: T0 + H, blockMiB: 2 } })], { gaps: [[5, 8]] });
    const [f] = detectLeaks(creeping);
    expect(f?.kind).toBe('leak');
    expect(Math.abs(f.slopeMiBPerHour - 50)).toBeLessThan(15);
  });

  it('a sample whose memory the driver did not report ([N/A]) is unknown, not 0', () => {
    const samples = trace(10, (r) => [job(r, { baseMiB: 30000 })]).map((s, i) => (i % 7 === 0 && 'pid' in s ? { ...s, processMiB: null } : s));
    expect(detectLeaks(samples)).toEqual([]);
  });

  it('parses the sampler timestamps like Date.parse', () => {
    for (const ts of ['2026-11-20T09:00:00Z', '2024-02-29T23:59:59.999Z', '1999-12-31T00:00:01.5Z', '2026-11-20T09:00:00+01:00'])
      expect(toMs(ts)).toBe(Date.parse(ts));
  });
});

describe('idle and host RAM', () => {
  it('memory held at 0% utilisation for hours is idle_held', () => {
    const samples = trace(7, (r) => [job(r, { baseMiB: 20000, idleFromMs: T0 + 3 * H })]);
    const [f, ...rest] = detectLeaks(samples);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ kind: 'idle_held', gpu: 0, pid: 4242, rule: WATCH_RULES.idle_held, hoursToFull: null });
    expect(Math.abs(Date.parse(f.since!) - (T0 + 3 * H))).toBeLessThan(5 * 60_000);
  });

  it('an hour of idleness or a bare CUDA context is not reported', () => {
    const samples = trace(6, () => [idleProcess({ gpu: 0, pid: 1, user: 'u', command: 'python', startMs: T0, toMs: T0 + 9 * H }, 600)]);
    expect(detectLeaks(samples)).toEqual([]);
    expect(detectLeaks(trace(8, (r) => [job(r, { baseMiB: 20000, idleFromMs: T0 + 7 * H })]))).toEqual([]);
  });

  it('host RAM pressure under a DataLoader job is host_ram; creep that runs out soon too', () => {
    const pressure = detectLeaks(trace(4, (r) => [job(r, { baseMiB: 20000 })], { ram: 485 }));
    expect(pressure.map((f) => [f.kind, f.rule])).toEqual([['host_ram', WATCH_RULES.host_ram]]);
    expect(pressure[0].severity).toBeGreaterThanOrEqual(90);

    const creep = detectLeaks(trace(10, (r) => [job(r, { baseMiB: 20000 })], { ram: 300, ramCreep: 8 }));
    expect(creep.map((f) => f.kind)).toEqual(['host_ram']);
    expect(Math.abs(creep[0].slopeMiBPerHour - 8192) / 8192).toBeLessThan(0.3);

    expect(detectLeaks(trace(10, (r) => [job(r, { baseMiB: 20000 })], { ram: 200 }))).toEqual([]);
  });

  it('host RAM pressure without any GPU job on the host is not reported', () => {
    const rnd = prng(3);
    const samples = buildSamples(
      { host: 'h', t0: T0, hours: 3, gpuTotalMiB: TOTAL, procs: [], hostRam: { totalBytes: 512 * 1024 ** 3, usedBytes: hostRamModel(rnd, T0, 490, 0) } },
      rnd,
    );
    expect(detectLeaks(samples)).toEqual([]);
  });
});

describe('streaming, and a slow leak over a day', () => {
  it('the streaming detector gives the same findings as the batch call, and orders worst first', () => {
    const samples = trace(10, (r) => [
      job(r, { baseMiB: 30000, leak: { slopeMiBPerHour: 200, startMs: T0 + H, blockMiB: 20 } }),
      job(r, { gpu: 1, pid: 77, baseMiB: 30000, command: 'python b.py', leak: { slopeMiBPerHour: 20, startMs: T0 + H, blockMiB: 2 } }),
      job(r, { gpu: 2, pid: 78, baseMiB: 12000, command: 'python c.py', idleFromMs: T0 + 4 * H }),
    ]);
    const d = new LeakDetector();
    for (const s of samples) d.add(s);
    const streamed = d.findings();
    expect(streamed).toEqual(detectLeaks(samples));
    expect(streamed.map((f) => `${f.kind}@${f.gpu}`)).toEqual(['leak@0', 'leak@1', 'idle_held@2']);
  });

  // How fast this runs is `npm run bench:detector` (a ratio to a linear pass over the same samples), not a test.
  it('a slow leak (20 MiB/h) under an hourly validation sawtooth is found over a 1440-sample day, from its onset', () => {
    const samples = trace(24, (r) => [job(r, { baseMiB: 30000, validation: saw, leak: { slopeMiBPerHour: 20, startMs: T0 + 3 * H, blockMiB: 2 } })]);
    expect(samples.length).toBeGreaterThan(1400);
    const findings = detectLeaks(samples);
    expect(findings.map((f) => `${f.kind}@${f.gpu}:${f.pid}`)).toEqual(['leak@0:4242']);
    expect(Math.abs(findings[0].slopeMiBPerHour - 20)).toBeLessThan(5);
    expect(Math.abs(Date.parse(findings[0].since!) - (T0 + 3 * H))).toBeLessThanOrEqual(H);
  });
});

describe('stats', () => {
  it('Theil–Sen ignores a minority of outliers; median of even and odd counts', () => {
    const x = [...Array(40).keys()];
    const y = x.map((v, i) => 3 * v + (i % 10 === 0 ? 500 : 0));
    expect(theilSen(x, y)).toBeCloseTo(3, 5);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});
