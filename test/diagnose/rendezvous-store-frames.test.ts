// Issue 23: c10d's store is what every process group is built on, and its failures have fixed names: the exception
// class DistStoreError (raised only by the store: a wait that timed out, clients that never joined) and, in a traceback
// cut before its exception, distributed_c10d.py's own line "store, rank, world_size = next(rendezvous_iterator)",
// which is on the stack only while the store is being reached, before any NCCL communicator exists. Either is the
// start-up rendezvous, not memory and not NCCL's network. Real log from blind6 (a read split; URL in its cases.json)
// and synthetic variants written from the principle (marked "synthetic"). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('A store error or a traceback inside the rendezvous is the distributed start-up', () => {
  it('real blind6/3865: vLLM workers cut inside init_process_group -> next(rendezvous_iterator)', async () => {
    const d = await firstOfCase('blind6', '3865');
    expect(d?.rule).toBe('nccl-rendezvous-timeout');
    expect(first(d)).toMatch(/init_process_group|MASTER_ADDR/);
  });

  // synthetic: the frame with the launcher prefixes it is printed under, and the class named alone
  it.each([
    [
      'frame, rank prefix',
      '[rank1]: Traceback (most recent call last):\n[rank1]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 1520, in init_process_group\n[rank1]:     store, rank, world_size = next(rendezvous_iterator)',
    ],
    ['class in a title', 'Multi-node job hangs then fails with DistStoreError on the second node'],
    ['class with its message', 'torch.distributed.DistStoreError: use_libuv was requested but PyTorch was built without libuv support'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).not.toMatch(/\bbatch\b/i);
  });

  // synthetic near miss: a collective's frame after the rendezvous succeeded is not the start-up
  it('synthetic near miss: a broadcast frame with an NCCL timeout is not the rendezvous', async () => {
    const d = await diagnosePaste(
      '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1910, in broadcast\n    work = default_pg.broadcast([tensor], opts)\n[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600076 milliseconds before timing out.',
    );
    expect(d?.rule).not.toBe('nccl-rendezvous-timeout');
  });
});

describe("The store's count of who joined is its fixed message, with or without its timeout head", () => {
  it('real confuse10/5504: "torch.distributed.DistStoreError: 16/32 clients joined" names 16 missing', async () => {
    const d = await firstOfCase('confuse10', '5504');
    expect(d?.rule).toBe('nccl-rendezvous-timeout');
    expect(first(d)).toMatch(/16 of 32/);
  });

  it('real confuse10/5509: a title "timeout with error 1/4 clients joined" names 3 missing', async () => {
    const d = await firstOfCase('confuse10', '5509');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/1 of 4 processes: 3 never/);
  });

  // synthetic: PyTorch 2.2+'s "workers" wording with its wait, and the count alone
  it.each([
    ['workers with the wait', 'torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 workers joined.', /waited 6 s/],
    ['count alone', 'Rank 0 gave up: 3/8 clients joined', /3 of 8 processes: 5 never/],
  ])('synthetic: %s', async (_name, text, words) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('nccl-rendezvous-timeout');
    expect(first(d)).toMatch(words);
  });
});
