// Pastes the engine answered with no diagnosis at all (blind6-10's "none" rows), read by forms that name the failure
// outside a framework's message (issue 23, recognition). Principles, each with synthetic variants written from the
// principle (said so below) beside the real threads of the read splits:
// - Exit status 137 (128 + SIGKILL) in the other words launchers and reporters use ("error code 137", docker ps's
//   "Exited (137)", "退出码 137"): the host's OOM kill (host-oom-killed).
// - The shell's "Killed" quoted in brackets ("总是退出（killed）"): the kill told, the host's memory (told-failure.ts).
// - ENOSPC ("[Errno 28] No space left on device") in a paste that names shared memory apart from it, or a DataLoader in
//   a container: /dev/shm full (shm-no-space.ts); not where a df row shows /dev/shm with room, nor where neither is named.
// - The card's memory told larger in evaluation than in training (a ratio, a comparative, 比...高, two figures): evaluation keeps
//   what training frees, the failure placed in evaluation (told-eval-compare.ts); not where evaluation takes less.
// - An attempt to train a model of a stated size on a named card told as failing ("to no avail", "without success",
//   "跑不起来"): the card's failure, whose lever the budget decides.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('exit status 137 told in any wording (host-oom-killed)', () => {
  it('real: "crashes with error code 137" in a 996 MiB Docker VM (blind10/6238)', async () => {
    expect((await firstOfCase('blind10', '6238'))?.category).toBe('host_oom_killed');
  });
  it.each([
    ['docker ps', 'CONTAINER ID   IMAGE     STATUS\n3f2a1b   trainer   Exited (137) 2 minutes ago\n'],
    ['error code', 'My training container keeps dying. It crashes with error code 137 after a few epochs.\n'],
    ['status code', 'The job finished with status code 137 and no Python traceback.\n'],
    ['zh', '容器训练到一半就退出了，退出码 137，没有任何报错。\n'],
  ])('synthetic (%s): the host OOM kill', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).toBe('host_oom_killed');
  });
  it('synthetic: another exit status is no kill', async () => {
    expect((await diagnosePaste('The container exited with error code 1 after printing the usage.\n'))?.category).not.toBe('host_oom_killed');
  });
});

describe('"killed" quoted in brackets (told-failure.ts)', () => {
  it('real: "训练过程中途总是退出（killed），没任何错误提示" on a CPU-only run (blind10/6261)', async () => {
    expect((await firstOfCase('blind10', '6261'))?.category).toBe('host_oom_killed');
  });
  it.each([
    ['en, parentheses', 'Training exits (Killed) in the middle of epoch 2 with no error message\n'],
    ['en, square brackets', 'The preprocessing script stops with [killed] while it builds the vocabulary\n'],
    ['zh, full-width', '跑到第三个epoch就退出了（Killed），没有报错\n'],
  ])('synthetic (%s): the host kill', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).toBe('host_oom_killed');
  });
});

describe('ENOSPC beside shared memory (shm-no-space.ts)', () => {
  it.each([
    ['6205', 'the shared memory told filling in a Kubeflow pod'],
    ['6206', 'df -h showing only the shm device changing'],
  ])('real: blind10/%s (%s) is /dev/shm full', async (n) => {
    const d = await firstOfCase('blind10', n);
    expect(d?.category).toBe('shm_exhausted');
    expect(d?.fixes[0]?.summary).toMatch(/shm/);
  });
  it.each([
    ['the shm named in a sentence', 'OSError: [Errno 28] No space left on device\nThe pod only has 64M of /dev/shm as far as I can see.\n'],
    [
      "torch's multiprocessing frames",
      'Traceback (most recent call last):\n  File "/usr/lib/python3/site-packages/torch/multiprocessing/reductions.py", line 333, in reduce_storage\n    fd, size = storage._share_fd_cpu_()\nOSError: [Errno 28] No space left on device\n',
    ],
    ['zh', '训练时报 OSError: [Errno 28] No space left on device\n我怀疑是容器的共享内存太小了\n'],
    ['a DataLoader in a container', 'I run training inside a docker container with DataLoader(num_workers=8).\nOSError: [Errno 28] No space left on device\n'],
  ])('synthetic (%s): /dev/shm full', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).toBe('shm_exhausted');
  });
  it.each([
    ['a container but no DataLoader', 'Building the docker image fails: OSError: [Errno 28] No space left on device\n'],
    ['no shared memory named', 'OSError: [Errno 28] No space left on device\nwhile saving the checkpoint to /data/ckpt\n'],
    [
      'a df row of /dev/shm with room',
      'OSError: [Errno 28] No space left on device\n$ df -h\nshm              64M     0   64M   0% /dev/shm\n/dev/sda1       100G  100G     0 100% /\n',
    ],
    ['only the shm setting', 'OSError: [Errno 28] No space left on device\nI run the container with --shm-size=16g already.\n'],
  ])('synthetic (%s): not read as /dev/shm full', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).not.toBe('shm_exhausted');
  });
});

describe('evaluation told taking more of the card than training (told-eval-compare.ts)', () => {
  it.each([
    ['6220', '推理时占用显存显著大于训练时占用显存'],
    ['6229', '8.8g under model.train(), 15.8g under model.eval()'],
  ])('real: blind10/%s (%s) is a card failure in evaluation, no_grad first, not the batch', async (n) => {
    const d = await firstOfCase('blind10', n);
    expect(d?.category).toBe('cuda_oom');
    expect(d?.facts.phase).toBe('eval');
    expect(d?.fixes[0]?.summary).toMatch(/no_grad|inference_mode/);
    expect(d?.fixes[0]?.changes?.batch).toBeUndefined();
  });
  it.each([
    ['en, ratio', 'Validation uses twice the GPU memory of training\nSame model, same batch size of 16, on a 24 GB card.\n'],
    ['en, comparative', 'Why does my model take more GPU memory during evaluation than during training? It is a plain PyTorch loop.\n'],
    ['zh, figures on one line', '训练时显存占用10G，验证时直接到18G，这正常吗\n'],
    ['zh, ratio', '评估时显存是训练时的3倍\n'],
    ['zh, 比 comparative', '为什么测试时显存占用比训练时还高？测试 batch 只有 2\n'],
  ])('synthetic (%s): the card in evaluation', async (_name, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('cuda_oom');
    expect(d?.facts.phase).toBe('eval');
  });
  it.each([
    ['evaluation takes less', '训练时显存占用20G，验证时只有12G\n'],
    ['zh, 比 lower', '验证时显存比训练时低很多，正常吗\n'],
    ['en, less', 'Evaluation uses less GPU memory than training, as expected.\n'],
    [
      'another error at the end',
      'Validation uses twice the GPU memory of training\nTraceback (most recent call last):\n  File "eval.py", line 3, in <module>\nKeyError: \'labels\'\n',
    ],
  ])('synthetic (%s): no card failure told', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).not.toBe('cuda_oom');
  });
});

describe('an attempt to train a model of a stated size on a named card, told as failing (told-vocabulary.ts attemptFailedOnCard)', () => {
  it('real: "tried to fine-tune LLaMA-7b with 1x NVIDIA A100-80GB to no avail" (blind10/6246): the budget, sharding or offload, not the batch', async () => {
    const d = await firstOfCase('blind10', '6246');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(/offload|ZeRO|FSDP|shard/i);
    expect(d?.fixes[0]?.changes?.batch).toBeUndefined();
  });
  it.each([
    ['en, without success', 'I tried to train a 13B model on a 24 GB card without success.\n'],
    ['zh, 跑不起来', '7B 在一张 24G 卡上全量微调跑不起来\n'],
  ])('synthetic (%s): a card failure told', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).toBe('cuda_oom');
  });
  it.each([
    ['no model size', 'I tried to install flash-attn on my A100 to no avail\n'],
    ['no card', 'I tried to fine-tune a 7B model with the new tokenizer to no avail: the loss stays at 10.\n'],
  ])('synthetic (%s): nothing told', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).not.toBe('cuda_oom');
  });
});

describe('memory trouble told as a noun ("I get a memory error", "Problems with CUDA memory", told-failure.ts FAILS)', () => {
  it('real: "When I use @set FORCE_FULL_PRECISION=T ... I get a memory error" on an 11 GB card (blind7/3917): the fp32 load, not the batch', async () => {
    const d = await firstOfCase('blind7', '3917');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(/fp32|fp16|half/);
  });
  it('real: "Problems with CUDA memory when validation from raw_data." above a cut nnUNet traceback (blind7/3926)', async () => {
    expect((await firstOfCase('blind7', '3926'))?.category).toBe('cuda_oom');
  });
  it.each([
    ['en, memory error', 'Training a UNet on my RTX 3060 12GB: after the first epoch I get a memory error.\n'],
    ['en, problems with GPU memory', 'Problems with GPU memory when running inference on 4K images\n'],
  ])('synthetic (%s): a card failure told', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).toBe('cuda_oom');
  });
  it.each([
    ['negated', 'Training on my RTX 3060 finishes without any memory error, but the accuracy stays at 10%.\n'],
    ['asked', 'Could this be a memory problem? The loss is NaN after epoch 2 on my GPU.\n'],
  ])('synthetic (%s): nothing told', async (_name, paste) => {
    expect((await diagnosePaste(paste))?.category).not.toBe('cuda_oom');
  });
});
