// DeepSpeed's own memory reports read as a series (issue 23, F, from deepspeed's source): the step timer's
// "MemAllocated=…GB" (utils/timer.py, one line per step; "SamplesPerSec=" before 0.6, "CurrSamplesPerSec=" since) and
// see_memory_usage's "MA … GB   Max_MA … GB   CA … GB   Max_CA … GB" (runtime/utils.py; forks print MB/KB/B) under one
// message. A climb from step to step is growth (find what is kept), not a batch to halve; reports at different points
// of one step (before forward / backward / step) are no series. Synthetic variants written from the format strings (said so).
import { describe, expect, it } from 'vitest';
import { deepspeedSeries } from '../../src/diagnose/deepspeed-series.js';
import { diagnosePaste } from './corpus-case.js';

const OOM = 'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 812.00 MiB is free.';
const timer = (gb: number[], old = false) =>
  gb
    .map(
      (g, i) =>
        `[2024-01-01 10:0${i}:00,000] [INFO] [timer.py:207:stop] 0/${(i + 1) * 100}, ${old ? '' : 'RunningAvgSamplesPerSec=3.06, Curr'}SamplesPerSec=2.2, MemAllocated=${g}GB, MaxMemAllocated=${g + 3}GB`,
    )
    .join('\n');
const ma = (label: (i: number) => string, gb: number[], unit = 'GB', prefix = '') =>
  gb
    .map(
      (g, i) =>
        `${prefix}[2024-01-01 10:00:0${i},000] [INFO] [utils.py:791:see_memory_usage] ${label(i)}\n${prefix}[2024-01-01 10:00:0${i},001] [INFO] [utils.py:792:see_memory_usage] MA ${g} ${unit}         Max_MA ${g + 1} ${unit}         CA ${g + 2} ${unit}         Max_CA ${g + 2} ${unit} `,
    )
    .join('\n');

describe("DeepSpeed's memory reports as a series", () => {
  it.each([
    ['the step timer (CurrSamplesPerSec)', timer([10.2, 12.9, 15.7, 18.4])],
    ['the step timer before 0.6 (SamplesPerSec)', timer([10.2, 12.9, 15.7, 18.4], true)],
    ['see_memory_usage after each step', ma((i) => `after step ${(i + 1) * 100}`, [10.52, 13.75, 17.01, 20.3])],
    ['see_memory_usage in MB behind a [rank0]: prefix', ma(() => 'Engine after step', [10240, 13300, 16800, 20100], 'MB', '[rank0]: ')],
  ])('synthetic: %s climbing to the OOM is growth', async (_, lines) => {
    const d = await diagnosePaste(`${lines}\n${OOM}`);
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0]?.summary).toMatch(/memory_summary|_record_memory_history|memory_allocated/);
  });
  it('synthetic control: one step reported before forward, backward and step is no series', () => {
    const oneStep = ma((i) => ['Engine before forward', 'Engine before backward', 'Engine before step'][i], [4.89, 12.19, 18.19]);
    expect(deepspeedSeries(oneStep)).toEqual([]);
  });
  it('synthetic control: a flat timer series with the OOM is no growth', async () => {
    expect((await diagnosePaste(`${timer([18.4, 18.4, 18.41, 18.4])}\n${OOM}`))?.category).not.toBe('growing_memory_leak');
  });
  it('synthetic: rank 1 reports are left out (rank 0 is the series)', () => {
    const r = ma(() => 'after step', [1, 2, 3], 'GB', '[rank1]: ') + '\n' + ma(() => 'after step', [5, 5.1, 5.2]);
    expect(deepspeedSeries(r).map((p) => p.mib)).toEqual([5120, 5222, 5325]);
  });
});
