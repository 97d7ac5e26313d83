// Failures told in the report with a runtime's or shell's fixed word beside them:
// - a distributed run that stops, without an error, at NCCL's start-up ("卡在 init nccl 后", "hangs after NCCL init"):
//   NCCL cannot connect its ranks (interface, ports, P2P) -> NCCL_DEBUG=INFO / NCCL_SOCKET_IFNAME, never memory;
// - the shell's "Killed" quoted as how the run exited ('exit with "Killed"'): the kernel's OOM kill on host RAM;
// - a multi-GPU run's memory told as all landing on card 0 ("显存都集中在了0卡"): ranks on the default device.
// Real logs: blind8/5690, 5682, 5653 (read split); variants written from the forms (synthetic).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('a hang at NCCL start-up, told', () => {
  it('real blind8/5690 (Paddle, 2 nodes stop after init nccl)', async () => {
    const d = await firstOfCase('blind8', '5690');
    expect(d?.rule).toBe('nccl-init-hang-reported');
    expect(first(d)).toMatch(/NCCL_SOCKET_IFNAME/);
  });

  // synthetic: English and Chinese, both orders
  it.each([
    ['en hang after', 'Multi-node training hangs after NCCL init, GPU util stays at 0'],
    ['en stuck at', 'both nodes are stuck at "NCCL INFO Init COMPLETE" and nothing else is printed'],
    ['zh init first', 'torchrun 两台机器，nccl初始化之后就卡住了，没有报错'],
    ['zh stuck first', '训练一直卡在 init nccl 这一步'],
    ['named at NCCL', 'Training hung up after : NCCL INFO Launch mode Parallel'],
    [
      'own sentence beside Init COMPLETE',
      'node1:12:40 [0] NCCL INFO comm 0x55 rank 0 nranks 16 cudaDev 0 - Init COMPLETE\nThe program just hangs after that, GPU util 0%',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('nccl-init-hang-reported');
    expect(d?.category).toBe('nccl_or_distributed');
  });

  it('synthetic: a hang told without any NCCL start-up line is not read as one', async () => {
    const d = await diagnosePaste('The program just hangs at epoch 3 of the dataloader loop');
    expect(d?.rule).not.toBe('nccl-init-hang-reported');
  });

  it('synthetic: NCCL init lines without a hang are not a diagnosis of their own', async () => {
    const d = await diagnosePaste('NCCL INFO Init COMPLETE comm 0x55 rank 0 nranks 2\nEpoch 1: loss 0.53');
    expect(d?.rule).not.toBe('nccl-init-hang-reported');
  });
});

describe('the shell\'s "Killed" quoted as the exit', () => {
  it('real blind8/5682 (Wan2.1 14B with --t5_cpu)', async () => {
    const d = await firstOfCase('blind8', '5682');
    expect(d?.category).toBe('host_oom_killed');
  });

  it.each([
    ['title', 'exit with "Killed"'],
    ['backticks', 'The script exits with `Killed` while loading the checkpoint'],
    ['plain', 'python train.py ... then it just died with Killed, no traceback'],
    ['quoted event', '"Killed" when loading a model.'],
    ['backticked event', 'I get `Killed` while training after the first epoch'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
  });
});

describe("a multi-GPU run's memory told as all on card 0", () => {
  it('real blind8/5653 (torch.distributed.launch --use_env, 2 ranks)', async () => {
    const d = await firstOfCase('blind8', '5653');
    expect(d?.rule).toBe('default-device-contexts-reported');
    expect(first(d)).toMatch(/set_device\(local_rank\)|CUDA_VISIBLE_DEVICES/);
  });

  it.each([
    ['zh only', '单机四卡训练，显存只分配到了0卡'],
    ['zh others empty', 'DDP 训练时 0卡 爆显存，其他卡没有显存占用'],
    ['en', 'With torchrun --nproc_per_node 4 all the memory is allocated on GPU 0 and the other cards stay empty'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('default-device-contexts-reported');
  });
});
