// The memory budget, /dev/shm and Ray's monitor as small modules (issue 23 items 2, 4, 5), each checked
// against its principle with variants: the weights in fp32 against the card and in half precision
// (levers/budget.ts), the dtype read from a request of exactly one weight matrix when the paste has no
// frames (precision.ts), who wrote to /dev/shm and where the job runs (levers/shm.ts, environment.ts),
// and the node-RAM figures of Ray's memory monitor (stack-figures.ts).
import { describe, expect, it } from 'vitest';
import { fp32WeightsOverCard, weightBudget } from '../../src/diagnose/levers/budget.js';
import { inferLoadDtype } from '../../src/diagnose/precision.js';
import { readShm, shmFix } from '../../src/diagnose/levers/shm.js';
import { detectEnvironment } from '../../src/diagnose/environment.js';
import { readRayMonitor } from '../../src/diagnose/stack-figures.js';
import { LogText } from '../../src/diagnose/normalize.js';
import { incidentOf, newIncident, type Incident } from '../../src/diagnose/incident/index.js';

const GiB = 1024;
const log = (text: string) => new LogText(text);

describe('budget: fp32 weights that would fit in half precision make the dtype the lever', () => {
  it.each([
    [
      '7B in fp32 on a 24 GB card (26 GiB; 13 GiB in bf16)',
      incidentOf({ model: { paramsB: 7, dtype: 'fp32' }, figures: { totalCapacityMiB: 23.65 * GiB } }),
      true,
    ],
    [
      '13B in fp32 on a 40 GB card (48 GiB; 24 GiB in bf16)',
      incidentOf({ model: { paramsB: 13, dtype: 'fp32' }, figures: { totalCapacityMiB: 39.4 * GiB } }),
      true,
    ],
    ['3B in fp32 on an 8 GB card (11 GiB; 5.6 GiB in bf16)', incidentOf({ model: { paramsB: 3, dtype: 'fp32' }, card: { statedGpuMemoryMiB: 8 * GiB } }), true],
    [
      '7B LoRA on an fp32 base, 24 GB',
      incidentOf({ model: { paramsB: 7, dtype: 'fp32' }, figures: { totalCapacityMiB: 24 * GiB }, run: { training: true, adapterTraining: true } }),
      true,
    ],
    ['13B in fp32 on an 80 GB card: it fits', incidentOf({ model: { paramsB: 13, dtype: 'fp32' }, figures: { totalCapacityMiB: 80 * GiB } }), false],
    [
      '70B in fp32 on 80 GB: not even bf16 fits (quantize or split)',
      incidentOf({ model: { paramsB: 70, dtype: 'fp32' }, figures: { totalCapacityMiB: 80 * GiB } }),
      false,
    ],
    ['7B already in bf16', incidentOf({ model: { paramsB: 7, dtype: 'bf16' }, figures: { totalCapacityMiB: 12 * GiB } }), false],
    ['no dtype stated: no evidence of fp32', incidentOf({ model: { paramsB: 7 }, figures: { totalCapacityMiB: 12 * GiB } }), false],
    [
      'full fine-tuning: the optimizer budget decides',
      incidentOf({ model: { paramsB: 7, dtype: 'fp32' }, figures: { totalCapacityMiB: 24 * GiB }, run: { training: true } }),
      false,
    ],
    [
      'a training forward, not the load',
      incidentOf({ model: { paramsB: 7, dtype: 'fp32' }, figures: { totalCapacityMiB: 24 * GiB }, phase: { name: 'forward' } }),
      false,
    ],
    ['no card known', incidentOf({ model: { paramsB: 7, dtype: 'fp32' } }), false],
  ] as [string, Incident, boolean][])('%s', (_name, f, expected) => {
    expect(fp32WeightsOverCard(f)).toBe(expected);
  });
  it('the load phase itself is left to the load-phase advice, which quotes its frame', () => {
    expect(fp32WeightsOverCard(incidentOf({ model: { paramsB: 7, dtype: 'fp32' }, figures: { totalCapacityMiB: 24 * GiB }, phase: { name: 'load' } }))).toBe(
      false,
    );
  });
  it('weights are parameters × bytes per dtype; half precision is half of fp32', () => {
    const b = weightBudget(incidentOf({ model: { paramsB: 7, dtype: 'fp32' }, figures: { totalCapacityMiB: 24 * GiB } }))!;
    expect(b.weightsMiB).toBeCloseTo((7e9 * 4) / 2 ** 20, 3);
    expect(b.halfMiB).toBeCloseTo(b.weightsMiB / 2, 3);
  });
});

describe('precision: a request of exactly one weight matrix in fp32, in a paste without frames', () => {
  const unframed = (tried: number, more: Incident = newIncident()): Incident => {
    const f: Incident = incidentOf({ figures: { triedAllocMiB: tried } }, more);
    inferLoadDtype(f);
    return f;
  };
  it.each([
    ['Llama-2-7B MLP, 11008 × 4096 × 4 = 172 MiB', 172],
    ['Mistral-7B MLP, 14336 × 4096 × 4 = 224 MiB', 224],
    ['Llama-2/3-70B MLP, 28672 × 8192 × 4 = 896 MiB', 896],
  ])('%s says fp32', (_name, tried) => {
    const f = unframed(tried);
    expect(f.model.dtype).toBe('fp32');
    expect(f.model.dtypeEvidence).toMatch(/× 4 bytes/);
  });
  it.each([
    ['the same matrix in fp16 (86 MiB) is no evidence of fp32', 86, newIncident()],
    ['270 MiB is Llama-2-13B in fp32 and Qwen2.5-32B in half: ambiguous, no evidence', 270, newIncident()],
    ['a training run: the request may be an activation', 172, incidentOf({ run: { training: true } })],
    ['a training forward', 172, incidentOf({ phase: { name: 'forward' } })],
    ['a stated dtype wins', 172, incidentOf({ model: { dtype: 'bf16' } })],
  ] as [string, number, Incident][])('%s', (_name, tried, more) => {
    expect(unframed(tried, more).model.dtype).toBe(more.model.dtype);
  });
});

describe('shm: who wrote to /dev/shm', () => {
  it.each([
    ['misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-KWfVyt (size 5967872)', '5967872 bytes'],
    ['include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 (size 9637888)', '9637888 bytes'],
    ['(Runner pid=1) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)', '7340384 bytes'],
    ['#3 0x7f in ncclShmOpen (libnccl.so.2)', undefined],
    ['host:1:2 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device', undefined],
  ])('NCCL: %s', (line, segment) => {
    expect(readShm(log(line))).toEqual({ shmWriter: 'nccl', ...(segment ? { shmSegment: segment } : {}) });
  });
  it.each([
    ['RuntimeError: unable to write to file </torch_74396_2983595444>'],
    ['RuntimeError: unable to allocate shared memory(shm) for file </torch_1_2_3>: Resource temporarily unavailable (11)'],
    ["It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit."],
    ['ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).'],
  ])('DataLoader workers: %s', (line) => {
    expect(readShm(log(line)).shmWriter).toBe('workers');
  });
  it('NCCL_SHM_DISABLE set in the paste while NCCL still made a segment: the setting did not reach it', () => {
    const seg = 'NCCL WARN Error while creating shared memory segment /dev/shm/nccl-ab12 (size 7340384)';
    expect(readShm(log(`env_vars:\n  NCCL_SHM_DISABLE: 1\n${seg}`)).shmDisableIgnored).toBe(true);
    expect(readShm(log(`export NCCL_SHM_DISABLE=1\n${seg}`)).shmDisableIgnored).toBe(true);
    expect(readShm(log(seg)).shmDisableIgnored).toBeUndefined();
    expect(readShm(log('NCCL_SHM_DISABLE=1\nRuntimeError: unable to write to file </torch_1_2>')).shmDisableIgnored).toBeUndefined();
  });
  it('the flag follows where it runs: Docker/Podman flags, a pod emptyDir, or both when unknown', () => {
    const nccl: Incident = incidentOf({ shm: { shmWriter: 'nccl', shmSegment: '7340384 bytes' } });
    const docker = shmFix(incidentOf(nccl, { environment: { detected: detectEnvironment('docker run --gpus all -it img') } }), 'en');
    expect(docker.summary).toMatch(/--ipc=host|--shm-size/);
    expect(docker.summary).not.toMatch(/emptyDir/);
    expect(docker.command).toMatch(/docker run --ipc=host/);
    const pod = shmFix(incidentOf({ shm: { shmWriter: 'workers' }, environment: { detected: detectEnvironment('kubectl logs trainer-0') } }), 'en');
    expect(pod.summary).toMatch(/emptyDir with medium: Memory/);
    expect(pod.summary).not.toMatch(/--ipc=host/);
    expect(pod.command).toBeUndefined();
    const any = shmFix(nccl, 'en');
    expect(any.summary).toMatch(/--shm-size/);
    expect(any.summary).toMatch(/emptyDir/);
    expect(any.summary).toMatch(/NCCL_SHM_DISABLE=1 is only the fallback/);
    expect(shmFix(nccl, 'zh').summary).toMatch(/NCCL/);
  });
});

describe('environment: a container is read from its launcher, not from prose', () => {
  it.each([
    ['docker run --gpus all --rm -it video-diffusion /bin/bash', 'docker'],
    ['podman run --gpus all -p 30000:30000 lmsysorg/sglang:latest python3 -m sglang.launch_server', 'docker'],
    ['(Docker version 24.0.7, build 24.0.7-0ubuntu2~22.04.1)', 'docker'],
    ['FROM nvcr.io/nvidia/pytorch:24.01-py3', 'docker'],
    ['$ kubectl logs train-7f9c -n ml', 'kubernetes'],
    ['  volumes:\n  - name: dshm\n    emptyDir:\n      medium: Memory', 'kubernetes'],
  ])('%s', (text, container) => {
    expect(detectEnvironment(text).container).toBe(container);
  });
  it.each([['I run it in docker'], ['the docker image is old'], ['we use kubernetes at work']])('prose says nothing: %s', (text) => {
    expect(detectEnvironment(text).container).toBeUndefined();
  });
});

describe("Ray's memory monitor: the node's RAM, with its figures", () => {
  it('reads the task, its share and the node against the threshold', () => {
    const line =
      'Memory on the node (IP: 10.0.0.2, ID: ab) where the task (actor ID: cd, name=RolloutWorker.__init__, pid=308, memory used=11.15GB) was running was 12.49GB / 13.15GB (0.950003), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: ef) because it was the most recently scheduled task';
    expect(readRayMonitor(log(line)).rayMonitor).toBe('RolloutWorker.__init__, 11.15 GB; node 12.49 / 13.15 GB ≥ 0.95');
  });
  it.each([
    ['(raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed'],
    ['ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.'],
  ])('the kill without figures: %s', (line) => {
    expect(readRayMonitor(log(line)).rayMonitor).toBeDefined();
  });
  it('no Ray kill, no Ray facts', () => {
    expect(readRayMonitor(log('Killed\nexitcode: -9'))).toEqual({});
  });
});
