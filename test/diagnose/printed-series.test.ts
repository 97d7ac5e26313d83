// Principle (issue 23): a memory series is evidence wherever the paste has one, not only in a tool's own
// column. A user's print in the training loop repeats the same line with a memory figure in it; three or more
// readings of one line make a series, whose shape decides: a climb is something kept across steps (the leak
// fix, never "halve the batch"), a flat or single reading is not. Synthetic variants of such prints (MB, GB,
// bytes from torch.cuda.memory_allocated(), Chinese), read directly and through `gpu-doctor diagnose --json`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseFile } from './corpus-case.js';
import { classifyShape, extractMemorySeries } from '../../src/diagnose/memory-series.js';

const dir = mkdtempSync(join(tmpdir(), 'printed-series-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const OOM =
  'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.81 GiB already allocated; 11.44 MiB free; 9.95 GiB reserved in total by PyTorch)';
const steps = (values: number[], line: (v: number, i: number) => string) => values.map((v, i) => line(v, i)).join('\n');

const RISING: [string, string, number[]][] = [
  [
    'MB per step',
    steps([3120.5, 4388.1, 5651.7, 6902.3, 8150.9], (v, i) => `epoch 0 step ${(i + 1) * 100} | loss 2.${31 - i} | allocated ${v} MB`),
    [3121, 4388, 5652, 6902, 8151],
  ],
  ['GB in a sentence', steps([2.1, 3.9, 5.6, 7.4], (v, i) => `iter ${i * 500}: GPU memory ${v} GB`), [2150, 3994, 5734, 7578]],
  [
    'bytes from memory_allocated()',
    steps([318986240, 640000000, 960000000, 1290000000], (v, i) => `Iter ${i} torch.cuda.memory_allocated(0) ${v}`),
    [304, 610, 916, 1230],
  ],
  ['显存 in Chinese', steps([5.2, 6.8, 8.1], (v, i) => `第${i + 1}轮 显存占用: ${v}G`), [5325, 6963, 8294]],
];

describe('a series the user printed (memory-series.ts printedSeries)', () => {
  it.each(RISING)('%s: read in order, in MiB, and a climb', (_name, text, mib) => {
    const series = extractMemorySeries(text);
    expect(series.map((p) => p.mib)).toEqual(mib);
    expect(classifyShape(series)?.shape).toBe('growth');
  });

  it.each([
    ['two readings are a comparison, not a series', steps([3000, 5000], (v, i) => `step ${i} allocated ${v} MB`)],
    ['the OOM message is not a reading', [OOM, OOM, OOM].join('\n')],
    [
      'readings of different lines do not join',
      ['allocated 3000 MB after setup', 'peak memory 5000 MB in the forward', 'reserved 7000 MB at the end'].join('\n'),
    ],
  ])('%s', (_name, text) => {
    expect(extractMemorySeries(text)).toEqual([]);
  });

  it('a tool column, when present, is read first', () => {
    const yolo = ['      0/299      4.11G      0.05', '      1/299      4.13G      0.04', '      2/299      4.12G      0.04'].join('\n');
    const text = `${yolo}\n${RISING[0][1]}`;
    expect(extractMemorySeries(text).map((p) => p.mib)).toEqual([4209, 4229, 4219]);
  });
});

describe('through the CLI: a printed climb before the OOM is a leak, not a batch', () => {
  it.each(RISING.slice(0, 2))('%s then an OOM: growth first, the leak fix first, no batch change', async (_name, text) => {
    const file = join(dir, `case-${n++}.log`);
    writeFileSync(file, `${text}\n${OOM}\n`);
    const d = await diagnoseFile(file);
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/\.item\(\)|detach/);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });

  it('the same print, flat, then an OOM: no leak diagnosis', async () => {
    const file = join(dir, `case-${n++}.log`);
    writeFileSync(file, `${steps([8150, 8151, 8150, 8152], (v, i) => `step ${i * 100} allocated ${v} MB`)}\n${OOM}\n`);
    const d = await diagnoseFile(file);
    expect(d?.category).toBe('cuda_oom');
  });
});
