// Issue 23, host-RAM kills and another holder: each principle with real logs from test/fixtures/untuned/host8 (public
// threads, URLs in its cases.json) and synthetic variants written from the principle (marked "synthetic": invented
// here in each launcher's fixed format, not copied from a thread). In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const HOST = 'host_oom_killed';
const summary = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('a host kill in every launcher format is host RAM (only the host kills a process for memory)', () => {
  it.each(['3500', '3501', '3502', '3511', '3512', '3513', '3514'])('real host8/%s', async (n) => {
    expect((await firstOfCase('host8', n))?.category).toBe(HOST);
  });

  // synthetic: one line per launcher, in its fixed format
  const forms: Record<string, string> = {
    'Slurm cgroup, new spelling': 'slurmstepd: error: Detected 1 oom_kill event in StepId=8812.0. Some of the step tasks have been OOM Killed.',
    'Slurm cgroup, old spelling': 'slurmstepd: error: Detected 3 oom-kill event(s) in step 7731.batch cgroup.',
    "srun's task line": 'srun: error: gpu-a17: tasks 0-3: Out Of Memory\nsrun: Terminating StepId=8812.0',
    "sacct's job state":
      '       JobID    JobName      State ExitCode\n------------ ---------- ---------- --------\n91022          finetune OUT_OF_MEMORY    0:125',
    "scontrol's job state": 'JobId=91022 JobName=finetune\n   JobState=OUT_OF_MEMORY Reason=OutOfMemory Dependency=(null)',
    'Kubernetes pod': '    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137',
    'docker compose': 'trainer-1 exited with code 137',
    'torchelastic agent': 'Signal 9 (SIGKILL) received by PID 40112',
    'torchelastic rank': 'torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 40113) of binary: /usr/bin/python3',
    'accelerate / subprocess': "subprocess.CalledProcessError: Command '['/venv/bin/python', 'train.py']' died with <Signals.SIGKILL: 9>.",
    'kernel log': '[901233.1] Out of memory: Killed process 40113 (python) total-vm:81234567kB, anon-rss:60123456kB',
    'torch.multiprocessing.spawn': 'torch.multiprocessing.spawn.ProcessExitedException: process 2 terminated with signal SIGKILL',
    "datasets' pool":
      'Map (num_proc=48):  61%|██████    | 61000/100000\nRuntimeError: One of the subprocesses has abruptly died during map operation.To debug the error, disable multiprocessing.',
    'told with its cause': 'My training process is killed due to insufficient memory when it reads the point clouds.',
    'told with its cause, cause first': 'Not enough RAM on the node, the job was killed after 3 epochs.',
  };
  it.each(Object.entries(forms))('synthetic: %s', async (_name, text) => {
    expect((await diagnosePaste(text))?.category).toBe(HOST);
  });

  it('synthetic: a kill for GPU memory or a container that docker says was not OOM-killed is not read as host RAM by these forms', async () => {
    expect((await diagnosePaste('The run was killed due to insufficient GPU memory on the A10.'))?.category).not.toBe(HOST);
    expect((await diagnosePaste('"State": {"ExitCode": 137, "OOMKilled": false}'))?.category).not.toBe(HOST);
    // An identifier that merely contains the words is no job state.
    expect((await diagnosePaste('cudaError_t err = CUDA_ERROR_OUT_OF_MEMORY;'))?.category).not.toBe(HOST);
  });
});

describe("the job's own child processes: their number is the lever", () => {
  it('real host8/3507: WinError 1455 raised in spawn_main of `pre.py -n 6` puts fewer worker processes first', async () => {
    const d = await firstOfCase('host8', '3507');
    expect(d?.rule).toBe('windows-pagefile-too-small');
    expect(summary(d)).toMatch(/^The error is raised in a child process[^]*fewer worker processes/);
  });

  it("real host8/3505, 3508: WinError 1455 with no child shown names Windows' commit limit (RAM + page file, its swap)", async () => {
    for (const n of ['3505', '3508']) {
      const s = summary(await firstOfCase('host8', n));
      expect(s).toMatch(/^Windows ran out of commit: RAM plus the page file \(Windows' swap\)/);
    }
  });

  it('synthetic: a SpawnPoolWorker in the paste or a DataLoader spawned on Windows counts as children; a plain DLL load does not', async () => {
    const dll =
      'OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "C:\\py\\torch\\lib\\cudnn64_8.dll" or one of its dependencies.';
    const pool = `Process SpawnPoolWorker-3:\nTraceback (most recent call last):\n${dll}`;
    const spawn = `Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n  File "C:\\py\\lib\\multiprocessing\\spawn.py", line 116, in spawn_main\n${dll}`;
    expect(summary(await diagnosePaste(pool))).toMatch(/^The error is raised in a child process/);
    expect(summary(await diagnosePaste(spawn))).toMatch(/^The error is raised in a child process/);
    expect(summary(await diagnosePaste(dll))).toMatch(/^Windows ran out of commit/);
  });

  it("synthetic: datasets' pool child killed: fewer processes first, not the generic experiment", async () => {
    const d = await diagnosePaste(
      'Map (num_proc=64):  12%|█▏        | 12000/100000\nRuntimeError: One of the subprocesses has abruptly died during map operation.',
    );
    expect(summary(d)).toMatch(/^The kill hit a child process the job started itself[^]*num_proc/);
  });
});

describe("WSL2's VM cap: a host kill under WSL with no other lever names .wslconfig", () => {
  it('real host8/3500: accelerate died with SIGKILL, paths under /mnt/c', async () => {
    expect(summary(await firstOfCase('host8', '3500'))).toMatch(/^This runs under WSL2[^]*\.wslconfig/);
  });

  it('synthetic: the WSL2 kernel string; the same kill on plain Linux gets the experiment instead', async () => {
    const kill = 'Epoch 2/50\n 40%|████      | 400/1000\nKilled';
    expect(summary(await diagnosePaste(`Linux box 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64\n${kill}`))).toMatch(/^This runs under WSL2/);
    const linux = summary(await diagnosePaste(`Linux box 6.8.0-45-generic #45-Ubuntu SMP x86_64\n${kill}`));
    expect(linux).not.toMatch(/WSL/);
  });
});

describe('GPU memory still held after the job ended is another process (a leftover), and the first fix says so', () => {
  it.each(['3520', '3521', '3522', '3523', '3524', '3525', '3526'])('real host8/%s', async (n) => {
    const d = await firstOfCase('host8', n);
    expect(d?.rule).toBe('idle-gpu-memory-held');
    expect(summary(d)).toMatch(/^Another process holds this GPU memory/);
  });

  // synthetic: the same facts in other words
  const forms = [
    'After I pressed Ctrl-C the training stopped, but GPU memory is not released (nvidia-smi shows 20 GB used).',
    'nvidia-smi lists no processes, yet the memory on GPU 2 is still in use: 30000MiB / 81559MiB.',
    'Whenever a notebook stays open overnight the GPU memory fills up and my script cannot allocate anything.',
    '训练中断之后显存没有释放，nvidia-smi 里还是占着 20G',
    '程序崩溃后仍然占用显存，只能重启服务器',
  ];
  it.each(forms)('synthetic: %s', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('idle-gpu-memory-held');
    expect(summary(d)).toMatch(/^Another process holds this GPU memory/);
  });

  it('synthetic: a process that was killed and whose memory is still held is not a host-RAM kill', async () => {
    expect((await diagnosePaste('训练进程被kill后，仍然占用GPU内存，nvidia-smi 看不到进程'))?.category).not.toBe(HOST);
  });
});

describe('confusers: the run itself is the holder, so the card is not "freed" first', () => {
  it('real host8/3527: a lone "Process N has 15.75 GiB" under Slurm is this run (batch first)', async () => {
    const d = await firstOfCase('host8', '3527');
    expect(summary(d)).not.toMatch(/another process|other process|held outside/i);
  });

  it('real host8/3528: another python process holds 2.3 of 23.6 GB, this run 19.7 GiB: its own batch', async () => {
    expect(summary(await firstOfCase('host8', '3528'))).not.toMatch(/another process|other process|held outside/i);
  });

  it('real host8/3529: "this process has 14.53 GiB" with "显存无法得到释放" in the title stays a CUDA OOM of this process', async () => {
    const d = await firstOfCase('host8', '3529');
    expect(d?.category).toBe('cuda_oom');
    expect(summary(d)).not.toMatch(/^Another process/);
  });
});

describe('the report names another holder in words: with no figure in the error, that sentence decides who holds the card', () => {
  // synthetic: an error without figures (or none at all) plus the reporter's sentence
  const told = [
    'RuntimeError: CUDA error: out of memory\nThe GPU is being used by other processes on our shared server.',
    'CUDA out of memory. Another user is running a job on the same GPU.',
    'I run two trainings on the same GPU, the second one fails with CUDA out of memory',
    'RuntimeError: CUDA error: out of memory\nnvidia-smi shows my old jupyter kernel still using 10GB',
    '显卡被别人占用了，跑不起来，报 CUDA out of memory',
    'GPU memory is occupied by another process (PID 3312, 20GB) so my training cannot start',
    '显存被其他进程占用，nvidia-smi 显示 22G 已用',
  ];
  it.each(told)('synthetic: %s', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
    expect(summary(d)).toMatch(/^Another process holds GPU memory/);
    expect(JSON.stringify(d?.facts)).toMatch(/the report says another process holds the card/);
  });

  it('synthetic: a sentence that denies another holder is no evidence', async () => {
    const d = await diagnosePaste('RuntimeError: CUDA error: out of memory\nThere is no other process using the GPU, nvidia-smi is empty.');
    expect(summary(d)).not.toMatch(/^Another process/);
  });

  it('real host8/3528 and synthetic: figures in the error decide before the words', async () => {
    // 3528 says "the only other process ... takes up 2317 MiB" beside 19.67 GiB allocated by this run.
    expect(summary(await firstOfCase('host8', '3528'))).not.toMatch(/^Another process/);
    const d = await diagnosePaste(
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.50 GiB memory in use.\nAnother process is using the GPU too, I think.',
    );
    expect(summary(d)).not.toMatch(/^Another process/);
  });
});

describe('GPU memory used while nothing runs, told in words, is a leftover holder', () => {
  // synthetic
  const forms = [
    'nvidia-smi shows 23GB used on GPU 1 but no process is listed',
    'GPU memory is full even though nothing is running',
    'Even when nothing runs, nvidia-smi shows 8GB of memory used',
    'The GPU memory is not freed after the training ends',
    'Memory on GPU0 stays at 10GB after the script exits',
    'My jupyter notebook keeps holding the GPU memory after the cell finished',
    '显存被占满了，但是没有程序在跑',
    '程序结束后显存一直被占用',
    '显卡上没有进程，但是显存占用了20G',
    'jupyter 里显存一直不释放',
  ];
  it.each(forms)('synthetic: %s', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('idle-gpu-memory-held');
    expect(summary(d)).toMatch(/^Another process holds this GPU memory/);
  });

  it('synthetic: an nvidia-smi table with used memory and its "No running processes found" row alone is no such report', async () => {
    const smi =
      '|   0  Tesla T4   Off | 00000000:00:04.0 Off |   0 |\n| N/A   40C  P8  10W / 70W |   3MiB / 15360MiB |  0%  Default |\n|  No running processes found                                                 |';
    expect((await diagnosePaste(smi))?.rule).not.toBe('idle-gpu-memory-held');
  });
});

describe('host RAM told filling to the end of the process, in prose', () => {
  it('synthetic: "RAM usage goes to 100% and then the process dies" and its variants', async () => {
    for (const text of ['RAM usage goes to 100% and then the process dies', 'The system memory reaches 100% and the training is killed.']) {
      expect((await diagnosePaste(text))?.category).toBe(HOST);
    }
  });
});

describe('memory on GPU 0 although another GPU was chosen: every process touches the default device first', () => {
  it.each(['3516', '3517', '3518'])('real host8/%s', async (n) => {
    const d = await firstOfCase('host8', n);
    expect(d?.rule).toBe('default-device-contexts-reported');
    expect(summary(d)).toMatch(/CUDA_VISIBLE_DEVICES[^]*set_device/);
  });

  // synthetic
  const forms = [
    'CUDA_VISIBLE_DEVICES=1 python train.py still allocates memory on GPU 0 and crashes with out of memory because GPU 0 is full',
    "After setting os.environ['CUDA_VISIBLE_DEVICES'] inside the script it still runs on GPU 0",
    'Each rank calls set_device(local_rank) late, and every process also keeps a context on cuda:0 that fills it.',
    'cuda:0 runs out of memory even though each worker is assigned to another GPU',
  ];
  it.each(forms)('synthetic: %s', async (text) => {
    expect((await diagnosePaste(text))?.rule).toBe('default-device-contexts-reported');
  });

  it('synthetic: GPU 0 chosen on purpose, or another error type, is not this', async () => {
    const own = 'CUDA_VISIBLE_DEVICES=0 python train.py\nThe job still uses all memory on GPU 0.';
    expect((await diagnosePaste(own))?.rule).not.toBe('default-device-contexts-reported');
    const cudnn = 'RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\nI set CUDA_VISIBLE_DEVICES=2 but it also fails on GPU 0.';
    expect((await diagnosePaste(cudnn))?.rule).not.toBe('default-device-contexts-reported');
  });
});

describe('a kill right after the log announces the model load is a kill while loading (weights through host RAM)', () => {
  // Either rule's words for the same lever: the weights pass through host RAM while they load.
  const LOAD_KILL = /^(?:The process was killed|The host ran out of RAM) while the (?:model|weights) (?:was|were) loading/;
  it.each([
    ['fresh', '712'],
    ['novel', '1226'],
  ])('real %s/%s', async (g, n) => {
    expect(summary(await firstOfCase(g, n))).toMatch(LOAD_KILL);
  });

  // synthetic
  const forms = [
    'python serve.py\nLoading model weights from /models/llama-13b ...\nKilled',
    'Start\nload model begin.\n\nKilled',
    'Loading checkpoint shards:  40%|████      | 2/5 [00:21<00:32, 10.8s/it]Killed',
    '开始加载模型\n已杀死',
    'the process was killed in from_pretrained, nothing else printed',
  ];
  it.each(forms)('synthetic: %s', async (text) => {
    expect(summary(await diagnosePaste(text))).toMatch(LOAD_KILL);
  });

  it('synthetic: a kill after training steps reported a loss, or far below the load line, is not read as a load kill', async () => {
    const trained = 'Loading model weights ...\nepoch 1 step 10 loss 2.31\nepoch 1 step 20 loss 2.05\nKilled';
    expect(summary(await diagnosePaste(trained))).not.toMatch(LOAD_KILL);
    const far = 'Loading model weights ...\nmodel ready\nbuilding index\nscanning corpus\nwriting shards\nmerging\nKilled';
    expect(summary(await diagnosePaste(far))).not.toMatch(LOAD_KILL);
  });
});

describe("the error's own process lines decide: other PIDs with a share of the card are another holder, a lone one is the run", () => {
  // synthetic, in PyTorch's fixed OOM format
  const head = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.06 GiB is free.';
  it('synthetic: two other processes hold most of the card', async () => {
    const d = await diagnosePaste(
      `${head} Process 1123 has 12.30 GiB memory in use. Process 2231 has 10.27 GiB memory in use. Of the allocated memory 0.20 GiB is allocated by PyTorch, and 20.00 MiB is reserved by PyTorch but unallocated.`,
    );
    expect(summary(d)).toMatch(/^Another process holds GPU memory/);
  });

  it('synthetic: a lone "Process N has" whose allocator holds nearly all of it is this process (a container hides its own pid)', async () => {
    const d = await diagnosePaste(
      `${head} Process 48213 has 22.58 GiB memory in use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.`,
    );
    expect(summary(d)).not.toMatch(/another process|other process|held outside/i);
  });

  it('synthetic: an nvidia-smi process table pasted under the error with another PID holding most of the card', async () => {
    const d = await diagnosePaste(
      [
        'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 1.20 GiB already allocated; 12.44 MiB free; 1.30 GiB reserved in total by PyTorch)',
        '|  GPU       PID   Type   Process name                             Usage      |',
        '|    0      4711      C   /usr/bin/python3                            8900MiB |',
        '|    0      9133      C   python                                      1500MiB |',
      ].join('\n'),
    );
    expect(summary(d)).toMatch(/^Another process holds GPU memory/);
  });
});

describe("host RAM in fixed notebook messages and in the machine's own words", () => {
  // synthetic, in each message's fixed form
  const forms = [
    'Your notebook tried to allocate more memory than is available. It has restarted.',
    'The system runs out of memory and the process is terminated',
    'The server ran out of memory while tokenizing the corpus.',
    '运行的时候电脑直接卡死，内存占用100%',
    '内存使用率达到 100%，然后程序就退出了',
  ];
  it.each(forms)('synthetic: %s', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe(HOST);
  });

  it('synthetic: GPU memory (显存) at 100% or the GPU running out is not host RAM', async () => {
    expect((await diagnosePaste('显存占用100%，然后报错'))?.category).not.toBe(HOST);
    expect((await diagnosePaste('The GPU runs out of memory at step 200.'))?.category).not.toBe(HOST);
  });
});
