// Edges of src/watch/detector.ts that the generated traces of detector.test.ts and detector-findings.test.ts
// leave open (issue 22's mutation run: each case is where a boundary decides), on hand-made samples: one
// a minute, each process's memory a staircase of 10-minute windows, so every figure is known exactly.
import { describe, expect, it } from 'vitest';
import { detectLeaks } from '../../src/watch/detector.js';
import { t } from '../../src/core/i18n.js';
import { DEFAULT_OPTIONS, type Finding, type ProcessSample, type Sample } from '../../src/watch/types.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const MIN = 60_000;
const H = 60 * MIN;
const W = DEFAULT_OPTIONS.windowMinutes * MIN;
const TOTAL = 81559;

interface Proc {
  pid: number;
  gpu?: number;
  user?: string;
  command?: string;
  /** Process start (default: an hour before T0, so its warm-up is over before the first sample). */
  startMs?: number;
  /** MiB per 10-minute window from T0. */
  levels: number[];
  /** GPU utilisation (0: idle). */
  util?: number;
  /** Minutes sampled (default: all the windows); the last sample is at T0 + (minutes - 1) min. */
  minutes?: number;
}

function samplesOf(p: Proc): ProcessSample[] {
  const minutes = p.minutes ?? (p.levels.length * W) / MIN;
  return Array.from({ length: minutes }, (_, i) => {
    const ts = T0 + i * MIN;
    const mib = p.levels[Math.min(p.levels.length - 1, Math.floor((i * MIN) / W))];
    return {
      ts,
      host: 'gpu1',
      gpu: p.gpu ?? 0,
      gpuTotalMiB: TOTAL,
      gpuUsedMiB: mib,
      utilizationPct: p.util ?? 60,
      pid: p.pid,
      processStart: p.startMs ?? T0 - H,
      user: p.user ?? 'alice',
      command: p.command ?? 'python train.py',
      processMiB: mib,
    };
  });
}
const byTime = (...procs: Proc[]): Sample[] => procs.flatMap(samplesOf).sort((a, b) => Number(a.ts) - Number(b.ts));
/** 60 windows (10 h) at `base`, raised by each [window, MiB] step from that window on. */
function stairs(base: number, steps: [number, number][], n = 60): number[] {
  let level = base;
  return Array.from({ length: n }, (_, i) => {
    for (const [at, d] of steps) if (at === i) level += d;
    return level;
  });
}
/** A creep of 10 MiB every 30 min from window 6: 17 steps, 170 MiB (growth.test.ts's first staircase). */
const CREEP = stairs(
  40000,
  Array.from({ length: 17 }, (_, k) => [6 + 3 * k, 10]),
);
const CREEP_RISE = 170;
const kinds = (fs: Finding[]) => fs.map((f) => `${f.kind}@${f.gpu ?? '-'}`).sort();

describe('ranks of one job: the edges', () => {
  it('the creep alone is a leak of 170 MiB (the rise the peers below are measured against)', () => {
    const [f, ...rest] = detectLeaks(byTime({ pid: 100, levels: CREEP }));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ kind: 'leak', gpu: 0 });
    expect(f.why?.vars.rise).toBe(CREEP_RISE);
  });

  it('a different command started exactly 2 min after is a rank of the same job; a second later it is not', () => {
    const pair = (apartMs: number) =>
      detectLeaks(
        byTime(
          { pid: 100, gpu: 0, command: 'python train.py --rank 0', levels: CREEP },
          { pid: 101, gpu: 1, command: 'python train.py --rank 1', startMs: T0 - H + apartMs, levels: stairs(40000, []) },
        ),
      );
    expect(kinds(pair(2 * MIN))).toEqual(['rank0_growth@0']);
    expect(kinds(pair(2 * MIN + 1000))).toEqual(['leak@0']);
  });

  it('ranks started one after another 90 s apart are one job however the processes are listed (grouping is transitive)', () => {
    // rank 0 grows; ranks 1..3 stay flat; rank 0 and rank 3 started 4.5 min apart, each next rank 90 s after the one before.
    const ranks: Proc[] = [0, 1, 2, 3].map((r) => ({
      pid: 300 + r,
      gpu: r,
      command: `python train.py --local_rank ${r}`,
      startMs: T0 - H + r * 90_000,
      levels: r === 0 ? CREEP : stairs(40000, []),
    }));
    for (const order of [ranks, [...ranks].reverse(), [ranks[2], ranks[0], ranks[3], ranks[1]]]) {
      expect(kinds(detectLeaks(byTime(...order)))).toEqual(['rank0_growth@0']);
    }
    // Broken chain: rank 3 started 3 min after rank 2, so it is a job of its own and rank 0's job is ranks 0-2.
    const apart = ranks.map((p, r) => (r === 3 ? { ...p, startMs: T0 - H + 2 * 90_000 + 3 * MIN } : p));
    expect(kinds(detectLeaks(byTime(...apart)))).toEqual(['rank0_growth@0']);
    // Two of three chained ranks grow: a majority, so a leak on both, whichever rank is listed first (pairwise
    // grouping from the first one seen called both rank-0 growth when rank 0 came first, and leaks otherwise).
    const twoGrow: Proc[] = [0, 1, 2].map((r) => ({ ...ranks[r], levels: r === 1 ? stairs(40000, []) : CREEP }));
    for (const order of [twoGrow, [twoGrow[1], twoGrow[0], twoGrow[2]], [...twoGrow].reverse()]) {
      expect(kinds(detectLeaks(byTime(...order)))).toEqual(['leak@0', 'leak@2']);
    }
    // Another user's process started in between links nothing.
    const otherUser = ranks.map((p, r) => (r === 1 ? { ...p, user: 'bob' } : p));
    expect(kinds(detectLeaks(byTime(...otherUser)))).toEqual(['leak@0']);
  });

  it("a peer whose floor rose exactly a quarter of the grower's rise is not flat; just under it is", () => {
    const peerStep = (mib: number) => detectLeaks(byTime({ pid: 100, gpu: 0, levels: CREEP }, { pid: 101, gpu: 1, levels: stairs(40000, [[20, mib]]) }));
    expect(kinds(peerStep(CREEP_RISE / 4))).toEqual(['leak@0']);
    expect(kinds(peerStep(CREEP_RISE / 4 - 0.5))).toEqual(['rank0_growth@0']);
  });
});

describe('idle memory held: the edges', () => {
  const idle = (minutes: number): Proc => ({ pid: 200, gpu: 0, util: 0, levels: Array(60).fill(2048), minutes });

  it('held idle for exactly idleHours (sampled a minute apart) is reported; a minute less is not', () => {
    const samples = (minutes: number) => byTime(idle(minutes));
    expect(DEFAULT_OPTIONS.idleHours).toBe(2);
    // The first idle sample starts the stretch: 121 samples a minute apart span 120 min.
    expect(kinds(detectLeaks(samples(121)))).toEqual(['idle_held@0']);
    expect(detectLeaks(samples(120))).toEqual([]);
  });

  it('a process last seen one gap (3 sampling intervals) before its host is still running; a minute more and it exited', () => {
    // The idle process stops after 3 h; a busy one on GPU 1 goes on for 3 or 4 more minutes.
    const other = (minutes: number): Proc => ({ pid: 201, gpu: 1, levels: Array(60).fill(30000), minutes });
    expect(DEFAULT_OPTIONS.sampleIntervalSec * 3 * 1000).toBe(3 * MIN);
    expect(kinds(detectLeaks(byTime(idle(180), other(183))))).toEqual(['idle_held@0']);
    expect(detectLeaks(byTime(idle(180), other(184)))).toEqual([]);
  });
});

describe('host RAM creep: the edges', () => {
  // Hour-long windows, so window centres are whole hours plus a half and a slope of whole MiB per hour is exact.
  const HOURLY = { windowMinutes: 60 };
  const TOTAL_RAM = 262144; // MiB, 256 GiB
  /** Host RAM sampled every 10 min, used rising by rise[h] MiB in hour h to 40000 MiB available (15%: no pressure), beside a flat DataLoader job. */
  function rising(rise: number[]): Sample[] {
    const last = rise[rise.length - 1];
    const ram: Sample[] = Array.from({ length: rise.length * 6 }, (_, i) => {
      const used = TOTAL_RAM - 40000 - last + rise[Math.floor(i / 6)];
      return { ts: T0 + i * 10 * MIN, host: 'gpu1', kind: 'host', memTotalBytes: TOTAL_RAM * 2 ** 20, memAvailableBytes: (TOTAL_RAM - used) * 2 ** 20 };
    });
    return [...byTime({ pid: 300, levels: Array(rise.length * 6).fill(20000) }), ...ram];
  }
  const linear = (hours: number, perHour: number) => Array.from({ length: hours }, (_, h) => perHour * h);
  /** 12 h: `first` MiB/h for 6 h, a step of `step` MiB, then `second` MiB/h. */
  const halves = (first: number, step: number, second: number) =>
    Array.from({ length: 12 }, (_, h) => (h < 6 ? first * h : 5 * first + step + second * (h - 5)));

  it('used RAM rising at exactly minRamSlopeMiBPerHour is a creep; under that floor it is not', () => {
    // 40000 MiB left at 256 MiB/h is 156 h, within ramFullWithinHours (a week).
    const [f, ...rest] = detectLeaks(rising(linear(14, 256)), { ...HOURLY, minRamSlopeMiBPerHour: 256 });
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ kind: 'host_ram', slopeMiBPerHour: 256, why: { key: 'finding.hostRamRising' } });
    expect(detectLeaks(rising(linear(14, 256)), { ...HOURLY, minRamSlopeMiBPerHour: 257 })).toEqual([]);
  });

  it("each half of the stretch must rise more than 30% of the whole's rate: at exactly 30% it is no creep", () => {
    // The whole's Theil-Sen slope is 20 MiB/h for 6 -> 50 -> 20 and 7 -> 50 -> 20 (30 for 30 -> 100 -> 9 and 30 -> 100 -> 10),
    // so a half at 6 (or 9) is exactly 30% of it, and 7 (or 10) is over.
    const o = { ...HOURLY, minRamSlopeMiBPerHour: 1, ramFullWithinHours: 1e6 };
    const found = (rise: number[]) => detectLeaks(rising(rise), o).map((f) => `${f.kind} ${f.slopeMiBPerHour}`);
    expect(found(halves(7, 50, 20))).toEqual(['host_ram 20']);
    expect(found(halves(6, 50, 20))).toEqual([]);
    expect(found(halves(30, 100, 10))).toEqual(['host_ram 30']);
    expect(found(halves(30, 100, 9))).toEqual([]);
  });
});

describe('host RAM pressure: the edges', () => {
  /** Three 10-minute windows of host RAM (too few for a creep) of 100000 MiB with the given % available each, beside a DataLoader job. */
  function available(pcts: number[]): Sample[] {
    const ram: Sample[] = Array.from({ length: pcts.length * 10 }, (_, i) => ({
      ts: T0 + i * MIN,
      host: 'gpu1',
      kind: 'host',
      memTotalBytes: 100000 * 2 ** 20,
      memAvailableBytes: pcts[Math.floor(i / 10)] * 1000 * 2 ** 20,
    }));
    return [...byTime({ pid: 300, levels: Array(pcts.length).fill(20000) }), ...ram];
  }

  it('available under ramAvailablePct in both of the last two windows is pressure; exactly at it in either is not', () => {
    expect(DEFAULT_OPTIONS.ramAvailablePct).toBe(10);
    expect(detectLeaks(available([50, 9, 9])).map((f) => f.why?.key)).toEqual(['finding.hostRam']);
    expect(detectLeaks(available([50, 10, 9]))).toEqual([]);
    expect(detectLeaks(available([50, 9, 10]))).toEqual([]);
  });
});

describe('every finding says why, in English and as a catalogue message', () => {
  it('growth, idle memory and host RAM each carry their message and its English line', () => {
    const ram: Sample[] = Array.from({ length: 60 }, (_, i) => ({
      ts: T0 + i * MIN,
      host: 'gpu1',
      kind: 'host',
      memTotalBytes: 100 * 2 ** 30,
      memAvailableBytes: 5 * 2 ** 30, // 5% available: pressure
    }));
    const findings = detectLeaks([
      ...byTime({ pid: 100, gpu: 0, levels: CREEP }, { pid: 200, gpu: 1, user: 'bob', util: 0, levels: Array(60).fill(2048) }),
      ...ram,
    ]);
    expect(kinds(findings)).toEqual(['host_ram@-', 'idle_held@1', 'leak@0']);
    const keyOf = { leak: 'finding.growth', idle_held: 'finding.idle', host_ram: 'finding.hostRam' } as const;
    for (const f of findings) {
      expect(f.why?.key, f.kind).toBe(keyOf[f.kind as keyof typeof keyOf]);
      expect(f.detail, f.kind).toBe(t('en', f.why!.key, f.why!.vars));
    }
  });
});
