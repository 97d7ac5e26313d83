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
