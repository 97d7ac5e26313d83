// PyTorch's cudaMallocAsync backend (CUDAMallocAsyncAllocator.cpp; ComfyUI's default) fails with its own form:
// "Allocation on device N would exceed allowed memory. (out of memory)" then "Currently allocated : <pytorch_used_bytes>",
// "Requested", "Device limit", "Free (according to CUDA)". That backend keeps no cache of its own, so "Currently
// allocated" is this process's PyTorch memory: most of the card there is this process's, not a card "full before the
// job began" (holder.ts read a tiny request with nothing free and no figure of its own as another process). And when
// this process's memory plus its request exceed the card, freeing others cannot make room: they are not the holder.
// Real threads (blind8 read split) beside synthetic variants written from the format string (said so).
import { describe, expect, it } from 'vitest';
import { allowedMemoryMessage } from './allowed-memory-message.js';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const form = (allocated: string, requested: string, limit: string, free: string, pad = true, prefix = 'torch.OutOfMemoryError: ') =>
  allowedMemoryMessage({ allocated, requested, limit, free, pad, prefix });

describe('real threads (blind8)', () => {
  it('5663: 15.16 of 15.99 GiB allocated, a 512 KiB request: this process holds the card, no other process is named', async () => {
    const d = await firstOfCase('blind8', '5663');
    expect(d?.facts.asyncUsedMiB).toBeCloseTo(15.16 * 1024, 0);
    expect(d?.facts.holder).not.toBe('other_processes');
    expect(first(d)).not.toMatch(/Another process/);
  });
  it('5664: 8.28 GiB held and 8.01 GiB asked on 15.70 GiB: the one-tensor lever, not another process', async () => {
    const d = await firstOfCase('blind8', '5664');
    expect(d?.facts.holder).not.toBe('other_processes');
    expect(first(d)).toMatch(/^The failed request alone is 8\.01 GiB/);
  });
});

describe('the form (synthetic variants from the format string)', () => {
  it.each([
    ['padded', true, 'torch.OutOfMemoryError: '],
    ['collapsed', false, ''],
    ['with a rank prefix', true, '[rank0]: torch.OutOfMemoryError: '],
  ])('%s: most of the card allocated and a tiny request is this process, not another', async (_n, pad, prefix) => {
    const d = await diagnosePaste(form('22.90 GiB', '2.00 MiB', '23.64 GiB', '0 bytes', pad, prefix));
    expect(d?.facts.asyncUsedMiB).toBeCloseTo(22.9 * 1024, 0);
    expect(d?.facts.holder).toBe('activations');
    expect(first(d)).not.toMatch(/Another process/);
  });
  it('nothing allocated by this process and nothing free: the card was full before it began (another process)', async () => {
    const d = await diagnosePaste(form('0 bytes', '512.00 KiB', '23.64 GiB', '0 bytes'));
    expect(d?.facts.holder).toBe('other_processes');
  });
  it('a small lower bound (under half the card) is not read as all this process holds: others may hold the rest', async () => {
    const d = await diagnosePaste(form('3.00 GiB', '1.00 GiB', '23.64 GiB', '200.00 MiB'));
    expect(d?.facts.asyncUsedMiB).toBe(3 * 1024);
    expect(String(d?.facts.holderWhy)).not.toMatch(/this process holds 3\.00 GiB/);
  });
  it('held plus asked over the card: freeing others cannot make room, so they are not named first', async () => {
    const d = await diagnosePaste(form('14.50 GiB', '10.00 GiB', '23.64 GiB', '100.00 MiB'));
    expect(d?.facts.holder).not.toBe('other_processes');
  });
});
