// RSS (resident set size, as ps, top and psutil name a process's memory) is host memory: a report that a process's RSS
// climbs is host RAM growth (knowledge/host-ram-growth-reported), not a CUDA OOM, even when it calls the kill "an OOM
// error". Real thread (blind9 read split) beside synthetic variants written from the term (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('real thread (blind9 read split)', () => {
  it('5708: RSS climbing with every slide predicted until the job limit: host RAM growth, no batch first', async () => {
    const d = await firstOfCase('blind9', '5708');
    expect(d?.rule).toBe('host-ram-growth-reported');
    expect(d?.fixes[0]?.summary ?? '').not.toMatch(/halve|batch 1/i);
  });
});

describe('synthetic variants (from the term)', () => {
  it('"RSS memory keeps growing" with an OOM kill told', async () => {
    const d = await diagnosePaste('The RSS memory keeps growing every epoch until the job gets an OOM error and is killed.');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.rule).toBe('host-ram-growth-reported');
  });
  it('"RSS increases" in a measurement sentence', async () => {
    const d = await diagnosePaste('During inference the RSS of the python process increases by ~600 MB per file.');
    expect(d?.rule).toBe('host-ram-growth-reported');
  });
  it('control: GPU memory growth is not host RAM', async () => {
    const d = await diagnosePaste('GPU memory increases every epoch until CUDA out of memory.');
    expect(d?.rule).not.toBe('host-ram-growth-reported');
  });
});
