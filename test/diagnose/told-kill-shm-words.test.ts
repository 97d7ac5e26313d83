// Principle (issue 23, recognition; s40 words): a report in words is read as a report. A failure verb from a fixed
// vocabulary with the resource named gives the category, with no error message in the paste:
// - the kernel's kill told by its signal or exit status ("error code -9", "exit code 137", "SIGKILL") is the host's
//   OOM killer (a full card raises an error, it does not kill), unless the container's own record says no OOM kill
//   ("OOMKilled": false) or the user killed it;
// - shared memory (/dev/shm, 共享内存) told short ("low", "too small", "only 64M", "不足") is /dev/shm exhausted, where
//   no rule recognised another memory failure;
// - a surge of the memory named ("skyrockets", "飙升") with a crash on the line is that memory running out; memory
//   told to only rise (只增不减, "never goes down") is a climb, and the OOM the same line only forecasts is no OOM.
// Real cases from the read splits (blind11, blind12, growth10) beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('a kill told by its signal or exit status is the host OOM killer', () => {
  it('real: LLaMA finetune resume "flip out right after loading the checkpoint and give error code -9" (blind11 6649)', async () => {
    expect((await firstOfCase('blind11', '6649'))?.category).toBe('host_oom_killed');
  });
  it('real: "Machine Learning Worker get a SIGKILL and failed when photo is uploaded" (growth10 5013)', async () => {
    expect((await firstOfCase('growth10', '5013'))?.category).toBe('host_oom_killed');
  });
  it.each([
    ['Training stops\nAfter the first epoch the script just exits with code -9, no traceback.'],
    ['Preprocessing dies\nThe tokenization step fails with exit code 137 on our pod.'],
    ['Process gets SIGKILL\nWhen I load the 13B checkpoint the process receives SIGKILL.'],
    ['Crash on eval\nThe job was terminated with signal 9 during evaluation.'],
  ])('%j is a host kill (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('host_oom_killed');
  });
  it('real near miss: Kubernetes "Exit Code 137" with "OOMKilled": false is no OOM kill (recog6 2218)', async () => {
    expect((await firstOfCase('recog6', '2218'))?.category).toBeUndefined();
  });
  it.each([
    ['Container exits\nThe container stops with exit code 137.\n"OOMKilled": false,\n"ExitCode": 137'],
    ['Stopping\nI stop the server with kill -9 and restart it, that works fine.'],
    ['Exit codes\nThe script exits with code 1 when the config is missing.'],
  ])('%j is no host kill (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).not.toBe('host_oom_killed');
  });
});

describe('shared memory told short is /dev/shm exhausted', () => {
  it('real: "unable to use num_workers>0 ... the low shared memory available (64M)" (blind12 7107)', async () => {
    const d = await firstOfCase('blind12', '7107');
    expect(d?.category).toBe('shm_exhausted');
    expect(d?.fixes[0].summary).toMatch(/shm-size|ipc=host/);
  });
  it.each([
    ['DataLoader question\nOur cluster gives jobs only 64M of /dev/shm, so workers>0 do not work.'],
    ['Workers crash\nThe shared memory is too small in this environment and the loader dies.'],
    ['多进程问题\n训练时共享内存不足，num_workers 只能设成 0。'],
  ])('%j is shm exhausted (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('shm_exhausted');
  });
  it.each([
    ['Setup\nI start the container with --shm-size=16g and the DataLoader uses 8 workers.'],
    ['Question\nIf the shared memory is low, what should I set?'],
    ['Question\nMake sure shm is not full before training: is there a check for that?'],
  ])('%j tells no shm shortage (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).not.toBe('shm_exhausted');
  });
  it('a CUDA OOM message beside a remark on shm stays the OOM (synthetic)', async () => {
    const paste =
      'Training fails\nOur /dev/shm is small, but that is not the point.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; 21.10 GiB already allocated; 1.20 GiB free; 21.50 GiB reserved in total by PyTorch)';
    expect((await diagnosePaste(paste))?.category).toBe('cuda_oom');
  });
});

describe('a surge with a crash is the failure; memory that only rises is a climb', () => {
  it('real: "crashed during the validation steps ... GPU memory skyrocket" (blind11 6601)', async () => {
    const d = await firstOfCase('blind11', '6601');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/evaluation|validation/);
  });
  it('real: "显存占用只增不减，最终有可能会触发显存oom" (blind12 7167)', async () => {
    expect((await firstOfCase('blind12', '7167'))?.category).toBe('growing_memory_leak');
  });
  it.each([
    ['Inference crash\nThe GPU memory shoots up when the second image arrives and the server crashes.'],
    ['推理崩溃\n输入长文本时显存飙升，然后程序崩了。'],
  ])('%j is a GPU OOM (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('cuda_oom');
  });
  it.each([['服务问题\n每次请求之后显存占用只增不减。'], ['Serving question\nThe VRAM usage never goes down between requests, it just keeps what it took.']])(
    '%j is a climb (synthetic)',
    async (text) => {
      expect((await diagnosePaste(text))?.category).toBe('growing_memory_leak');
    },
  );
  it.each([
    // A surge with no crash on the line is usage, not a failure; a spike that settles is caching.
    ['Question\nGPU memory spikes during the first batch, is that expected?'],
  ])('%j tells no failure (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBeUndefined();
  });
});

describe('an illegal memory access is a fault, not capacity', () => {
  it('real: sglang "[Bug] illegal memory access encountered" with 18 GB free per rank (blind12 7189)', async () => {
    expect((await firstOfCase('blind12', '7189'))?.category).toBe('device_assert_not_memory');
  });
  it('synthetic: the short form in a title with free memory logged', async () => {
    const paste = 'illegal memory access encountered during warmup\n[TP0] Memory pool end. avail mem=30.10 GB\n[TP0] Capture cuda graph begin.';
    expect((await diagnosePaste(paste))?.category).toBe('device_assert_not_memory');
  });
});

describe('first run on new threads (words14): the forms its misses showed', () => {
  it('real: "DetectNet training fails with error code -9" (a tool named Detect... is no "detect" = handling) (words14 7420)', async () => {
    expect((await firstOfCase('words14', '7420'))?.category).toBe('host_oom_killed');
  });
  it('real near miss: "dying with code 137" with OOMKilled:false unquoted (words14 7422)', async () => {
    expect((await firstOfCase('words14', '7422'))?.category).toBeUndefined();
  });
  it('real: "[Bug] illegal memory access" named bare (words14 7424)', async () => {
    expect((await firstOfCase('words14', '7424'))?.category).toBe('device_assert_not_memory');
  });
  it.each([['DetectionNet finetune fails with error code -9 after two epochs'], ['Job dies\nThe pod restarts: exit code 137, OOMKilled:true']])(
    '%j is a host kill (synthetic)',
    async (text) => {
      expect((await diagnosePaste(text))?.category).toBe('host_oom_killed');
    },
  );
  it.each([['Container restarts\nexit code 137\nState: {OOMKilled: false, ExitCode: 137}']])('%j is no host kill (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).not.toBe('host_oom_killed');
  });
  it('synthetic: "illegal memory access" told in a sentence of a kernel run', async () => {
    expect((await diagnosePaste('Kernel crash\nThe fused attention kernel hits an illegal memory access on long inputs.'))?.category).toBe(
      'device_assert_not_memory',
    );
  });
  it('real: "显存会一直递增(每次推理递增200M左右)，没有释放掉" (a comeback denied is a climb) (words14 7426)', async () => {
    expect((await firstOfCase('words14', '7426'))?.category).toBe('growing_memory_leak');
  });
  it.each([['推理问题\n显存占用一直增加，始终没有释放。']])('%j is a climb (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('growing_memory_leak');
  });
  it.each([['推理问题\n显存占用先上升，推理结束后释放掉了。']])('%j tells no climb (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).not.toBe('growing_memory_leak');
  });
  it('real: "keep increasing the batch size until you are near 100% memory usage" is the user\'s act, no climb (words14 7423)', async () => {
    expect((await firstOfCase('words14', '7423'))?.category).toBe('cuda_oom');
  });
  it.each([['Tuning\nI keep increasing the batch size until the GPU memory is at 90%, then training gets slower.']])(
    '%j tells no climb (synthetic)',
    async (text) => {
      expect((await diagnosePaste(text))?.category).not.toBe('growing_memory_leak');
    },
  );
  it.each([['Inference\nThe GPU memory keeps increasing with every request until the server dies.']])('%j is a climb (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('growing_memory_leak');
  });
});

describe("a non-memory message named in a sentence's parenthesis is an aside, not the run's end", () => {
  it('real: llama-server "crashes with `CUDA error: out of memory`", another fork "(cublasSgemm CUBLAS_STATUS_INVALID_VALUE)" (blind11 6666)', async () => {
    expect((await firstOfCase('blind11', '6666'))?.category).toBe('cuda_oom');
  });
  it('synthetic: the aside beside a memory failure told in words', async () => {
    const paste =
      'Server crash\nThe server crashes with `CUDA error: out of memory` after an hour.\nAn older build crashed differently (cublasSgemm CUBLAS_STATUS_INVALID_VALUE) on the same card.';
    expect((await diagnosePaste(paste))?.category).toBe('cuda_oom');
  });
  it('synthetic: the message logged on its own line still ends the run as not memory', async () => {
    const paste = 'GPU memory runs out sometimes\nERROR worker failed: CUBLAS_STATUS_INVALID_VALUE when calling cublasSgemm';
    expect((await diagnosePaste(paste))?.category).not.toBe('cuda_oom');
  });
});
