// The labelled trace set: negatives that fool a naive slope alarm (warm-up, saw-tooth, first-validation
// step, dynamic-shape ratchet, cache fill that stops, pid reuse, restarts, gaps, noise) and positives
// (creep of 5..200 MiB/h in 2 MiB / 20 MiB / large blocks, rank-0-only growth, idle held memory,
// host RAM creep and pressure). Each trace has its own PRNG stream, so adding one changes no other.
import {
  buildSamples,
  hostRamModel,
  idleProcess,
  prng,
  trainingProcess,
  type LabelledTrace,
  type LeakLabel,
  type ProcModel,
  type TraceLabel,
  type TraceSetup,
  type TrainSpec,
} from './generator.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const H = 3_600_000;
const H100 = 81559;
const A100 = 40960;
const RAM = 512 * 1024 ** 3;
const TRAIN = 'python train.py --config configs/resnet50.yaml';
const LLM = 'python finetune.py --model llama-7b --bf16';
const DDP = 'python -m torch.distributed.run --nproc_per_node 8 train.py';

type Build = (rnd: () => number) => Omit<TraceSetup, 'host' | 't0'> & { leak?: LeakLabel; description?: string };
interface Scenario extends Omit<TraceLabel, 'leak'> {
  build: Build;
}

/** One training process on GPU 0 from T0 + startH (negative startH: started before sampling). */
function proc(
  rnd: () => number,
  spec: Omit<TrainSpec, 'startMs'> & { startH?: number; endH?: number; gpu?: number; pid?: number; user?: string; command?: string },
): ProcModel {
  const { startH = 0, endH = 1e3, gpu = 0, pid = 4242, user = 'alice', command = TRAIN, ...s } = spec;
  return trainingProcess({ gpu, pid, user, command, toMs: T0 + endH * H }, { ...s, startMs: T0 + startH * H }, rnd);
}

const leakAt = (slope: number, startH: number, stepMiB: number, o: Partial<LeakLabel> = {}): LeakLabel => ({
  kind: 'leak',
  gpu: 0,
  slopeMiBPerHour: slope,
  start: new Date(T0 + startH * H).toISOString(),
  stepMiB,
  ...o,
});
const leakSpec = (l: LeakLabel, slackMiB?: number) => ({
  slopeMiBPerHour: l.slopeMiBPerHour,
  startMs: Date.parse(l.start),
  blockMiB: l.stepMiB,
  slackMiB,
});
const saw = (emptyCache: boolean, everyMin = 60, durMin = 8, peakMiB = 6000) => ({
  everyMin,
  durMin,
  peakMiB,
  emptyCache,
  dipProb: emptyCache ? 0.4 : 0,
  dipMiB: 900,
});

/** A creeping single-process job: slope MiB/h in blocks of stepMiB from startH, with extras. */
function creep(id: string, slope: number, stepMiB: number, startH: number, hours: number, extra: Partial<TrainSpec> = {}, description = ''): Scenario {
  return {
    id,
    description: description || `${slope} MiB/h creep in ${stepMiB} MiB blocks from ${startH} h, ${hours} h`,
    expected: slope >= 10 ? ['leak'] : [],
    belowThreshold: slope < 10 || undefined,
    build: (rnd) => {
      const leak = leakAt(slope, startH, stepMiB);
      return { hours, gpuTotalMiB: H100, leak, procs: [proc(rnd, { baseMiB: 30000, ...extra, leak: leakSpec(leak) })] };
    },
  };
}

const none = (id: string, description: string, build: Build): Scenario => ({ id, description, expected: [], build });

export const SCENARIOS: Scenario[] = [
  // ---- negatives: nothing to report ----
  none('plateau-8h', 'warm-up steps then flat, 10 GiB', (r) => ({ hours: 8, gpuTotalMiB: A100, procs: [proc(r, { baseMiB: 10000 })] })),
  none('plateau-24h-70g', 'warm-up then flat at 70 GiB, small jitter', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 70000, jitterMiB: 3 })],
  })),
  none('sawtooth-empty-cache', 'validation every hour, +6 GiB, empty_cache after (dips)', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 40000, validation: saw(true) })],
  })),
  none('sawtooth-long-validation', 'validation 25 min every 90 min, +10 GiB, empty_cache', (r) => ({
    hours: 12,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 50000, validation: saw(true, 90, 25, 10000) })],
  })),
  none('first-validation-step', 'validation peak stays cached: one step at 1 h, flat after', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 30000, validation: saw(false) })],
  })),
  none('dynamic-shape-ratchet', 'variable sequence lengths: records at 15 m..6 h, shrinking, then none', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [
      proc(r, {
        baseMiB: 45000,
        ratchet: [
          [15, 900],
          [35, 500],
          [70, 300],
          [140, 160],
          [260, 90],
          [380, 40],
        ],
      }),
    ],
  })),
  none('dynamic-shape-ratchet-8h', 'as above, trace ends 2 h after the last record', (r) => ({
    hours: 8,
    gpuTotalMiB: H100,
    procs: [
      proc(r, {
        baseMiB: 20000,
        ratchet: [
          [25, 700],
          [50, 420],
          [95, 260],
          [180, 130],
          [360, 60],
        ],
      }),
    ],
  })),
  none('noisy-plateau', 'jitter +-8 MiB and 2% one-sample workspace blips up to 400 MiB', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 35000, jitterMiB: 8, blip: [0.02, 400] })],
  })),
  none('cache-fill-stops', 'bounded cache grows 100 MiB/h for 3 h, then flat for 21 h', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 30000, leak: { slopeMiBPerHour: 100, startMs: T0 + H, blockMiB: 20, stopMs: T0 + 4 * H } })],
  })),
  none('pid-reuse', 'pid 4242 runs 10 h at 20 GiB, exits; a new process reuses pid 4242 at 30 GiB', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 20000, endH: 10 }), proc(r, { baseMiB: 30000, startH: 10.2, command: LLM, user: 'bob' })],
  })),
  none('restarts', 'same job restarted at 8 h and 16 h (new pids), each run flat', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [
      proc(r, { baseMiB: 30000, endH: 8 }),
      proc(r, { baseMiB: 30000, startH: 8.05, endH: 16, pid: 5001 }),
      proc(r, { baseMiB: 30000, startH: 16.05, pid: 5377 }),
    ],
  })),
  none('gaps', 'flat with a 2 h and a 30 min collector outage', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    gaps: [
      [6, 8],
      [14, 14.5],
    ],
    procs: [proc(r, { baseMiB: 30000, validation: saw(true, 60, 8, 3000) })],
  })),
  none('ddp-8-flat', '8 ranks, saw-tooth on all, none grows', (r) => ({
    hours: 12,
    gpuTotalMiB: H100,
    procs: [...Array(8).keys()].map((g) => proc(r, { baseMiB: 52000, gpu: g, pid: 7000 + g, command: DDP, validation: saw(true, 45, 6, 2000) })),
  })),
  none('shared-gpu-flat', 'two users share GPU 0, both flat', (r) => ({
    hours: 12,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 30000 }), proc(r, { baseMiB: 20000, pid: 6100, user: 'bob', command: LLM, startH: 1 })],
  })),
  none('idle-short', 'training 7 h, then idle 1 h holding 20 GiB (under idleHours)', (r) => ({
    hours: 8,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 20000, idleFromMs: T0 + 7 * H })],
  })),
  none('idle-small', 'idle 6 h holding only 600 MiB (a context, under idleMinMiB)', (_r) => ({
    hours: 6,
    gpuTotalMiB: H100,
    procs: [idleProcess({ gpu: 0, pid: 9000, user: 'carol', command: 'python -m ipykernel_launcher', startMs: T0, toMs: T0 + 7 * H }, 600)],
  })),
  none('host-ram-churn', 'host RAM 40% used with page-cache churn, no trend', (r) => ({
    hours: 12,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 30000 })],
    hostRam: { totalBytes: RAM, usedBytes: hostRamModel(r, T0, 200, 0) },
  })),
  none('host-ram-no-gpu-jobs', 'host RAM 95% used but no GPU processes on the host', (r) => ({
    hours: 6,
    gpuTotalMiB: H100,
    procs: [],
    gpuLevel: [0, 1],
    hostRam: { totalBytes: RAM, usedBytes: hostRamModel(r, T0, 486, 0) },
  })),
  creep('creep-5-below-threshold', 5, 2, 1, 24),
  none('sawtooth-step-jitter', 'first validation step, saw-tooth after, jitter', (r) => ({
    hours: 24,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 40000, jitterMiB: 4, validation: saw(false, 60, 10, 3000), ratchet: [[130, 2000]] })],
  })),
  none('started-before-sampling', 'process started 5 h before sampling, flat, saw-tooth', (r) => ({
    hours: 12,
    gpuTotalMiB: H100,
    procs: [proc(r, { baseMiB: 60000, startH: -5, validation: saw(true, 30, 5, 4000) })],
  })),

  // ---- GPU memory creep ----
  creep('creep-10-small-blocks-from-start', 10, 2, 0, 24, {}, '10 MiB/h leak of small tensors from the first iteration (under warm-up)'),
  creep('creep-10-small-blocks-late', 10, 2, 6, 18, { validation: saw(true) }, '10 MiB/h in 2 MiB blocks from 6 h under empty_cache saw-tooth'),
  creep('creep-10-seg20', 10, 20, 2, 24, {}, '10 MiB/h in 20 MiB segments: one step every 2 h'),
  creep('creep-20-small-jitter', 20, 2, 4, 12, { jitterMiB: 4 }),
  creep('creep-20-seg20', 20, 20, 1, 16),
  creep('creep-50-seg20', 50, 20, 3, 12),
  creep('creep-50-seg20-sawtooth', 50, 20, 0, 24, { validation: saw(true) }, '50 MiB/h from start under saw-tooth with empty_cache dips'),
  creep('creep-50-noisy', 50, 20, 2, 12, { jitterMiB: 8, blip: [0.02, 400] }),
  creep('creep-200-seg128', 200, 128, 2, 10, {}, '200 MiB/h leaking 128 MiB tensors'),
  creep('creep-200-seg20-step', 200, 20, 5, 12, { validation: saw(false) }),
  creep(
    'creep-20-dynamic-shapes',
    20,
    2,
    3,
    16,
    {
      ratchet: [
        [15, 900],
        [35, 500],
        [70, 300],
        [140, 160],
      ],
    },
    '20 MiB/h under a dynamic-shape warm-up ratchet',
  ),
  {
    id: 'creep-50-gap',
    description: '50 MiB/h in 2 MiB blocks with a 2 h collector outage in the middle',
    expected: ['leak'],
    build: (r) => {
      const leak = leakAt(50, 1, 2);
      return { hours: 12, gpuTotalMiB: H100, gaps: [[5, 7]], leak, procs: [proc(r, { baseMiB: 30000, leak: leakSpec(leak) })] };
    },
  },
  {
    id: 'creep-20-slack',
    description: '20 MiB/h in 20 MiB segments, first filling 80 MiB of cached free blocks (invisible 4 h)',
    expected: ['leak'],
    build: (r) => {
      const leak = leakAt(20, 1, 20, { visibleFrom: new Date(T0 + 5 * H).toISOString() });
      return { hours: 16, gpuTotalMiB: H100, leak, procs: [proc(r, { baseMiB: 30000, leak: leakSpec(leak, 80) })] };
    },
  },
  {
    id: 'creep-restarted',
    description: '50 MiB/h leak; job restarted at 9 h (new pid) and leaks again',
    expected: ['leak'],
    build: (r) => {
      const first = leakAt(50, 0.5, 20);
      const leak = leakAt(50, 9.05, 20, { pid: 4377 });
      return {
        hours: 18,
        gpuTotalMiB: A100,
        leak,
        procs: [proc(r, { baseMiB: 25000, endH: 9, leak: leakSpec(first) }), proc(r, { baseMiB: 25000, startH: 9.05, pid: 4377, leak: leakSpec(leak) })],
      };
    },
  },
  {
    id: 'creep-after-pid-reuse',
    description: 'flat process exits; its pid is reused by a job that leaks 20 MiB/h',
    expected: ['leak'],
    build: (r) => {
      const leak = leakAt(20, 6.5, 2);
      return {
        hours: 16,
        gpuTotalMiB: H100,
        leak,
        procs: [proc(r, { baseMiB: 50000, endH: 6 }), proc(r, { baseMiB: 30000, startH: 6.1, command: LLM, leak: leakSpec(leak) })],
      };
    },
  },
  {
    id: 'creep-shared-gpu',
    description: '50 MiB/h leak on a GPU shared with a flat job',
    expected: ['leak'],
    build: (r) => {
      const leak = leakAt(50, 2, 20);
      return {
        hours: 12,
        gpuTotalMiB: H100,
        leak,
        procs: [proc(r, { baseMiB: 30000, leak: leakSpec(leak) }), proc(r, { baseMiB: 20000, pid: 6100, user: 'bob', command: LLM })],
      };
    },
  },

  // ---- rank-0-only growth across 8 GPUs ----
  {
    id: 'rank0-validation-steps',
    description: '8 ranks; rank 0 keeps 150 MiB per validation (every 45 min), the others flat',
    expected: ['rank0_growth'],
    build: (r) => {
      const leak = leakAt(200, 0.75, 150, { kind: 'rank0_growth' });
      const procs = [...Array(8).keys()].map((g) =>
        proc(r, {
          baseMiB: 52000,
          gpu: g,
          pid: 8000 + g,
          command: DDP,
          validation: g === 0 ? saw(true, 45, 6, 3000) : undefined,
          leak: g === 0 ? { slopeMiBPerHour: 200, startMs: T0 + 0.75 * H, blockMiB: 150 } : undefined,
        }),
      );
      return { hours: 12, gpuTotalMiB: H100, leak, procs };
    },
  },
  {
    id: 'rank0-creep-local-rank-args',
    description: '8 ranks with --local_rank=N commands (grouped by start time); rank 0 creeps 30 MiB/h',
    expected: ['rank0_growth'],
    build: (r) => {
      const leak = leakAt(30, 1, 2, { kind: 'rank0_growth' });
      const procs = [...Array(8).keys()].map((g) =>
        proc(r, {
          baseMiB: 38000,
          gpu: g,
          pid: 9100 + g,
          startH: g * 0.004,
          command: `/usr/bin/python3 -u train.py --local_rank=${g}`,
          user: 'dave',
          leak: g === 0 ? leakSpec(leak) : undefined,
        }),
      );
      return { hours: 10, gpuTotalMiB: H100, leak, procs };
    },
  },
  {
    id: 'ddp-4-all-leak',
    description: '4 ranks all leaking 20 MiB/h: a leak on every rank, not rank-0 growth',
    expected: ['leak'],
    build: (r) => {
      const leak = leakAt(20, 1, 2);
      const procs = [...Array(4).keys()].map((g) => proc(r, { baseMiB: 30000, gpu: g, pid: 7300 + g, command: DDP, leak: leakSpec(leak) }));
      return { hours: 8, gpuTotalMiB: H100, leak, procs };
    },
  },

  // ---- idle held memory ----
  {
    id: 'idle-after-training',
    description: 'training 3 h, then the process sits at 0% holding 20 GiB for 4 h',
    expected: ['idle_held'],
    build: (r) => ({ hours: 7, gpuTotalMiB: H100, procs: [proc(r, { baseMiB: 20000, idleFromMs: T0 + 3 * H })] }),
  },
  {
    id: 'idle-notebook',
    description: 'notebook kernel holding 8 GiB at 0% for 6 h',
    expected: ['idle_held'],
    build: () => ({
      hours: 6,
      gpuTotalMiB: A100,
      procs: [
        idleProcess({ gpu: 1, pid: 9900, user: 'erin', command: 'python -m ipykernel_launcher -f kernel.json', startMs: T0 - H, toMs: T0 + 7 * H }, 8192),
      ],
    }),
  },

  // ---- host RAM ----
  {
    id: 'host-ram-creep',
    description: 'DataLoader workers grow host RAM 8 GiB/h from 60% used',
    expected: ['host_ram'],
    build: (r) => ({
      hours: 12,
      gpuTotalMiB: H100,
      procs: [proc(r, { baseMiB: 30000 })],
      hostRam: { totalBytes: RAM, usedBytes: hostRamModel(r, T0, 307, 8) },
    }),
  },
  {
    id: 'host-ram-pressure',
    description: 'host RAM steady at 94% used under a DataLoader-heavy job',
    expected: ['host_ram'],
    build: (r) => ({ hours: 6, gpuTotalMiB: H100, procs: [proc(r, { baseMiB: 30000 })], hostRam: { totalBytes: RAM, usedBytes: hostRamModel(r, T0, 481, 0) } }),
  },
];

/**
 * Randomised backgrounds (level, saw-tooth, ratchet, jitter, blips, start before sampling) with or
 * without a creep of random slope / block size / onset: guards against tuning to the hand-made cases.
 */
function randomScenario(i: number, positive: boolean): Scenario {
  return {
    id: `random-${positive ? 'creep' : 'clean'}-${i}`,
    description: '',
    expected: positive ? ['leak'] : [],
    build: (r) => {
      const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
      const between = (a: number, b: number) => a + r() * (b - a);
      const hours = Math.round(between(positive ? 9 : 6, 24));
      const gpuTotalMiB = pick([H100, A100]);
      const spec: Omit<TrainSpec, 'startMs'> & { startH?: number } = { baseMiB: Math.round(between(8000, 0.8 * gpuTotalMiB)) };
      const bits: string[] = [];
      if (r() < 0.5) {
        const v = saw(r() < 0.5, Math.round(between(30, 120)), Math.round(between(3, 25)), Math.round(between(1000, 10000)));
        spec.validation = v;
        bits.push(`validation every ${v.everyMin} min${v.emptyCache ? ' with empty_cache' : ''}`);
      }
      if (r() < 0.4) {
        let at = between(10, 40);
        let size = between(200, 1500);
        const ratio = between(1.6, 2.5);
        const shrink = between(0.4, 0.7);
        spec.ratchet = [];
        for (let n = Math.floor(between(3, 7)); n > 0; n--, at *= ratio, size *= shrink) spec.ratchet.push([Math.round(at), Math.round(size)]);
        bits.push(`ratchet ${spec.ratchet.length} records`);
      }
      if (r() < 0.3) bits.push(`jitter ${(spec.jitterMiB = Math.round(between(1, 8)))}`);
      if (r() < 0.3) spec.blip = [between(0.01, 0.03), Math.round(between(100, 500))];
      if (r() < 0.4) bits.push(`started ${-(spec.startH = -Math.round(between(1, 10)))} h before`);
      let leak: LeakLabel | undefined;
      if (positive) {
        const slope = pick([10, 20, 50, 200]);
        const block = pick({ 10: [2, 2, 8], 20: [2, 20], 50: [2, 20, 20], 200: [20, 64, 128] }[slope]!);
        leak = leakAt(slope, Math.round(between(0, hours - 6) * 4) / 4, block);
        spec.leak = leakSpec(leak);
        bits.unshift(`${slope} MiB/h in ${block} MiB blocks from ${(Date.parse(leak.start) - T0) / H} h`);
      }
      const description = `${bits.join(', ') || 'plain plateau'}, ${hours} h`;
      return { hours, gpuTotalMiB, leak, description, procs: [proc(r, spec)] };
    },
  };
}

SCENARIOS.push(...[...Array(10).keys()].flatMap((i) => [randomScenario(i, false), randomScenario(i, true)]));

/** Expand every scenario with its own seeded stream. */
export function generateTraces(seed = 1): LabelledTrace[] {
  return SCENARIOS.map(({ build, ...label }) => {
    const rnd = prng(seed * 0x10001 + hashId(label.id));
    const { leak, description, ...setup } = build(rnd);
    const samples = buildSamples({ host: `gpu-${label.id}`, t0: T0, ...setup }, rnd);
    return { ...label, description: description ?? label.description, ...(leak ? { leak } : {}), samples };
  });
}

function hashId(id: string): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return h >>> 0;
}
