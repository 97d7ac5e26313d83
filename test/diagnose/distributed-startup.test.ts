// The distributed reasoning (issue 23): who never reached the start-up rendezvous (rendezvous.ts), which
// rank failed first as the waiting ranks name it (lost-rank.ts), a rank's own failure ahead of the others'
// timeouts (first-failure.ts), and CUDA's out-of-memory at a process's first CUDA call (holder-phase.ts).
// Variants written from PyTorch's fixed message formats, with different figures, ranks and wordings each.
import { describe, expect, it } from 'vitest';
import { LogText, normalizeLog } from '../../src/diagnose/normalize.js';
import { readRendezvous, rendezvousWords } from '../../src/diagnose/rendezvous.js';
import { lostRankWords, readLostRank } from '../../src/diagnose/lost-rank.js';
import { orderFirstFailure } from '../../src/diagnose/first-failure.js';
import { oomPhase } from '../../src/diagnose/holder-phase.js';
import { whoHoldsMemory } from '../../src/diagnose/holder.js';
import { incidentOf } from '../../src/diagnose/incident/index.js';

const log = (...lines: string[]) => new LogText(normalizeLog(lines.join('\n')));
const barrier = (rank: number, world: number, count: number, timeout: string, waiting = false) =>
  waiting
    ? `Waiting in store based barrier to initialize process group for rank: ${rank}, key: store_based_barrier_key:1 (world_size=${world}, worker_count=${count}, timeout=${timeout})`
    : `RuntimeError: Timed out initializing process group in store based barrier on rank: ${rank}, for key: store_based_barrier_key:3 (world_size=${world}, worker_count=${count}, timeout=${timeout})`;

describe('rendezvous.ts: the store barrier counts who arrived', () => {
  it.each([
    [3, 8, 4, '0:30:00', 4],
    [0, 2, 1, '0:10:00', 1],
    [511, 1024, 1000, '1:00:00', 24],
  ])('rank %i, world %i, %i arrived (%s): the missing ranks are counted', (rank, world, count, timeout, missing) => {
    const stall = readRendezvous(log('Traceback (most recent call last):', barrier(rank, world, count, timeout)));
    expect(stall).toEqual({ kind: 'barrier', rank, world, arrived: count, timeout });
    const words = rendezvousWords(stall);
    expect(words).toContain(`Only ${count} of ${world} ranks`);
    expect(words).toContain(`the other ${missing} never arrived`);
  });
  it('more arrivals than ranks (the waiting lines alone): another run shares the store, a longer timeout cannot help', () => {
    const stall = readRendezvous(log(barrier(0, 4, 12, '0:01:00', true), barrier(0, 4, 12, '0:01:00', true)));
    expect(stall).toMatchObject({ kind: 'barrier', world: 4, arrived: 12 });
    expect(rendezvousWords(stall)).toMatch(/12 arrivals for a world of 4.*file:\/\/ init file.*MASTER_PORT/);
  });
  it('the last figures win: a count that rose while waiting is read at the timeout', () => {
    const stall = readRendezvous(log(barrier(0, 4, 1, '0:05:00', true), barrier(0, 4, 3, '0:05:00')));
    expect(stall).toMatchObject({ arrived: 3 });
  });
  it('TCPStore on rank 0: "N/M clients joined"', () => {
    const stall = readRendezvous(log('torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 6/8 clients joined.'));
    expect(stall).toEqual({ kind: 'store_clients', seconds: 1801, joined: 6, expected: 8 });
    expect(rendezvousWords(stall, 'zh')).toContain('8 个进程中只有 6 个连上');
  });
  it.each([
    ['[c10d] The client socket has timed out after 900s while trying to connect to (10.0.3.7, 29400).', '10.0.3.7, 29400'],
    ['[E socket.cpp:922] [c10d] The client socket has timed out after 60s while trying to connect to node-01:6000.', 'node-01:6000'],
  ])('a node could not reach the store: %s', (line, endpoint) => {
    const stall = readRendezvous(log(line));
    expect(stall).toMatchObject({ kind: 'connect', endpoint });
    expect(rendezvousWords(stall)).toContain(endpoint);
  });
  it.each([
    ['[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29511 (errno: 98 - Address already in use).', '29511'],
    [
      'torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 12355, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use',
      '12355',
    ],
  ])('the port is taken: %s', (line, port) => {
    expect(rendezvousWords(readRendezvous(log(line)))).toContain(`listen on port ${port}`);
  });
  it('torchrun closed its rendezvous window; no rendezvous failure at all reads as none', () => {
    expect(readRendezvous(log('torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError'))).toEqual({ kind: 'rendezvous' });
    expect(readRendezvous(log('Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.'))).toBeUndefined();
  });
});

describe('lost-rank.ts: the waiting ranks name the rank that failed first', () => {
  it.each([
    ['3', '0'],
    ['7', '4'],
  ])('rank %s waited for the ncclUniqueId of rank %s', (waiter, root) => {
    const line = `[rank${waiter}]: torch.distributed.DistBackendError: [${waiter}] is setting up NCCL communicator and retrieving ncclUniqueId from [${root}] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout`;
    const words = lostRankWords(readLostRank(log(line)));
    expect(words).toContain(`Read rank ${root}'s own output first`);
  });
  it('a collective fingerprint mismatch names both ranks and their collectives', () => {
    const lost = readLostRank(
      log(
        'RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=14, OpType=ALLGATHER, TensorShape=[8]), but Rank 5 is running collective: CollectiveFingerPrint(SequenceNumber=14, OpType=REDUCE_SCATTER).',
      ),
    );
    expect(lost).toEqual({ kind: 'mismatch', a: '2', opA: 'ALLGATHER', b: '5', opB: 'REDUCE_SCATTER' });
  });
  it('a Gloo peer that closed its socket, and monitoredBarrier naming the missing ranks', () => {
    expect(readLostRank(log('RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [192.168.1.20]:57321'))).toEqual({
      kind: 'peer_closed',
      peer: '[192.168.1.20]:57321',
    });
    expect(readLostRank(log('RuntimeError: [Rank 0]: Ranks 1, 3 failed to pass monitoredBarrier in 1800000 ms'))).toEqual({ kind: 'barrier', ranks: '1, 3' });
  });
});

describe('first-failure.ts: a rank failed first, the others waited', () => {
  const timeout = { rule: 'nccl-collective-timeout', category: 'nccl_or_distributed' as const, firstLine: 40 };
  it('a CUDA OOM raised before the watchdog timeouts comes first', () => {
    const oom = { rule: 'cuda-oom', category: 'cuda_oom' as const, firstLine: 10, firstExceptionLine: 10 };
    expect(orderFirstFailure([timeout, oom])[0]).toBe(oom);
  });
  it('an OOM after the timeouts, or only told in prose, stays behind them', () => {
    const after = { rule: 'cuda-oom', category: 'cuda_oom' as const, firstLine: 60, firstExceptionLine: 60 };
    const prose = { rule: 'cuda-oom', category: 'cuda_oom' as const, firstLine: 5 };
    expect(orderFirstFailure([timeout, after])[0]).toBe(timeout);
    expect(orderFirstFailure([timeout, prose])[0]).toBe(timeout);
  });
  it('an OOM the run went on past (many lines of progress before the timeout) was survived: the timeout is the failure', () => {
    const survived = { rule: 'cuda-oom', category: 'cuda_oom' as const, firstLine: 10, firstExceptionLine: 10 };
    const late = { rule: 'nccl-collective-timeout', category: 'nccl_or_distributed' as const, firstLine: 400 };
    expect(orderFirstFailure([late, survived])[0]).toBe(late);
  });
  it('a setup error is its own cause, not a waiting rank', () => {
    const setup = { rule: 'nccl-setup-error', category: 'nccl_or_distributed' as const, firstLine: 40 };
    const oom = { rule: 'cuda-oom', category: 'cuda_oom' as const, firstLine: 10, firstExceptionLine: 10 };
    expect(orderFirstFailure([setup, oom])[0]).toBe(setup);
  });
});

describe("holder-phase.ts: CUDA's own OOM at the process's first CUDA call is someone else's memory", () => {
  it.each([
    ['torch.cuda.set_device in the script', ['  File "main.py", line 30, in setup', '    torch.cuda.set_device(local_rank)']],
    [
      'lazy init inside torch',
      ['  File "/opt/conda/lib/python3.11/site-packages/torch/cuda/__init__.py", line 319, in _lazy_init', '    torch._C._cuda_init()'],
    ],
  ])('%s', (_name, frames) => {
    const l = log('Traceback (most recent call last):', ...frames, 'RuntimeError: CUDA error: out of memory');
    const phase = oomPhase(l, l.lineCount - 1);
    expect(phase).toBe('context');
    expect(whoHoldsMemory(incidentOf({ figures: { runtimeOom: true }, phase: { oomPhase: phase } }))?.holder).toBe('other_processes');
  });
  it("PyTorch's allocator OOM in a forward pass is not a context", () => {
    const l = log('  File "model.py", line 8, in forward', '    x = self.fc(x)', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.');
    expect(oomPhase(l, l.lineCount - 1)).not.toBe('context');
  });
});
