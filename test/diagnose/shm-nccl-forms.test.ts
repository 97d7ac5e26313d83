// Issue 23, /dev/shm and NCCL failures that got no diagnosis or another lever. Each principle with real logs from
// test/fixtures/untuned/shm9 (public threads, URLs in its cases.json) and synthetic variants written from the principle
// (marked "synthetic": invented here in the library's fixed format, not copied from a thread). In process
// (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { detectEnvironment } from '../../src/diagnose/environment.js';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const summary = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const SHM_FIRST = /--shm-size|--ipc=host|emptyDir|\/dev\/shm/;

describe("Docker's default host name (the container's 12-hex short id) where a host name is printed is a container", () => {
  // synthetic: the three places a host name is printed in these logs
  it.each([
    ['torch elastic record', '  host      : 494f2fcc8a8d\n'],
    ['shell prompt', 'root@c8680db4aa07:/workspace# python train.py'],
    ['NCCL line prefix', 'e66aa18dc444:3171:3171 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.3<0>'],
  ])('synthetic: %s', (_name, text) => {
    expect(detectEnvironment(text).container).toBe('docker');
  });

  // synthetic near misses: a real host name, twelve digits, a commit hash
  it.each([
    ['named host', '  host      : gpu-node-17\n'],
    ['twelve digits', '  host      : 123456789012\n'],
    ['a 40-hex commit', 'Running a Docker-less build from 8527e5f1de37d14abdf4c8c7feafb4fb999ebdbb'],
  ])('synthetic near miss: %s', (_name, text) => {
    expect(detectEnvironment(text).container).toBeUndefined();
  });

  it('real shm9/4506: every rank SIGBUS (exitcode -7) on host 494f2fcc8a8d: the container flag', async () => {
    const d = await firstOfCase('shm9', '4506');
    expect(d?.rule).toBe('bus-error-container');
    expect(summary(d)).toMatch(/SIGBUS/);
    expect(summary(d)).toMatch(/--shm-size=8g/);
  });
});

describe('A PyTorch rank or worker killed by SIGBUS is /dev/shm first, container or not; a bare Bus error is not enough', () => {
  it('real shm9/4507: torchrun "failed (exitcode: -7)" with no container named', async () => {
    const d = await firstOfCase('shm9', '4507');
    expect(d?.rule).toBe('rank-sigbus-shm');
    expect(d?.category).toBe('shm_exhausted');
    expect(summary(d)).toMatch(/SIGBUS/);
    expect(summary(d)).toMatch(/df -h \/dev\/shm/);
  });

  // synthetic: torch elastic's two ways of printing the signal, and the mp spawn wrapper
  it.each([
    [
      'record',
      'torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n  exitcode  : -7 (pid: 811)\n  traceback : Signal 7 (SIGBUS) received by PID 811',
    ],
    ['api line', 'ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 2 (pid: 4410) of binary: /opt/conda/bin/python'],
    [
      'deepspeed launcher',
      '[launch.py:316:sigkill_handler] Killing subprocess 901\ndeepspeed: exitcode : -7 (pid: 902)\ntraceback : Signal 7 (SIGBUS) received by PID 902',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(summary(d)).toMatch(SHM_FIRST);
  });

  it.each(['4529', '4531'])('real shm9/%s (confuser): a single program\'s bare "Bus error (core dumped)" gets no shm diagnosis', async (n) => {
    const d = await firstOfCase('shm9', n);
    expect(d?.category ?? 'none').not.toBe('shm_exhausted');
  });

  it('synthetic near miss: exitcode -9 is SIGKILL, not SIGBUS', async () => {
    const d = await diagnosePaste(
      'torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n  exitcode  : -9 (pid: 3311)\n  traceback : Signal 9 (SIGKILL) received by PID 3311',
    );
    expect(d?.rule).not.toBe('rank-sigbus-shm');
  });

  it('real shm9/4512: a bus error told in prose in a container with 64 MiB of shm', async () => {
    const d = await firstOfCase('shm9', '4512');
    expect(d?.category).toBe('shm_exhausted');
    expect(summary(d)).toMatch(/--shm-size/);
  });
});

describe("The reply names the writer the paste shows, and that writer's lever", () => {
  it.each(['4508', '4509', '4510', '4511'])("real shm9/%s: Ray's object store in /dev/shm: --shm-size or a capped store", async (n) => {
    const d = await firstOfCase('shm9', n);
    expect(d?.category).toBe('shm_exhausted');
    expect(summary(d)).toMatch(/^Ray keeps its object store/);
    expect(summary(d)).toMatch(/--object-store-memory/);
    expect(summary(d)).not.toMatch(/DataLoader/);
  });

  it("real shm9/4509: Ray's own figure of /dev/shm is quoted", async () => {
    expect(summary(await firstOfCase('shm9', '4509'))).toMatch(/67108864 bytes/);
  });

  it("synthetic: Ray's start-up warning beside a CUDA OOM is only a remark: the OOM decides", async () => {
    const text = [
      "WARNING services.py:2022 -- WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only 67108864 bytes available. If you are inside a Docker container, you can increase /dev/shm size by passing '--shm-size=9.10gb' to 'docker run'.",
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.68 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 22.54 GiB memory in use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 310.00 MiB is reserved by PyTorch but unallocated.',
    ].join('\n');
    expect((await diagnosePaste(text))?.category).not.toBe('shm_exhausted');
  });

  it.each(['4506', '4507', '4530'])('real shm9/%s: only the signal is shown: the reply names SIGBUS, not DataLoader workers', async (n) => {
    const s = summary(await firstOfCase('shm9', n));
    expect(s).toMatch(/SIGBUS/);
    expect(s).not.toMatch(/^\/dev\/shm is too small where this runs[^.]*DataLoader/);
  });

  it("real shm9/4514: NCCL's shm_open refused (Permission denied): the permission, not the size", async () => {
    const s = summary(await firstOfCase('shm9', '4514'));
    expect(s).toMatch(/Permission denied/);
    expect(s).toMatch(/chmod 1777 \/dev\/shm/);
  });

  it.each([
    ['PyTorch worker, no hint', 'RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.'],
    [
      'Paddle worker',
      'ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient shared memory (shm), please check whether use_shared_memory is set and storage space in /dev/shm is enough',
    ],
  ])('synthetic: a worker named by the library keeps the workers wording: %s', async (_name, text) => {
    expect(summary(await diagnosePaste(text))).toMatch(/DataLoader workers/);
  });
});

describe("NCCL's system error where the ranks share one host's /dev/shm: a container, or DataParallel's single process", () => {
  it.each(['4517', '4518', '4520'])('real shm9/%s: "unhandled system error" in docker / a container: /dev/shm first', async (n) => {
    const d = await firstOfCase('shm9', n);
    expect(d?.rule).toBe('nccl-system-error-one-node');
    expect(summary(d)).toMatch(/--shm-size=8g or --ipc=host/);
  });

  it('real shm9/4519: "NCCL Error 2" of DataParallel (one process, one machine)', async () => {
    expect((await firstOfCase('shm9', '4519'))?.rule).toBe('nccl-system-error-one-node');
  });

  // synthetic: the container in its fixed forms beside NCCL's wrapper
  it.each([
    [
      'docker run',
      'docker run --gpus all -it img python -m torch.distributed.run --nproc_per_node 4 train.py\ntorch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5',
    ],
    [
      'kubectl',
      'kubectl logs trainer-0\nRuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8\nncclSystemError: System call (socket, malloc, munmap, etc) failed.',
    ],
    [
      'DataParallel',
      'File "/usr/lib/python3/dist-packages/torch/nn/parallel/comm.py", line 40, in broadcast_coalesced\nRuntimeError: NCCL Error 2: unhandled system error',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('nccl-system-error-one-node');
    expect(summary(d)).toMatch(SHM_FIRST);
  });

  it('real shm9/4521 (confuser): in docker, but the WARN names a socket: the network, not /dev/shm', async () => {
    const d = await firstOfCase('shm9', '4521');
    expect(d?.rule).toBe('nccl-setup-error');
    expect(summary(d)).toMatch(/NCCL_SOCKET_IFNAME/);
  });
});

describe('An NCCL segment a peer cannot attach to is missing, not a full /dev/shm', () => {
  it.each(['4515', '4516'])('real shm9/%s (confuser): attach fails, /dev/shm size is not the lever', async (n) => {
    const d = await firstOfCase('shm9', n);
    expect(d?.rule).toBe('nccl-shm-attach');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(summary(d)).toMatch(/not the lever/);
    expect(summary(d)).toMatch(/--ipc=host on every container/);
  });

  it('synthetic: the creating side failed first (No space left on device): a full /dev/shm', async () => {
    const text = [
      'node1:201:240 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Qa81xZ (size 9637888), error: No space left on device (28)',
      'node1:202:241 [1] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-Qa81xZ (size 9637888), error: No such file or directory (2)',
    ].join('\n');
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
  });

  it('synthetic: "/dev/shm is fully provisioned" is no full /dev/shm; "/dev/shm is full" is', async () => {
    expect((await diagnosePaste('/dev/shm is fully provisioned with 252 GB of tmpfs space'))?.category).not.toBe('shm_exhausted');
    expect((await diagnosePaste('OSError: [Errno 28] No space left on device, /dev/shm is full'))?.category).toBe('shm_exhausted');
  });
});

describe("A rank's own OOM before the others' watchdog timeouts is the first failure, also when its message is a long one", () => {
  const OOM =
    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB. GPU 2 has a total capacity of 79.15 GiB of which 141.25 MiB is free. Including non-PyTorch memory, this process has 78.99 GiB memory in use. Of the allocated memory 77.21 GiB is allocated by PyTorch, and 283.51 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.';
  const TIMEOUT =
    '[rank5]:[E ProcessGroupNCCL.cpp:563] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15734, OpType=ALLREDUCE, NumelIn=220084533, NumelOut=220084533, Timeout(ms)=600000) ran for 600037 milliseconds before timing out.';

  it('real shm9/4535 (confuser): rank 11 OOMs in attention, ranks 5-14 then time out: the OOM is answered, not NCCL', async () => {
    const d = await firstOfCase('shm9', '4535');
    expect(d?.category).not.toBe('nccl_or_distributed');
    expect(d?.rule).toMatch(/^cuda-oom/);
  });

  // synthetic: PyTorch 2.x's [rankN]: prefix, the 2.x message past 300 characters, then the waiting ranks
  it('synthetic: [rank2]: OOM (a 400-character message), then two ranks time out', async () => {
    const text = ['[rank2]:   File "train.py", line 210, in step', '[rank2]:     loss.backward()', `[rank2]: ${OOM}`, TIMEOUT, TIMEOUT.replace(/5/g, '3')].join(
      '\n',
    );
    expect((await diagnosePaste(text))?.category).toBe('cuda_oom');
  });

  it('synthetic near miss: the timeouts come first and an OOM only after the watchdog tore the ranks down: NCCL stays first', async () => {
    const text = [
      TIMEOUT,
      '[rank5]: RuntimeError: NCCL communicator was aborted on rank 5.',
      ...Array.from({ length: 160 }, (_, i) => `step ${i} skipped`),
      `[rank2]: ${OOM}`,
    ].join('\n');
    expect((await diagnosePaste(text))?.category).toBe('nccl_or_distributed');
  });
});

describe('Every rank stuck in its first collective: the ranks never moved data (P2P / network); no rank fell behind', () => {
  it.each(['4523', '4524', '4525'])('real shm9/%s: SeqNum=1 on every rank: NCCL_P2P_DISABLE before any lagging rank', async (n) => {
    const s = summary(await firstOfCase('shm9', n));
    expect(s).toMatch(/^No collective ever completed/);
    expect(s).toMatch(/NCCL_P2P_DISABLE=1/);
  });

  // synthetic: PyTorch 2.3+'s "last completed NCCL work: -1" without a SeqNum, and a subgroup's first collective
  it.each([
    [
      'completed -1',
      '[rank1]:[E ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 1] Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.\n[rank1]:[E ProcessGroupNCCL.cpp:630] [Rank 1] Some NCCL operations have failed or timed out.',
    ],
    [
      'two ranks at SeqNum 1',
      '[E ProcessGroupNCCL.cpp:474] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.\n[E ProcessGroupNCCL.cpp:474] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800012 milliseconds before timing out.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    expect(summary(await diagnosePaste(text))).toMatch(/^No collective ever completed/);
  });

  it('synthetic near miss: ranks at different SeqNums: the lagging rank, not the transport', async () => {
    const text =
      '[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.\n[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469502, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802211 milliseconds before timing out.';
    const s = summary(await diagnosePaste(text));
    expect(s).toMatch(/^Rank 3 is at SeqNum 469502/);
  });

  it('real shm9/4534: one rank timed out after 5125 collectives: not the first-collective reading', async () => {
    expect(summary(await firstOfCase('shm9', '4534'))).not.toMatch(/^No collective ever completed/);
  });
});

describe('A pasted df line of /dev/shm is the measurement: full is shm; "shm 64M" is Docker\'s default mount (a container)', () => {
  const EXIT = 'RuntimeError: DataLoader worker (pid(s) 4121, 4122) exited unexpectedly';
  // synthetic: df -h / df -k lines in their fixed columns
  it.each([
    ['docker default, full', `shm              64M   64M     0 100% /dev/shm\n${EXIT}`],
    ['a host tmpfs at 97%', `tmpfs            32G   31G  1.0G  97% /dev/shm\n${EXIT}`],
  ])('synthetic: %s: shm first', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(summary(d)).toMatch(SHM_FIRST);
  });

  it("synthetic: Docker's 64M mount with room left, a worker exited: the container's /dev/shm first", async () => {
    const d = await diagnosePaste(`shm              64M     0   64M   0% /dev/shm\n${EXIT}`);
    expect(d?.rule).toBe('dataloader-worker-exit-container');
  });

  it.each([
    ['df -h', 'shm              64M     0   64M   0% /dev/shm'],
    ['df -k', 'shm                 65536       0     65536   0% /dev/shm'],
  ])("synthetic: %s of Docker's mount is a container", (_name, text) => {
    expect(detectEnvironment(text).container).toBe('docker');
  });

  it('synthetic near miss: a large host /dev/shm barely used is no shm evidence', async () => {
    const d = await diagnosePaste(`tmpfs            32G    1G   31G   3% /dev/shm\n${EXIT}`);
    expect(d?.category).not.toBe('shm_exhausted');
  });

  it("synthetic: NCCL's own 'failed to extend /dev/shm/nccl-…' WARN outranks the generic system-error wrapper", async () => {
    const text = [
      'node1:2211:2290 [0] transport/shm.cc:590 NCCL WARN Error: failed to extend /dev/shm/nccl-abc123 to 9637892 bytes',
      'torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5',
    ].join('\n');
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('shm-exhausted');
    expect(summary(d)).toMatch(/^NCCL could not create its shared-memory segment/);
  });
});

describe('Where the job runs decides the flag: a Kubernetes pod has no --shm-size, even when the report quotes docker', () => {
  it('real shm9/4505: a Seldon microservice on GKE: an emptyDir of medium Memory, not docker --shm-size', async () => {
    const s = summary(await firstOfCase('shm9', '4505'));
    expect(s).toMatch(/emptyDir with medium: Memory/);
    expect(s).not.toMatch(/Start the container with --ipc=host/);
  });

  // synthetic: the platform's names; a near miss that only runs docker
  it.each([
    ['GKE', 'Our job runs on GKE.'],
    ['k8s pod', 'the k8s pod restarts'],
    ['Kubernetes cluster', 'on our Kubernetes cluster the worker dies'],
  ])('synthetic: %s', (_name, text) => {
    expect(detectEnvironment(text).container).toBe('kubernetes');
  });

  it('synthetic near miss: docker run alone is Docker', () => {
    expect(detectEnvironment('docker run --gpus all -it pytorch/pytorch python train.py').container).toBe('docker');
  });
});

describe("Other launchers' words for a child's SIGBUS", () => {
  // synthetic: DeepSpeed's launcher line and Open MPI's termination banner, in their fixed formats
  it('synthetic: DeepSpeed "exits with return code = -7"', async () => {
    const text =
      "[2023-07-20 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'main.py', '--local_rank=0'] exits with return code = -7";
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('rank-sigbus-shm');
    expect(summary(d)).toMatch(/SIGBUS/);
  });

  it('synthetic near miss: DeepSpeed "exits with return code = -9" is SIGKILL', async () => {
    const text = "[ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'main.py'] exits with return code = -9";
    expect((await diagnosePaste(text))?.rule).not.toBe('rank-sigbus-shm');
  });

  it('synthetic: mpirun in a docker container, "Bus error (signal 7)"', async () => {
    const text =
      'running with mpirun inside a docker container\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   EXIT CODE: 135\nAPPLICATION TERMINATED WITH THE EXIT STRING: Bus error (signal 7)';
    expect((await diagnosePaste(text))?.rule).toBe('bus-error-container');
  });
});
