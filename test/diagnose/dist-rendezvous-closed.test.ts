// Principle (issue 23, recognition; s40 dist): a launcher's or library's fixed failure message, or the report's own
// words for the ranks failing to connect, names the distributed category, and the first fix is the one the message
// implies:
// - torch.distributed.elastic's RendezvousClosedError (rendezvous/api.py; dynamic_rendezvous's "detected that
//   rendezvous was closed") means another node's agent had already ended the job (its workers failed past their
//   restarts, or it was stopped), so this node could not rejoin: the first failing node's own error is the cause
//   (levers: nccl-lost-rank, lost-rank.ts);
// - a report that names Gloo or NCCL and says its connect step fails ("full mesh" / 全网格, connect / 连接 / 通信 with a
//   failure word or an inability), on a run with ranks, nodes or a launcher, is the ranks unable to reach each other
//   (interface, GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME / VLLM_HOST_IP), below every framework error line
//   (knowledge/distributed-connect-reported);
// - a rank's death by signal 9 under the elastic agent stays the host's kill, not the distributed category.
// Real cases from blind13 and dist14 beside synthetic variants written from the principle, and near misses.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined): string => d?.fixes[0]?.summary ?? '';

const CLOSED_TAIL = [
  '  File "/usr/lib/python3/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 635, in run',
  '    raise RendezvousClosedError()',
  'torch.distributed.elastic.rendezvous.api.RendezvousClosedError',
].join('\n');

describe('a closed elastic rendezvous is a node that ended the job first', () => {
  it('real: srun + torchrun RendezvousClosedError after epoch 2 (blind13 7646)', async () => {
    expect((await firstOfCase('blind13', '7646'))?.category).toBe('nccl_or_distributed');
  });
  it.each([
    ['7545', 'Kubeflow elastic job, RendezvousClosedError in the error_handler JSON'],
    ['7546', 'torchrun c10d scale down, RendezvousClosedError traceback'],
  ])('real: dist14 %s (%s)', async (id) => {
    const d = await firstOfCase('dist14', id);
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/rendezvous was closed/i);
  });
  it.each([
    [`Traceback (most recent call last):\n${CLOSED_TAIL}`],
    [`Epoch 3 started on 2 nodes\n${CLOSED_TAIL}\nsrun: error: node2: task 1: Exited with exit code 1`],
    ["INFO:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'gpu7_311_0' detected that rendezvous was closed\nERROR: job failed"],
    ['ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{"message": {"message": "RendezvousClosedError: "}}'],
  ])('%j is the distributed category with the closed-rendezvous finding (synthetic)', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('nccl_or_distributed');
  });
  it('synthetic near miss: a peer that closed its Gloo socket keeps its own finding beside a closed rendezvous', async () => {
    const d = await diagnosePaste(`[E ProcessGroupGloo.cpp:137] gloo: Connection closed by peer [10.0.0.3]:4312\n${CLOSED_TAIL}`);
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/10\.0\.0\.3/);
  });
});

describe('a rank killed by signal 9 under the elastic agent stays the host kill', () => {
  it('real: torchrun ChildFailedError, failed (exitcode: -9) (dist14 7547)', async () => {
    expect((await firstOfCase('dist14', '7547'))?.category).toBe('host_oom_killed');
  });
  it.each([
    [
      `Loading checkpoint shards: 40%\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 812) of binary: /usr/bin/python3\n${CLOSED_TAIL}\n  traceback : Signal 9 (SIGKILL) received by PID 812`,
    ],
  ])('%j is host_oom_killed, not the closed rendezvous it caused (synthetic)', async (text) => {
    expect((await diagnosePaste(text))?.category).toBe('host_oom_killed');
  });
});

describe('the ranks failing to connect, told in words, is the distributed category', () => {
  it('real: vLLM + Ray "在使用 Gloo 进行全网格连接时遇到了问题" (blind13 7649)', async () => {
    expect((await firstOfCase('blind13', '7649'))?.category).toBe('nccl_or_distributed');
  });
  it('real: "Gloo 库无法在两台计算机之间进行通信" over a vLLM traceback cut short (dist14 7540)', async () => {
    const d = await firstOfCase('dist14', '7540');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/GLOO_SOCKET_IFNAME/);
  });
  it.each([
    ['Multi-node training\nOn two nodes with torchrun the Gloo full mesh connection fails right at start.'],
    ['多机训练\n两台机器用 deepspeed 启动，NCCL 连接失败，单机没问题。'],
    ['Ray cluster with 2 nodes\nvLLM tensor_parallel_size=4: gloo cannot connect between the nodes.'],
    ['Slurm job on 4 nodes\nNCCL connection refused between nodes after init.'],
  ])('%j is the ranks unable to connect (synthetic)', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/SOCKET_IFNAME/);
  });
  it.each([
    // no distributed run on the paste
    ['Question\nIs gloo connection faster than nccl for small tensors? No error, just asking.'],
    // a framework error line decides: the CUDA OOM, not the words
    [
      'Two nodes with torchrun, NCCL connection failed once before\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.20 GiB is free.',
    ],
  ])('%j is not the words rule (synthetic near miss)', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule ?? '').not.toBe('distributed-connect-reported');
    if (/OutOfMemoryError/.test(text)) expect(d?.category).toBe('cuda_oom');
  });
});

// c10d's own class and error for the same failures (PyTorch 2.2+ DistNetworkError; socket.cpp's [E] line after every address failed).
describe("c10d's socket errors name the distributed category", () => {
  it('real: Open-Sora under torchrun --standalone, "[E socket.cpp] ... failed to connect to any network address of" (dist14 7548)', async () => {
    const d = await firstOfCase('dist14', '7548');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/6841231, 47389/);
  });
  it.each([
    [
      'torch.distributed.DistNetworkError: The client socket has failed to connect to [node01]:29500 (errno: 111 - Connection refused).',
      'nccl-rendezvous-timeout',
      /node01\]?:29500/,
    ],
    [
      '[rank1]: torch.distributed.DistNetworkError: The client socket has failed to connect to [10.2.0.4]:41000 (errno: 113 - No route to host).',
      'nccl-rendezvous-timeout',
      /10\.2\.0\.4/,
    ],
    ['[rank3]: torch.distributed.DistNetworkError: Connection reset by peer', 'nccl-lost-rank', /./],
    [
      '[E socket.cpp:753] [c10d] The client socket has failed to connect to any network address of (gpu-node-3, 29500).',
      'nccl-rendezvous-timeout',
      /gpu-node-3, 29500/,
    ],
  ])('%j is %s (synthetic)', async (text, rule, finding) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe(rule);
    expect(first(d)).toMatch(finding);
  });
  it('synthetic near miss: the same connect text as a [W socket.cpp] retry warning beside a CUDA OOM stays the OOM', async () => {
    const d = await diagnosePaste(
      '[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free.',
    );
    expect(d?.category).toBe('cuda_oom');
  });
});
