// Host-side failures in the forms real threads paste them (issue 23, host6/): /dev/shm, host-RAM kills and growth.
// Each principle is tested with synthetic variants (en and zh) written from it, beside the real threads of
// test/fixtures/untuned/host6/, through the CLI's own entry in process (diagnoseFile).
import { describe, expect, it } from 'vitest';
import { diagnoseOutput, diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const diagnoseText = (text: string) => diagnosePaste(text);
const summary = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';

describe('/dev/shm: a SIGBUS in a container, and torch.multiprocessing messages whose text was cut', () => {
  // SIGBUS is what a write into a mapped page of a full tmpfs raises; a container's /dev/shm is 64 MB.
  it.each([
    [
      'the shell, a docker run shown',
      '$ docker run --gpus all -it -v $(pwd):/ws img bash\nroot@3f2a:/ws# python eval.py\nEvaluating:  12%|█▏ | 60/500\nBus error (core dumped)\n',
    ],
    [
      'faulthandler, a pod named',
      'kubectl logs trainer-0\nepoch 3 step 410 loss 0.812\nFatal Python error: Bus error\n\nThread 0x00007f (most recent call first):\n',
    ],
    [
      'the report in words, docker named',
      'Training crashes with bus error\nI run training inside a docker container and after a few hundred steps it dies with\nBus error\n',
    ],
    [
      "torchrun's signal line",
      'I am training inside my container.\n[2025-03-02 10:11:12] torch.distributed.elastic.multiprocessing.api: [ERROR] failed\nSignal 7 (SIGBUS) received by PID 5121\n',
    ],
    ['zh, 总线错误 in a 容器', '在容器里训练到第二个 epoch 就崩了\n总线错误 (核心已转储)\n'],
  ])('%s: /dev/shm, with the container flag', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(summary(d)).toMatch(/--shm-size|emptyDir/);
  });

  it.each([
    [
      'a bare host (SIGBUS has other causes there: a truncated mmap on NFS)',
      '(venv) user@box:~/p$ python train.py --data /nfs/data.lmdb\nepoch 0 step 100 loss 4.31\nBus error (core dumped)\n',
    ],
    [
      "torch.nn's container.py frame is no container",
      'Traceback (most recent call last):\n  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/container.py", line 217, in forward\n    input = module(input)\nFatal Python error: Bus error\n',
    ],
    [
      'a Singularity container shares the host /dev/shm',
      'singularity exec --nv img.sif python train.py\nI run it in a container on the cluster\nBus error (core dumped)\n',
    ],
  ])('%s: not /dev/shm', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).not.toBe('shm_exhausted');
  });

  const SHARE_FRAMES = [
    'Traceback (most recent call last):',
    '  File "/usr/lib/python3.10/multiprocessing/queues.py", line 244, in _feed',
    '    obj = _ForkingPickler.dumps(obj)',
    '  File "/venv/lib/python3.10/site-packages/torch/multiprocessing/reductions.py", line 607, in reduce_storage',
    '    metadata = storage._share_filename_cpu_()',
    '  File "/venv/lib/python3.10/site-packages/torch/storage.py", line 526, in _share_filename_cpu_',
    '    return super()._share_filename_cpu_(*args, **kwargs)',
  ].join('\n');
  it.each([
    ["a traceback cut at torch's storage-sharing frame", `${SHARE_FRAMES}\n`],
    ['the same frame for the fd strategy', SHARE_FRAMES.replaceAll('filename', 'fd') + '\n'],
    ['the file name cut in a title', 'RuntimeError: unable to write to file </torch>.....\nI have met this problem when i train the model\n'],
    ['zh: 共享内存不足', '训练时报错，提示共享内存不足，num_workers=8\nRuntimeError: DataLoader worker (pid 2212) exited unexpectedly\n'],
    ['zh: /dev/shm 满了 with Errno 28', 'OSError: [Errno 28] No space left on device\n硬盘空间还很多，df -h 看到 /dev/shm 满了\n'],
  ])('%s: /dev/shm', async (_name, text) => {
    expect((await diagnoseText(text))?.category).toBe('shm_exhausted');
  });

  it('the same frame failing on the file-descriptor limit is no full /dev/shm (ulimit -n / the file_system strategy)', async () => {
    const d = await diagnoseText(
      `${SHARE_FRAMES}\nRuntimeError: unable to open shared memory object </torch_91_3_0> in read-write mode: Too many open files (24)\n`,
    );
    // Since stop 38 its own rule (torch-shm-fd-limit, in the shared-memory family): the fd limit, not /dev/shm's room.
    expect(d?.rule).toBe('torch-shm-fd-limit');
    expect(d?.fixes[0]?.summary).toMatch(/file_system|ulimit/);
    expect(d?.fixes[0]?.summary).not.toMatch(/--shm-size|shm_size/);
  });

  it('the first fix names /dev/shm before the workers that write to it (en and zh)', async () => {
    const en = await diagnoseText('RuntimeError: unable to write to file </torch_8289_606636967_0>: No space left on device (28)\n');
    expect(summary(en).indexOf('/dev/shm')).toBeGreaterThanOrEqual(0);
    expect(summary(en).indexOf('/dev/shm')).toBeLessThan(summary(en).indexOf('workers'));
    const zh = await diagnoseOutput(['-'], {
      paste: 'RuntimeError: unable to write to file </torch_8289_606636967_0>: No space left on device (28)\n',
      locale: 'zh',
    });
    expect(zh.indexOf('/dev/shm 太小')).toBeGreaterThanOrEqual(0);
    expect(zh.indexOf('/dev/shm 太小')).toBeLessThan(zh.indexOf('传递每个 batch'));
  });
});

describe("host-RAM kills in the launchers' own formats", () => {
  it("torchelastic's 'Signal 9 (SIGKILL) received by PID': the host killed the job", async () => {
    const d = await diagnoseText(
      'torchrun --nproc_per_node=1 chat.py $CKPT\n> initializing model parallel with size 1\ntraceback : Signal 9 (SIGKILL) received by PID 2198\n',
    );
    expect(d?.category).toBe('host_oom_killed');
  });

  const SIGTERMS = [0, 1, 2]
    .map(
      (i) => `W0806 20:07:54.5${i} 148486 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 14859${i} closing signal SIGTERM`,
    )
    .join('\n');
  it.each([
    ['en', `Loading checkpoint shards:  47%|████▍     | 7/15 [03:24<03:59, 29.97s/it]${SIGTERMS}\n`],
    ['zh title', `加载模型时收到终止信号\nLoading checkpoint shards:  20%|██        | 3/15 [00:34<02:05, 10.50s/it]\n${SIGTERMS}\n`],
  ])("torchrun stopping the other ranks while shards load, no rank's error shown (%s): a rank killed for host RAM, loaded once", async (_l, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(summary(d)).toMatch(/low_cpu_mem_usage/);
  });

  it("a rank that raised while the shards loaded is that rank's error, not a kill", async () => {
    const d = await diagnoseText(
      'Loading checkpoint shards:  50%|█████     | 2/4\n[rank1]: Traceback (most recent call last):\n[rank1]:   File "/w/train.py", line 41, in <module>\n[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 1 has a total capacity of 23.55 GiB of which 301.06 MiB is free.\n' +
        `${SIGTERMS}\nE1103 09:14:03 api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 2291)\n`,
    );
    expect(d?.category).not.toBe('host_oom_killed');
  });

  it.each([
    ['CPU RAM explodes after ~60 iterations.\nThe training starts but the RAM explodes and the system crashes.\nBatch size: 2\n'],
    ['System memory blows up during tokenization\nthe machine freezes after a while\n'],
    ['Host memory fills up when training the detector\nno error is printed\n'],
  ])('host RAM running out told in the first line: the host-RAM answer (%#)', async (text) => {
    expect((await diagnoseText(text))?.category).toBe('host_oom_killed');
  });
});

describe('growth needs a climb across the run; one OOM after N epochs is not growth', () => {
  it.each([
    ['Cuda memory usage increase over time when training\nMy training process will be killed around epoch 800.\n'],
    ['GPU memory usage grows continually over time\nFFHQ with 8 RTX3090s. Is it natural?\n'],
    ['About the GPU memory\nWhen I train the model the GPU memory increases up to out of memory.\n'],
    ['VRAM usage will increase steadily during training and then the run dies\n'],
  ])('GPU memory stated as climbing over the run: growth, the experiment that finds what grows first (%#)', async (text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('growing_memory_leak');
    expect(summary(d)).toMatch(/memory_summary|_record_memory_history/);
  });

  it.each([
    ['CUDA out of memory\nwhen the train epoch reaches 30, I always got the error: RuntimeError: CUDA out of memory.\n'],
    ['GPU memory problem\nWith batch 32 the training is fine, but at epoch 60 it fails: RuntimeError: CUDA error: out of memory\n'],
    ['训练到第 23 个 epoch 时报错 CUDA out of memory\n'],
  ])('one OOM after N epochs with nothing rising stays a GPU OOM (%#)', async (text) => {
    expect((await diagnoseText(text))?.category).toBe('cuda_oom');
  });

  it.each([
    ['More RAM is consumed as training epoch increases\nat the 14th epoch the process is killed, CPU RAM exhausted.\n'],
    ['More host memory is used after every epoch until the job dies\n'],
  ])('host RAM stated as climbing per epoch, nothing naming what: growth, with the measurement that finds it (%#)', async (text) => {
    const d = await diagnoseText(text);
    expect(['growing_memory_leak', 'host_oom_killed']).toContain(d?.category);
    expect(JSON.stringify(d?.fixes[0])).toMatch(/tracemalloc/);
  });
});

describe('the real threads of host6/', () => {
  it.each([
    ['2500', 'shm_exhausted', /--shm-size/],
    ['2502', 'shm_exhausted', /\/dev\/shm/],
    ['2505', 'shm_exhausted', /--shm-size/],
    ['2506', 'host_oom_killed', /RAM/],
    ['2507', 'host_oom_killed', /low_cpu_mem_usage/],
    ['2511', 'host_oom_killed', /RAM/],
    ['2515', 'growing_memory_leak', /memory_summary|_record_memory_history/],
    ['2517', 'growing_memory_leak', /memory_summary|_record_memory_history/],
  ])('host6/%s: %s', async (num, category, fix) => {
    const d = await firstOfCase('host6', num);
    expect(d?.category).toBe(category);
    expect(summary(d)).toMatch(fix);
  });
});
