// Issue 23: a program that compares what it needs with what /dev/shm holds names /dev/shm as the memory that is short
// (Arrow Plasma's "System memory request exceeds memory available in /dev/shm", a store "size exceeds the capacity of
// /dev/shm"): the answer is /dev/shm (a container's --shm-size), not host RAM, even when "system memory" is in the line.
// Real log from blind7 (a read split; URL in its cases.json) and synthetic variants written from the principle (marked
// "synthetic"). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('A request compared with /dev/shm is /dev/shm short, not host RAM', () => {
  it('real blind7/3994: Plasma in docker, "System memory request exceeds memory available in /dev/shm", exit -7', async () => {
    const d = await firstOfCase('blind7', '3994');
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/--shm-size|--ipc=host/);
    // the writer is the store, not DataLoader workers: the reply names the store and offers no fewer workers
    expect(first(d)).toMatch(/store/);
    expect(first(d)).not.toMatch(/DataLoader workers/);
    expect(d?.fixes.some((f) => f.changes.workers !== undefined || /Lower the DataLoader workers/.test(f.summary))).toBe(false);
  });

  // synthetic: the comparison in a store's and an allocator's words, no container named
  it.each([
    [
      'plasma',
      'WARNING: System memory request exceeds memory available in /dev/shm. The request is for 4000000000 bytes, and the amount available is 67108864 bytes.',
    ],
    ['store size', 'Object store size 2.0 GB exceeds the size of /dev/shm (64.0 MB); lower it or enlarge /dev/shm'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/shm/);
    expect(first(d)).toMatch(/store/);
  });

  it("synthetic: the amount /dev/shm has is quoted from the store's own message", async () => {
    const d = await diagnosePaste(
      'System memory request exceeds memory available in /dev/shm. The request is for 8000000000 bytes, and the amount available is 67108864 bytes.',
    );
    expect(first(d)).toMatch(/67108864 bytes/);
  });

  // synthetic near miss: /dev/shm reported large, host RAM exhausted
  it('synthetic near miss: "/dev/shm is 32G" beside a host kill is not /dev/shm short', async () => {
    const d = await diagnosePaste(
      'df shows /dev/shm is 32G and mostly free\nOut of memory: Killed process 4121 (python) total-vm:98000000kB, anon-rss:63000000kB',
    );
    expect(d?.category).not.toBe('shm_exhausted');
  });
});
