// Through the CLI's own entry in this process (`gpu-doctor diagnose --json`, corpus-case.ts): a distributed start-up that timed out names the ranks
// that never arrived, a rank's peer failure names that rank, and a rank's own OOM before the others'
// timeouts is the answer (issue 23). Synthetic variants from PyTorch's message formats beside real
// threads of dist4/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseFile, diagnoseOutput, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const dir = mkdtempSync(join(tmpdir(), 'dist-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
async function diagnoseText(text: string): Promise<CaseDiagnosis | undefined> {
  const file = join(dir, `case-${n++}.log`);
  writeFileSync(file, text);
  return diagnoseFile(file);
}
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';

describe('a start-up that timed out: the ranks that never arrived, not the network', () => {
  it.each([
    [
      'init_process_group on two nodes, 4 of 8 came',
      'RuntimeError: Timed out initializing process group in store based barrier on rank: 6, for key: store_based_barrier_key:1 (world_size=8, worker_count=4, timeout=0:30:00)',
      /Only 4 of 8 ranks.*the other 4 never arrived/,
    ],
    [
      'TCPStore on rank 0, 15 of 16 clients',
      'torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 15/16 clients joined.',
      /only 15 of 16 processes connected: 1 never reached/,
    ],
    [
      'a worker node cannot reach the master',
      '[W socket.cpp:663] [c10d] The client socket has timed out after 1800s while trying to connect to (gpu-master, 29500).',
      /could not connect to the rendezvous store at gpu-master, 29500/,
    ],
  ])('%s', async (_name, text, words) => {
    const d = await diagnoseText(
      ['Traceback (most recent call last):', '  File "train.py", line 12, in <module>', '    dist.init_process_group("nccl")', text].join('\n'),
    );
    expect(d?.category).toBe('nccl_or_distributed');
    expect(d?.rule).toBe('nccl-rendezvous-timeout');
    expect(first(d)).toMatch(words);
    expect(first(d)).not.toMatch(/NCCL_SOCKET_IFNAME|NCCL_IB_DISABLE/);
  });
  it('the barrier passed and the run later ran out of memory: the OOM is the answer', async () => {
    const d = await diagnoseText(
      [
        'Waiting in store based barrier to initialize process group for rank: 1, key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)',
        'Rank 1: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.',
        'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 1; 15.78 GiB total capacity; 13.90 GiB already allocated; 512.00 MiB free; 14.20 GiB reserved in total by PyTorch)',
      ].join('\n'),
    );
    expect(d?.category).toBe('cuda_oom');
  });
  it('in a Chinese terminal the finding is in Chinese, with the same figures', async () => {
    const file = join(dir, 'zh.log');
    writeFileSync(
      file,
      'RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=4, worker_count=2, timeout=0:30:00)\n',
    );
    const stdout = await diagnoseOutput([file], { locale: 'zh' });
    expect(stdout).toContain('只有 4 个 rank 中的 2 个到达了');
  });
});

describe('the rank that failed first, as the waiting ranks name it', () => {
  it('rank 0 never published the ncclUniqueId: read rank 0', async () => {
    const d = await diagnoseText(
      "[rank5]: torch.distributed.DistBackendError: [5] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
    );
    expect(d?.rule).toBe('nccl-lost-rank');
    expect(first(d)).toContain("Read rank 0's own output first");
  });
  it("a rank's CUDA OOM before the watchdog timeouts of the others is the answer", async () => {
    const d = await diagnoseText(
      [
        '[rank1]: Traceback (most recent call last):',
        '[rank1]:   File "train.py", line 88, in <module>',
        '[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 1 has a total capacity of 79.10 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 77.80 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.90 GiB is reserved by PyTorch but unallocated.',
        '[rank0]:[E1103 10:12:44.120 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=912, OpType=ALLREDUCE, NumelIn=2048, NumelOut=2048, Timeout(ms)=1800000) ran for 1800077 milliseconds before timing out.',
        '[rank2]:[E1103 10:12:44.121 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=912, OpType=ALLREDUCE, NumelIn=2048, NumelOut=2048, Timeout(ms)=1800000) ran for 1800079 milliseconds before timing out.',
      ].join('\n'),
    );
    expect(d?.category).toBe('cuda_oom');
  });
});

describe('real threads (dist4/)', () => {
  it('1904 (powersgd, file:// init reused): more arrivals than ranks, the stale store, not a longer timeout', async () => {
    const d = await firstOfCase('dist4', '1904');
    expect(d?.rule).toBe('nccl-rendezvous-timeout');
    expect(first(d)).toMatch(/4 arrivals for a world of 2.*file:\/\/ init file/);
  });
  it('1905 (Megatron-DeepSpeed on two nodes): 4 of 8 ranks arrived', async () => {
    expect(first(await firstOfCase('dist4', '1905'))).toMatch(/Only 4 of 8 ranks/);
  });
  it('1909 (torchrun c10d across nodes): the endpoint this node could not reach', async () => {
    expect(first(await firstOfCase('dist4', '1909'))).toContain('192.0.0.1:1234');
  });
});
