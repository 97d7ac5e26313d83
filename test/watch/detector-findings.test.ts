// The detector's findings beyond "is it growing": which job a rank belongs to, how urgent a finding is,
// when host RAM is reported, and exited processes. Traces from the generator (test/watch/generator.ts).
import { describe, expect, it } from 'vitest';
import { detectLeaks } from '../../src/watch/detector.js';
import { formatHours } from '../../src/watch/digest.js';
import { buildSamples, hostRamModel, idleProcess, prng, trainingProcess, type ProcModel, type TrainSpec } from './generator.js';
import { DEFAULT_OPTIONS, type Finding, type Sample } from '../../src/watch/types.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const H = 3_600_000;
const GiB = 1024 ** 3;
const TOTAL = 81559;
const DDP = 'python -m torch.distributed.run --nproc_per_node 2 train.py';

type JobSpec = Omit<TrainSpec, 'startMs'> & { startH?: number; endH?: number; gpu?: number; pid?: number; user?: string; command?: string };
function job(rnd: () => number, spec: JobSpec): ProcModel {
  const { startH = 0, endH = 1e3, gpu = 0, pid = 4242, user = 'alice', command = 'python train.py', ...s } = spec;
  return trainingProcess({ gpu, pid, user, command, toMs: T0 + endH * H }, { ...s, startMs: T0 + startH * H }, rnd);
}
function trace(
  hours: number,
  procs: (rnd: () => number) => ProcModel[],
  o: { gpuTotalMiB?: number; ram?: (rnd: () => number) => (t: number) => number; seed?: number } = {},
): Sample[] {
  // 512 GiB of host RAM when the trace has a host RAM model.
  const rnd = prng(o.seed ?? 11);
  return buildSamples(
    {
      host: 'gpu1',
      t0: T0,
      hours,
      gpuTotalMiB: o.gpuTotalMiB ?? TOTAL,
      procs: procs(rnd),
      hostRam: o.ram ? { totalBytes: 512 * GiB, usedBytes: o.ram(rnd) } : undefined,
    },
    rnd,
  );
}
const leak = (slopeMiBPerHour: number, startH = 1, blockMiB = 20) => ({ slopeMiBPerHour, startMs: T0 + startH * H, blockMiB });
const kinds = (fs: Finding[]) => fs.map((f) => `${f.kind}@${f.gpu ?? '-'}`).sort();

describe('ranks of one job', () => {
  it('two ranks, rank 0 grows, rank 1 flat: half the job growing is still rank-0 growth', () => {
    const samples = trace(10, (r) =>
      [0, 1].map((g) => job(r, { baseMiB: 40000, gpu: g, pid: 100 + g, command: DDP, leak: g === 0 ? leak(150, 1, 100) : undefined })),
    );
    expect(kinds(detectLeaks(samples))).toEqual(['rank0_growth@0']);
  });

  it("another user's flat job started at the same time on the other GPU is not a peer: a leak", () => {
    const samples = trace(10, (r) => [
      job(r, { baseMiB: 40000, gpu: 0, pid: 100, command: DDP, leak: leak(150, 1, 100) }),
      job(r, { baseMiB: 40000, gpu: 1, pid: 101, command: DDP, user: 'bob' }),
    ]);
    expect(kinds(detectLeaks(samples))).toEqual(['leak@0']);
  });

  it('a different command started 10 min later is another job; within 2 min it is a rank of the same job', () => {
    const pair = (startH: number) =>
      trace(10, (r) => [
        job(r, { baseMiB: 40000, gpu: 0, pid: 100, command: 'python train.py --local_rank=0', leak: leak(150, 1, 100) }),
        job(r, { baseMiB: 40000, gpu: 1, pid: 101, command: 'python train.py --local_rank=1', startH }),
      ]);
    expect(kinds(detectLeaks(pair(10 / 60)))).toEqual(['leak@0']);
    expect(kinds(detectLeaks(pair(1.5 / 60)))).toEqual(['rank0_growth@0']);
  });

  it('the same command on another GPU is a rank of the job even when started later (a relaunched rank)', () => {
    const samples = trace(10, (r) => [
      job(r, { baseMiB: 40000, gpu: 0, pid: 100, command: DDP, leak: leak(150, 1, 100) }),
      job(r, { baseMiB: 40000, gpu: 1, pid: 101, command: DDP, startH: 0.5 }),
    ]);
    expect(kinds(detectLeaks(samples))).toEqual(['rank0_growth@0']);
  });

  it('two processes of one job on the same GPU are not ranks on different GPUs: a leak', () => {
    const samples = trace(10, (r) => [
      job(r, { baseMiB: 30000, gpu: 0, pid: 100, command: DDP, leak: leak(150, 1, 100) }),
      job(r, { baseMiB: 20000, gpu: 0, pid: 101, command: DDP }),
    ]);
    expect(kinds(detectLeaks(samples))).toEqual(['leak@0']);
  });

  it('a peer with a small one-off step (under a quarter of the growth) is still flat: rank-0 growth', () => {
    const samples = trace(10, (r) => [
      job(r, { baseMiB: 40000, gpu: 0, pid: 100, command: DDP, leak: leak(150, 1, 100) }),
      job(r, { baseMiB: 40000, gpu: 1, pid: 101, command: DDP, ratchet: [[120, 100]] }),
    ]);
    expect(kinds(detectLeaks(samples))).toEqual(['rank0_growth@0']);
  });

  it('one process on one GPU is never rank-0 growth', () => {
    expect(kinds(detectLeaks(trace(10, (r) => [job(r, { baseMiB: 40000, command: DDP, leak: leak(150, 1, 100) })])))).toEqual(['leak@0']);
  });

  it('a peer whose floor rose by a quarter of the growth or more (a one-off step) is not flat: a leak on rank 0', () => {
    const samples = trace(10, (r) => [
      job(r, { baseMiB: 40000, gpu: 0, pid: 100, command: DDP, leak: leak(150, 1, 100) }),
      job(r, { baseMiB: 40000, gpu: 1, pid: 101, command: DDP, ratchet: [[120, 3000]] }),
    ]);
    expect(kinds(detectLeaks(samples))).toEqual(['leak@0']);
  });
});

describe('severity: worst first', () => {
  // The same 200 MiB/h creep on GPUs of different size: the less is free, the sooner it is full.
  const creepOn = (gpuTotalMiB: number) =>
    detectLeaks(trace(10, (r) => [job(r, { baseMiB: 40000, leak: leak(200, 1, 20) })], { gpuTotalMiB })).find((f) => f.kind === 'leak')!;

  it('100 when the GPU is full now, ~70 with 12 h left, 40 when it will not fill for weeks; fewer hours, higher', () => {
    const probe = creepOn(TOTAL);
    const used = probe.totalMiB - probe.hoursToFull! * probe.slopeMiBPerHour; // GPU used at the end
    const full = creepOn(Math.floor(used) - 100);
    expect(full.hoursToFull).toBe(0);
    expect(full.severity).toBe(100);
    const twelve = creepOn(Math.round(used + 12 * probe.slopeMiBPerHour));
    expect(Math.abs(twelve.hoursToFull! - 12)).toBeLessThan(1.5);
    expect(Math.abs(twelve.severity - 70)).toBeLessThanOrEqual(3);
    const three = creepOn(Math.round(used + 3 * probe.slopeMiBPerHour));
    expect(three.severity).toBeGreaterThan(twelve.severity);
    expect(three.severity).toBeLessThan(100);
    expect(probe.hoursToFull!).toBeGreaterThan(150);
    expect(probe.severity).toBeLessThanOrEqual(44);
    expect(probe.severity).toBeGreaterThanOrEqual(40);
  });

  it('idle memory ranks below growth; among growth, equal severity goes by slope', () => {
    const samples = trace(10, (r) => [
      job(r, { baseMiB: 30000, leak: leak(15, 1, 2) }),
      job(r, { gpu: 1, pid: 77, baseMiB: 30000, command: 'python b.py', leak: leak(30, 1, 2) }),
      job(r, { gpu: 2, pid: 78, baseMiB: 12000, command: 'python c.py', idleFromMs: T0 + 2 * H }),
    ]);
    const found = detectLeaks(samples);
    expect(found.map((f) => `${f.kind}@${f.gpu}`)).toEqual(['leak@1', 'leak@0', 'idle_held@2']);
    expect(found[0].severity).toBe(found[1].severity);
    // Idle: 5 + GiB-hours / 10, capped at 40.
    const idle = found[2];
    expect(idle.severity).toBe(Math.min(40, Math.round(5 + ((idle.currentMiB / 1024) * 8) / 10)));
    expect(idle.severity).toBeLessThan(40);
  });
});

describe('host RAM', () => {
  const steady = (usedGiB: (h: number) => number) => (rnd: () => number) => {
    const churn = hostRamModel(rnd, T0, 0, 0);
    return (t: number) => usedGiB((t - T0) / H) * GiB + churn(t);
  };
  const hostRam = (hours: number, usedGiB: (h: number) => number, procs?: (r: () => number) => ProcModel[]) =>
    detectLeaks(trace(hours, procs ?? ((r) => [job(r, { baseMiB: 20000 })]), { ram: steady(usedGiB) })).filter((f) => f.kind === 'host_ram');

  it('under 10% available over the last two windows is pressure; one window is a spike', () => {
    expect(hostRam(4, (h) => (h >= 3.7 ? 490 : 200))).toHaveLength(1);
    expect(hostRam(4, (h) => (h >= 3.87 ? 490 : 200))).toEqual([]);
    expect(hostRam(4, (h) => (h >= 3.835 && h < 3.99 ? 490 : 200))).toEqual([]); // the window before last only (230-240 min)
    expect(hostRam(0.25, () => 490)).toHaveLength(1); // two windows are enough
  });

  it('pressure with RAM use falling: severity 90, no slope, no hours to full', () => {
    const [f] = hostRam(4, (h) => 495 - 2 * h);
    expect(f).toMatchObject({ severity: 90, slopeMiBPerHour: 0, hoursToFull: null });
    expect(f.detail).toMatch(/^\d+\.\d% RAM available; DataLoader jobs: alice: python train\.py$/);
  });

  it('creep that fills RAM within days is reported with its horizon; one that levels off, starts only late, or takes weeks is not', () => {
    // 8 GiB/h from 300 GiB of 512: full in about a day.
    const [creep] = hostRam(12, (h) => 300 + 8 * h);
    expect(creep?.detail).toMatch(/used rising \d+ MiB\/h/);
    expect(Math.abs(creep.slopeMiBPerHour - 8192) / 8192).toBeLessThan(0.2);
    expect(creep.severity).toBeLessThan(90);
    expect(creep.hoursToFull).toBeLessThanOrEqual(DEFAULT_OPTIONS.ramFullWithinHours);
    // rose, then (nearly) flat; (nearly) flat, then a late rise: not sustained over both halves
    expect(hostRam(12, (h) => 250 + 16 * Math.min(h, 6) + 0.5 * Math.max(0, h - 6))).toEqual([]);
    expect(hostRam(12, (h) => 250 + 0.5 * Math.min(h, 6) + 16 * Math.max(0, h - 6))).toEqual([]);
    expect(hostRam(12, () => 250)).toEqual([]);
    expect(hostRam(12, (h) => 100 + 1 * h)).toEqual([]); // 1 GiB/h with 400 GiB free: weeks
    // 2 GiB/h with about 190 GiB free: full in about 4 days, reported with that horizon, below a day's urgency.
    const [days] = hostRam(12, (h) => 300 + 2 * h);
    expect(days?.hoursToFull).toBeGreaterThan(72);
    expect(days.hoursToFull).toBeLessThan(120);
    expect(days.severity).toBeLessThan(creep.severity);
    expect(formatHours(days.hoursToFull)).toMatch(/^[34](?:\.\d)? d$/);
  });

  it('under 12 windows (2 h) is too short for a trend', () => {
    expect(hostRam(1.75, (h) => 300 + 40 * h)).toEqual([]);
    expect(hostRam(1.9, (h) => 300 + 40 * h)).toHaveLength(1); // 12 windows
    expect(hostRam(2.5, (h) => 300 + 40 * h)).toHaveLength(1);
  });

  it("names the single DataLoader job's user, every job in the detail; a non-Python GPU process is no DataLoader job", () => {
    const [one] = hostRam(4, () => 490);
    expect(one).toMatchObject({ user: 'alice', totalMiB: 512 * 1024 });
    expect(one.detail).toMatch(/DataLoader jobs: alice: python train\.py$/);
    const [two] = hostRam(
      4,
      () => 490,
      (r) => [job(r, { baseMiB: 20000 }), job(r, { gpu: 1, pid: 5, baseMiB: 20000, user: 'bob', command: 'python b.py' })],
    );
    expect(two.user).toBeUndefined();
    expect(two.detail).toMatch(/DataLoader jobs: alice: python train\.py; bob: python b\.py$/);
    const four = (r: () => number) => ['a', 'b', 'c', 'd'].map((u, g) => job(r, { gpu: g, pid: 10 + g, baseMiB: 20000, user: u, command: 'python t.py' }));
    expect(hostRam(4, () => 490, four)[0].detail).toMatch(/DataLoader jobs: a: python t\.py; b: python t\.py; c: python t\.py$/); // the first three
    expect(
      hostRam(
        4,
        () => 490,
        (_r) => [idleProcess({ gpu: 0, pid: 9, user: 'u', command: './cuda_app --serve', startMs: T0, toMs: T0 + 9 * H }, 20000)],
      ),
    ).toEqual([]);
  });
});

describe('idle memory', () => {
  it('a process that sat idle for 3 h and then trained again is not idle', () => {
    const paused = {
      gpu: 0,
      pid: 31,
      user: 'u',
      command: 'python train.py',
      startMs: T0,
      toMs: T0 + 9 * H,
      mib: () => 20000,
      util: (t: number) => (t >= T0 + H && t < T0 + 4 * H ? 0 : 90),
    };
    expect(detectLeaks(trace(6, () => [paused]))).toEqual([]);
    expect(detectLeaks(trace(3.5, () => [paused])).map((f) => f.kind)).toEqual(['idle_held']);
  });
});

describe('exited processes', () => {
  it('a leak in a run that has exited is reported only with includeEnded', () => {
    const samples = trace(12, (r) => [
      job(r, { baseMiB: 30000, endH: 8, leak: leak(100, 1, 20) }),
      job(r, { baseMiB: 30000, startH: 8.1, pid: 999, command: 'python other.py' }),
    ]);
    expect(detectLeaks(samples)).toEqual([]);
    expect(detectLeaks(samples, { includeEnded: true }).map((f) => [f.kind, f.pid])).toEqual([['leak', 4242]]);
  });
});
