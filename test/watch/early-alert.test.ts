// Early alert (src/watch/early-alert.ts): a 7.5 GiB/h leak is found within 10 minutes of samples and an
// hour from full, through the caching allocator's blocks, warm-up and validation peaks; warm-up,
// validation peaks, allocator steps and jobs that level off stay quiet, checked after every sampling
// round as the watch checks them. Samples come from the detector tests' generator (test/watch/generator.ts)
// and the stored labelled traces (test/watch/traces/generated.jsonl).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EARLY_OPTIONS,
  EarlyWatch,
  coverageLine,
  earlyAlertReply,
  earlyCheck,
  type EarlyAlert,
  type EarlyAlertOptions,
} from '../../src/watch/early-alert.js';
import { toMs } from '../../src/watch/series.js';
import { isProcessSample, type Sample } from '../../src/watch/types.js';
import { fixSummary } from '../../src/watch/digest.js';
import { parseConfig } from '../../src/config.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { TRACES_PATH } from './generate-traces.js';
import { buildSamples, decodeTrace, prng, trainingProcess, type ProcModel, type TrainSpec } from './generator.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const MIN = 60_000;
const H = 3_600_000;
const H100 = 81559;
const LEAK = 7.5 * 1024; // MiB/h

function job(rnd: () => number, spec: Omit<TrainSpec, 'startMs'> & { startMin?: number; endMin?: number; gpu?: number; pid?: number }): ProcModel {
  const { startMin = 0, endMin = 1e6, gpu = 0, pid = 4242, ...s } = spec;
  return trainingProcess({ gpu, pid, user: 'alice', command: 'python train.py', toMs: T0 + endMin * MIN }, { ...s, startMs: T0 + startMin * MIN }, rnd);
}

/** Samples every minute from T0 (sampling starts then) for `minutes`, on a card of `totalMiB`. */
function samplesOf(minutes: number, totalMiB: number, procs: (rnd: () => number) => ProcModel[], seed = 1): Sample[] {
  const rnd = prng(seed);
  return buildSamples({ host: 'gpu1', t0: T0, hours: minutes / 60, gpuTotalMiB: totalMiB, procs: procs(rnd) }, rnd);
}

/** Rounds of samples as the sampler writes them (one timestamp per round), in time order. */
function rounds(samples: Sample[]): { ms: number; samples: Sample[] }[] {
  const out: { ms: number; samples: Sample[] }[] = [];
  for (const s of samples) {
    const ms = toMs(s.ts);
    if (out.length && out[out.length - 1].ms === ms) out[out.length - 1].samples.push(s);
    else out.push({ ms, samples: [s] });
  }
  return out;
}

/** Feeds every round and checks after each, as the runtime does: the alerts with the round they came after. */
function watchRounds(samples: Sample[], options: Partial<EarlyAlertOptions> = {}): { ms: number; round: number; alert: EarlyAlert }[] {
  const watch = new EarlyWatch(options);
  const found: { ms: number; round: number; alert: EarlyAlert }[] = [];
  for (const [round, r] of rounds(samples).entries()) {
    watch.add(r.samples);
    for (const alert of watch.check(r.ms)) {
      found.push({ ms: r.ms, round, alert });
      watch.markAlerted(alert.key);
    }
  }
  return found;
}

/** The card as it is for each sample, with `headroomMiB` free: a near-full card, so the shape alone must keep quiet. */
const nearFull = (samples: Sample[], headroomMiB: number): Sample[] =>
  samples.map((s) => (isProcessSample(s) ? { ...s, gpuTotalMiB: s.gpuUsedMiB + headroomMiB } : s));

const minutesAfter = (ms: number, from = T0) => (ms - from) / MIN;

describe('early alert: a 7.5 GiB/h leak', () => {
  // The card is sized so the leak is about an hour from full when sampling starts: 7.5 GiB/h needs
  // 7.5 GiB of headroom for an hour, plus the validation peak the job will need again.
  const cases: { name: string; spec: Omit<TrainSpec, 'startMs' | 'leak'> & { startMin?: number }; block: number; seed: number; peak?: number }[] = [
    { name: '20 MiB segments, running before sampling', spec: { baseMiB: 40000, startMin: -120 }, block: 20, seed: 1 },
    { name: '2 MiB blocks, jitter and workspace blips', spec: { baseMiB: 52000, startMin: -45, jitterMiB: 6, blip: [0.02, 300] }, block: 2, seed: 2 },
    {
      name: '20 MiB segments under hourly validation peaks with empty_cache (a peak in the first minutes)',
      spec: { baseMiB: 36000, startMin: -57, validation: { everyMin: 60, durMin: 8, peakMiB: 6000, emptyCache: true, dipProb: 0.5, dipMiB: 900 } },
      block: 20,
      seed: 3,
      peak: 6000,
    },
    {
      name: '128 MiB tensors after a first validation that stayed cached',
      spec: { baseMiB: 30000, startMin: -200, validation: { everyMin: 60, durMin: 10, peakMiB: 4000, emptyCache: false } },
      block: 128,
      seed: 4,
    },
    {
      name: '64 MiB blocks with a dynamic-shape record in the window',
      spec: { baseMiB: 45000, startMin: -30, ratchet: [[34, 1500]] },
      block: 64,
      seed: 5,
    },
  ];
  for (const c of cases)
    it(`${c.name}: found within 10 minutes of samples, an hour or less from full, posted once`, () => {
      for (const seed of [c.seed, c.seed + 20, c.seed + 40]) leakFound(c, seed);
    });

  function leakFound(c: (typeof cases)[number], seed: number): void {
    const rnd0 = prng(100 + seed);
    const peak = c.peak ?? 0;
    // Where the job stands at T0 (its level after warm-up and any cached validation peak), so the card can be sized.
    const probe = job(rnd0, { ...c.spec, jitterMiB: 0, blip: undefined });
    const levelAtT0 = probe.mib(T0 + 30_000);
    const total = levelAtT0 + 350 + peak + LEAK;
    const samples = samplesOf(40, total, (r) => [job(r, { ...c.spec, leak: { slopeMiBPerHour: LEAK, startMs: T0, blockMiB: c.block } })], seed);
    const found = watchRounds(samples);
    expect({ seed, alerts: found.length }).toEqual({ seed, alerts: 1 }); // once per process, however many rounds follow
    const [{ round, alert }] = found;
    // Within 10 minutes of samples: by the 11th round (a round a minute, give or take the collector's 2 s).
    expect(round, `seed ${seed}`).toBeLessThanOrEqual(10);
    expect(alert.verdict.alert).toBe(true);
    expect(alert.finding.hoursToFull, `seed ${seed}`).toBeLessThanOrEqual(1);
    expect(Math.abs(alert.finding.slopeMiBPerHour - LEAK) / LEAK, `seed ${seed}`).toBeLessThan(0.3);
    expect(alert.finding).toMatchObject({ kind: 'leak', host: 'gpu1', gpu: 0, pid: 4242, user: 'alice', rule: 'growing-memory-leak' });
    expect(alert.finding.series.length).toBeGreaterThanOrEqual(8);
    expect(alert.sampledMinutes).toBeGreaterThanOrEqual(DEFAULT_EARLY_OPTIONS.minMinutes);
  }

  it('a leak that starts 3 h into a watched job is found within 10 minutes of its start', () => {
    for (const seed of [11, 12, 13]) {
      const start = T0 + 180 * MIN;
      const total = 40000 + 350 + 6000 + LEAK;
      const samples = samplesOf(
        200,
        total,
        (r) => [
          job(r, {
            baseMiB: 40000,
            startMin: -30,
            validation: { everyMin: 45, durMin: 6, peakMiB: 6000, emptyCache: true, dipProb: 0.4, dipMiB: 900 },
            leak: { slopeMiBPerHour: LEAK, startMs: start, blockMiB: 20 },
          }),
        ],
        seed,
      );
      const found = watchRounds(samples);
      expect(found.map((f) => minutesAfter(f.ms, start) <= 10 && minutesAfter(f.ms, start) > 0)).toEqual([true]);
    }
  });

  it('a process that starts with the leak during the watch: found once its warm-up steps are behind 8 minutes of rise', () => {
    const total = 30000 + 350 + LEAK;
    const samples = samplesOf(40, total, (r) => [
      job(r, { baseMiB: 30000, startMin: 2, leak: { slopeMiBPerHour: LEAK, startMs: T0 + 2 * MIN, blockMiB: 20 } }),
    ]);
    const found = watchRounds(samples);
    expect(found).toHaveLength(1);
    // The generator's warm-up steps come up to 9 minutes after the start; the last is taken out as a one-off step.
    expect(minutesAfter(found[0].ms, T0 + 2 * MIN)).toBeLessThanOrEqual(9 + DEFAULT_EARLY_OPTIONS.minMinutes);
  });

  it('the same leak with the card five hours from full is not an early alert (the digest follows it)', () => {
    const total = 40000 + 350 + 5 * LEAK;
    const samples = samplesOf(60, total, (r) => [job(r, { baseMiB: 40000, startMin: -60, leak: { slopeMiBPerHour: LEAK, startMs: T0, blockMiB: 20 } })]);
    expect(watchRounds(samples)).toEqual([]);
    // ... and is with the horizon at 6 h (watch.early_alert_hours).
    expect(watchRounds(samples, { withinHours: 6 })).toHaveLength(1);
  });

  it('fewer than 8 minutes of samples are never enough', () => {
    const total = 40000 + 350 + 2000;
    const samples = samplesOf(7, total, (r) => [job(r, { baseMiB: 40000, startMin: -60, leak: { slopeMiBPerHour: 4 * LEAK, startMs: T0, blockMiB: 20 } })]);
    expect(watchRounds(samples)).toEqual([]);
  });

  it('checked in slices with yields between them (as after a round): the same alert at the same round', async () => {
    const total = 40000 + 350 + LEAK;
    const samples = samplesOf(30, total, (r) => [
      job(r, { baseMiB: 40000, startMin: -60, leak: { slopeMiBPerHour: LEAK, startMs: T0, blockMiB: 20 } }),
      ...[1, 2, 3].map((gpu) => job(r, { baseMiB: 30000, startMin: -60, gpu, pid: 5000 + gpu })),
    ]);
    const watch = new EarlyWatch();
    const sliced: { round: number; key: string }[] = [];
    for (const [round, r] of rounds(samples).entries()) {
      watch.add(r.samples);
      for (const a of await watch.checkYielding(r.ms, 1)) {
        sliced.push({ round, key: a.key });
        watch.markAlerted(a.key);
      }
    }
    expect(sliced).toEqual(watchRounds(samples).map((f) => ({ round: f.round, key: f.alert.key })));
    expect(sliced).toHaveLength(1);
  });

  it('a reused pid with a new start time is a new process: alerted again', () => {
    const total = 40000 + 350 + LEAK;
    const samples = samplesOf(70, total, (r) => [
      job(r, { baseMiB: 40000, startMin: -60, endMin: 25, leak: { slopeMiBPerHour: LEAK, startMs: T0, blockMiB: 20 } }),
      job(r, { baseMiB: 40000, startMin: 26, leak: { slopeMiBPerHour: LEAK, startMs: T0 + 26 * MIN, blockMiB: 20 } }),
    ]);
    const found = watchRounds(samples);
    expect(found).toHaveLength(2);
    expect(new Set(found.map((f) => f.alert.key)).size).toBe(2);
  });
});

describe("early alert: the detector's labelled traces stay quiet", () => {
  const traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);

  it('every trace (non-leak scenarios, slow creeps, idle, host RAM) on its own card: no alert after any round', () => {
    for (const tr of traces) expect({ id: tr.id, found: watchRounds(tr.samples).map((f) => f.alert.finding.pid) }).toEqual({ id: tr.id, found: [] });
  });

  it('the non-leak scenarios on a card 2 GiB from full at every sample: the shape alone keeps them quiet', () => {
    const negatives = traces.filter((tr) => tr.expected.length === 0);
    expect(negatives.length).toBeGreaterThanOrEqual(20);
    for (const tr of negatives)
      expect({ id: tr.id, found: watchRounds(nearFull(tr.samples, 2048)).map((f) => f.alert.verdict.reason) }).toEqual({ id: tr.id, found: [] });
  });
});

describe('early alert: real-shaped non-leaks on a near-full card', () => {
  const quiet = (name: string, minutes: number, procs: (rnd: () => number) => ProcModel[], seeds = [1, 2, 3, 4]) =>
    it(name, () => {
      for (const seed of seeds) {
        const samples = nearFull(samplesOf(minutes, H100, procs, seed), 2048);
        expect({
          seed,
          found: watchRounds(samples).map((f) => `${f.alert.verdict.reason} ${Math.round(f.alert.verdict.slopeMiBPerHour)} MiB/h at ${minutesAfter(f.ms)} min`),
        }).toEqual({ seed, found: [] });
      }
    });

  // Warm-up: context, weights, optimizer state and cuDNN workspaces in steps over the first minutes.
  for (const base of [10000, 40000, 72000]) quiet(`warm-up to ${base / 1000} GB while sampled, then flat`, 90, (r) => [job(r, { baseMiB: base, startMin: 5 })]);
  quiet('warm-up with weights loaded shard by shard over 4 minutes', 60, (r) => [
    job(r, {
      baseMiB: 30000,
      startMin: 2,
      ratchet: [...Array(8).keys()].map((i) => [1 + i * 0.5, 1500] as [number, number]),
    }),
  ]);
  quiet('warm-up with cuDNN autotune records shrinking over the first 20 minutes', 60, (r) => [
    job(r, {
      baseMiB: 35000,
      startMin: 1,
      ratchet: [
        [4, 1200],
        [6, 700],
        [9, 400],
        [13, 200],
        [19, 90],
      ],
    }),
  ]);

  // Validation peaks: the eval batch's activations at once, kept cached or given back by empty_cache.
  quiet('validation peaks every 30 min given back by empty_cache, with the dips caught', 180, (r) => [
    job(r, { baseMiB: 40000, startMin: -20, validation: { everyMin: 30, durMin: 8, peakMiB: 6000, emptyCache: true, dipProb: 0.8, dipMiB: 900 } }),
  ]);
  quiet('a first validation that stays cached', 120, (r) => [
    job(r, { baseMiB: 30000, startMin: -50, validation: { everyMin: 60, durMin: 10, peakMiB: 9000, emptyCache: false } }),
  ]);
  quiet('long validation passes (25 min, +10 GiB) with jitter', 240, (r) => [
    job(r, {
      baseMiB: 50000,
      startMin: -10,
      jitterMiB: 5,
      validation: { everyMin: 90, durMin: 25, peakMiB: 10000, emptyCache: true, dipProb: 0.3, dipMiB: 700 },
    }),
  ]);
  quiet('validation whose eval batches grow in three steps over 3 minutes, held, then given back', 200, (r) => {
    const base = job(r, { baseMiB: 38000, startMin: -15 });
    return [
      {
        ...base,
        mib: (t: number) => {
          const into = ((t - T0) / MIN) % 50;
          const extra = into < 20 ? 0 : into < 21 ? 2500 : into < 22 ? 4200 : into < 35 ? 5000 : 0;
          return base.mib(t) + extra;
        },
      },
    ];
  });

  // The caching allocator's steps: segments reserved at once, a few and irregular, then none.
  quiet('fragmentation: three 2 GiB segments within 10 minutes, then flat', 60, (r) => [
    job(r, {
      baseMiB: 42000,
      startMin: -90,
      ratchet: [
        [92, 2048],
        [96, 2048],
        [101, 1024],
      ],
    }),
  ]);
  quiet('dynamic shapes: records at growing gaps and shrinking sizes', 240, (r) => [
    job(r, {
      baseMiB: 45000,
      startMin: -5,
      ratchet: [
        [12, 1500],
        [20, 900],
        [35, 500],
        [60, 300],
        [110, 160],
        [200, 80],
      ],
    }),
  ]);
  quiet('one-sample workspace blips up to 1.5 GiB and jitter', 120, (r) => [job(r, { baseMiB: 60000, startMin: -30, jitterMiB: 8, blip: [0.05, 1500] })]);

  // Jobs that level off: a bounded cache that fills and stops, fast at first.
  for (const tauMin of [3, 5, 8, 12])
    quiet(`a cache that fills 1.5 GiB and levels off (time constant ${tauMin} min)`, 90, (r) => {
      const base = job(r, { baseMiB: 40000, startMin: -60 });
      const from = T0 + 15 * MIN;
      return [{ ...base, mib: (t: number) => base.mib(t) + (t < from ? 0 : 20 * Math.floor((1536 * (1 - Math.exp(-(t - from) / (tauMin * MIN)))) / 20)) }];
    });
  quiet('a rise of 6 minutes that stops (a cache filled to its limit)', 60, (r) => [
    job(r, { baseMiB: 40000, startMin: -60, leak: { slopeMiBPerHour: 12 * 1024, startMs: T0 + 10 * MIN, stopMs: T0 + 16 * MIN, blockMiB: 20 } }),
  ]);
});

describe('early alert: the check itself', () => {
  it('says why not: too short, flat, a step, levelling off', () => {
    // 1 GiB free: any steady rise over 1 GiB/h fills it within the hour.
    const at = (mins: number[], mib: number[]) => ({
      processStartMs: T0 - H,
      times: mins.map((m) => T0 + m * MIN),
      mib,
      gpuTotalMiB: mib[mib.length - 1] + 1500,
      gpuUsedMiB: mib[mib.length - 1] + 500,
    });
    const mins = [...Array(12).keys()];
    expect(
      earlyCheck(
        at(
          mins.slice(0, 7),
          mins.slice(0, 7).map((m) => 30000 + 200 * m),
        ),
      ).reason,
    ).toBe('too short');
    expect(
      earlyCheck(
        at(
          mins,
          mins.map(() => 30000),
        ),
      ).reason,
    ).toBe('flat');
    expect(
      earlyCheck(
        at(
          mins,
          mins.map((m) => (m < 6 ? 30000 : 33000)),
        ),
      ).alert,
    ).toBe(false);
    expect(
      earlyCheck(
        at(
          mins,
          mins.map((m) => 30000 + 200 * m),
        ),
      ).alert,
    ).toBe(true);
    expect(
      earlyCheck(
        at(
          mins,
          mins.map((m) => 30000 + Math.round(2000 * (1 - Math.exp(-m / 2)))),
        ),
      ).alert,
    ).toBe(false);
  });

  it('the reply: slope in GiB/h, time to full, how long the watch has looked, the fix by shape; in zh too', async () => {
    const rules = await loadRuleBase();
    const total = 40000 + 350 + LEAK;
    const samples = samplesOf(20, total, (r) => [job(r, { baseMiB: 40000, startMin: -60, leak: { slopeMiBPerHour: LEAK, startMs: T0, blockMiB: 20 } })]);
    const [{ alert }] = watchRounds(samples);
    // A steady rise between samples: the digest's fix for that shape (references kept across iterations).
    expect(alert.finding.pattern).toBe('steady');
    const en = earlyAlertReply(alert, rules, {}, 'en', 1);
    const text = JSON.stringify(en);
    expect(text).toContain(`Fix: ${fixSummary('growing-memory-leak', rules, 'steady', 'en')}`);
    expect(text).toContain('loss.item()');
    expect(en.title).toMatch(/^Early leak alert: gpu1 GPU 0 full in \d+ min$/);
    expect(text).toMatch(/rises 7\.\d GiB\/h|rises [67]\.\d GiB\/h|rises 8\.\d GiB\/h/);
    expect(text).toContain(`sampled this process for ${Math.round(alert.sampledMinutes)} min`);
    expect(text).toMatch(/▁.*█|█/); // the series as a sparkline
    const zh = JSON.stringify(earlyAlertReply(alert, undefined, {}, 'zh', 1));
    expect(zh).toContain('泄漏预警');
    expect(zh).toContain('GiB');
  });

  it('/gpu watch coverage: how long sampled, when each finding becomes possible', () => {
    expect(coverageLine(T0, T0 + 5 * MIN, DEFAULT_EARLY_OPTIONS, 'en')).toBe(
      'Sampled for 5 min. Early alert (a steady rise that fills the card within 1 h, after 8 min of it): possible in 3 min. Digest findings (110 min of samples after a process starts, at the earliest): possible in 105 min.',
    );
    expect(coverageLine(T0, T0 + 3 * H, DEFAULT_EARLY_OPTIONS, 'en')).toContain('possible now. Digest findings');
    expect(coverageLine(null, T0, DEFAULT_EARLY_OPTIONS, 'zh')).toContain('8 分钟');
  });
});

describe('config: watch.early_alert_hours', () => {
  it('defaults to 1 h, takes up to 24, refuses 0 and more than 24 naming the key', () => {
    expect(parseConfig({}).watch.early_alert_hours).toBe(1);
    expect(parseConfig({ watch: { early_alert_hours: 6 } }).watch.early_alert_hours).toBe(6);
    expect(() => parseConfig({ watch: { early_alert_hours: 0 } })).toThrow(/watch\.early_alert_hours.*more than 0/);
    expect(() => parseConfig({ watch: { early_alert_hours: 48 } })).toThrow(/watch\.early_alert_hours.*at most 24/);
  });
});
