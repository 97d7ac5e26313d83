// Issue 23, the shared-memory class swept across tools (stop 38, h2): each tool's FIXED message for its shared-memory
// transport, read by the rule keyed to that format. Real logs from test/fixtures/untuned/shm12 (public threads, URLs in
// its cases.json) beside synthetic variants written from each format string (marked "synthetic": built here from the
// tool's source text, not copied from a thread) and near misses. In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const summary = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const tb = (last: string) => `Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    for i, batch in enumerate(loader):\n${last}`;

describe("torch.multiprocessing out of file descriptors is the sharing strategy or ulimit -n, not /dev/shm's size", () => {
  // synthetic: torch/utils/data/dataloader.py, ATen MapAllocator's errno 24, Python's recvfds, the sending side's EMFILE
  it.each([
    [
      'DataLoader EMFILE',
      tb(
        "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code",
      ),
    ],
    [
      'MapAllocator errno 24',
      tb('RuntimeError: unable to open shared memory object </torch_31876_2471813512_1042> in read-write mode: Too many open files (24)'),
    ],
    [
      '[rank1]: recvfds',
      '[rank1]:   File "/usr/lib/python3.12/multiprocessing/reduction.py", line 164, in recvfds\n[rank1]:     raise RuntimeError(\'received %d items of ancdata\' %\n[rank1]: RuntimeError: received 0 items of ancdata',
    ],
    [
      'resource_sharer EMFILE',
      '  File "/usr/lib/python3.8/multiprocessing/resource_sharer.py", line 48, in __init__\n    new_fd = os.dup(fd)\nOSError: [Errno 24] Too many open files',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('torch-shm-fd-limit');
    expect(summary(d)).toMatch(/set_sharing_strategy\('file_system'\)/);
    expect(summary(d)).toMatch(/ulimit -n/);
    expect(summary(d)).not.toMatch(/--shm-size/);
  });

  it('synthetic near miss: EMFILE from a worker fork (os.pipe) is no fd passing', async () => {
    const d = await diagnosePaste(
      '  File "/usr/lib/python3.8/multiprocessing/popen_fork.py", line 68, in _launch\n    parent_r, child_w = os.pipe()\nOSError: [Errno 24] Too many open files',
    );
    expect(d?.rule).not.toBe('torch-shm-fd-limit');
  });

  it('synthetic near miss: the shared object with ENOSPC is /dev/shm full', async () => {
    const d = await diagnosePaste(
      tb('RuntimeError: unable to open shared memory object </torch_2210_3376123_0> in read-write mode: No space left on device (28)'),
    );
    expect(d?.rule).toBe('shm-exhausted');
  });

  it.each(['6551', '6553', '6555'])('real shm12/%s', async (n) => {
    const d = await firstOfCase('shm12', n);
    expect(d?.rule).toBe('torch-shm-fd-limit');
  });
});

describe("Windows' shared file mapping with error 1455 is the commit limit (page file), not /dev/shm", () => {
  it('synthetic: MapAllocator on Windows under _share_filename_cpu_ frames', async () => {
    const d = await diagnosePaste(
      '  File "C:\\envs\\t\\Lib\\site-packages\\torch\\storage.py", line 378, in _share_filename_cpu_\n    return super()._share_filename_cpu_(*args, **kwargs)\nRuntimeError: Couldn\'t open shared file mapping: <torch_13540_2474512344_7>, error code: <1455>',
    );
    expect(d?.rule).toBe('windows-pagefile-too-small');
    expect(summary(d)).toMatch(/page file/);
  });

  it('synthetic near miss: error code 0 is no commit limit', async () => {
    const d = await diagnosePaste("RuntimeError: Couldn't open shared file mapping: <torch_21720_2430665410>, error code: <0>");
    expect(d?.rule).not.toBe('windows-pagefile-too-small');
    expect(d?.category).not.toBe('shm_exhausted');
  });

  it.each(['6559', '6560', '6561'])('real shm12/%s', async (n) => {
    expect((await firstOfCase('shm12', n))?.rule).toBe('windows-pagefile-too-small');
  });
});

describe("vLLM's shm_broadcast wait is a worker busy or hung, not /dev/shm room; any error beside it answers first", () => {
  it.each([
    [
      'V0 worker, "second"',
      '(VllmWorkerProcess pid=2310) WARNING 05-01 10:03:12 shm_broadcast.py:396] No available shared memory broadcast block found in 60 second. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation).',
    ],
    [
      'V1 EngineCore, "seconds"',
      '(EngineCore_DP0 pid=7731) INFO 08-13 11:27:02 [shm_broadcast.py:802] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('vllm-shm-broadcast-wait');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(summary(d)).not.toMatch(/--shm-size/);
  });

  it("synthetic near miss: a worker's CUDA OOM after the wait answers first", async () => {
    const d = await diagnosePaste(
      '(VllmWorkerProcess pid=2310) WARNING 05-01 10:03:12 shm_broadcast.py:396] No available shared memory broadcast block found in 60 second.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 23.64 GiB of which 1.12 GiB is free.',
    );
    expect(d?.category).toBe('cuda_oom');
  });

  it.each(['6556', '6557', '6558'])('real shm12/%s', async (n) => {
    expect((await firstOfCase('shm12', n))?.rule).toBe('vllm-shm-broadcast-wait');
  });
});

describe("Other tools' fixed shared-memory messages (synthetic only: no real thread found in this stop)", () => {
  it("synthetic: Open MPI's shared-memory backing file with too little room, the path wrapped", async () => {
    const d = await diagnosePaste(
      'It appears as if there is not enough space for /dev/shm/vader_segment.node01.1c6a0001.0 (the shared-memory backing\nfile). It is likely that your MPI job will now either abort or experience\nperformance degradation.\n\n  Local host:  node01\n  Space Requested: 4194312 B\n  Space Available: 0 B',
    );
    expect(d?.rule).toBe('openmpi-shm-backing-file');
    expect(summary(d)).toMatch(/--shm-size/);
  });

  it("synthetic: Python's multiprocessing heap (sharedctypes arenas in /dev/shm) with ENOSPC", async () => {
    const d = await diagnosePaste(
      '  File "/usr/lib/python3.10/multiprocessing/heap.py", line 88, in _fallocate\n    os.posix_fallocate(fd, 0, size)\nOSError: [Errno 28] No space left on device',
    );
    expect(d?.category).toBe('shm_exhausted');
  });

  it("synthetic: Paddle's DataLoader 'N workers exit unexpectedly, pids:' in a container is /dev/shm", async () => {
    const d = await diagnosePaste('$ docker run --gpus all paddle:2.5 python train.py\nRuntimeError: DataLoader 2 workers exit unexpectedly, pids: 3411, 3412');
    expect(d?.rule).toBe('dataloader-worker-exit-container');
  });

  it("synthetic: NCCL's attach failure beside 'unhandled system error' is the shared /dev/shm, not the network", async () => {
    const d = await diagnosePaste(
      'node1:22:22 [1] NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-AbCd12 (size 9637888), error: No such file or directory (2)\nRuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.14.3',
    );
    expect(d?.rule).toBe('nccl-shm-attach');
  });
});

describe("A launcher's own report of a child's SIGBUS (subprocess, mpirun, faulthandler in a DataLoader worker) is /dev/shm first", () => {
  it.each([
    [
      "Python's CalledProcessError under accelerate's launcher",
      "  File \"/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py\", line 763, in simple_launcher\n    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)\nsubprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' died with <Signals.SIGBUS: 7>.",
    ],
    ["Open MPI's mpirun", 'mpirun noticed that process rank 1 with PID 0 on node trtllm-node exited on signal 7 (Bus error).'],
    [
      'faulthandler in a DataLoader worker',
      'Fatal Python error: Bus error\n\nThread 0x00007f3a (most recent call first):\n  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/worker.py", line 308 in _worker_loop',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('rank-sigbus-shm');
    expect(summary(d)).toMatch(/SIGBUS/);
  });

  it("synthetic near miss: faulthandler's bus error in a program with no PyTorch worker or launcher", async () => {
    const d = await diagnosePaste(
      'Fatal Python error: Bus error\n\nCurrent thread 0x00007f3a (most recent call first):\n  File "/usr/lib/python3/dist-packages/numpy/core/memmap.py", line 267 in __new__',
    );
    expect(d?.rule).not.toBe('rank-sigbus-shm');
  });
});

describe("DeepSpeed ds_report's /dev/shm measurement under 1 GB is evidence of a small container /dev/shm beside a bare bus error", () => {
  it('synthetic: ds_report 64 MB line, then Bus error (core dumped)', async () => {
    const d = await diagnosePaste(
      "shared memory (/dev/shm) size .... 64.00 MB\n [WARNING]  /dev/shm size might be too small, if running in docker increase to at least --shm-size='1gb'\npython train.py\nBus error (core dumped)",
    );
    expect(d?.rule).toBe('bus-error-container');
  });

  it('synthetic near miss: ds_report measuring a large /dev/shm (GB) is no such evidence', async () => {
    const d = await diagnosePaste('shared memory (/dev/shm) size .... 251.79 GB\npython train.py\nBus error (core dumped)');
    expect(d?.rule).not.toBe('bus-error-container');
  });
});
