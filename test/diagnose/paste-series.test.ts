// A memory series inside a paste (issue 12 item 3): the log's own GPU_mem / memory: figures, read in
// order, tell a creep from a flat run, an up-and-down one or a single step, and where a creep rises
// (inside epochs: references kept across iterations; between them: what validation leaves behind).
// Real excerpts (test/fixtures/paste-series/README.md) through `gpu-doctor diagnose --json`.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';
import { classifyShape, extractMemorySeries } from '../../src/diagnose/memory-series.js';

const root = resolve(import.meta.dirname, '../..');

interface Diagnosis {
  rule: string;
  category: string;
  facts: Record<string, any>;
  fixes: { summary: string }[];
}
async function diagnoseFile(rel: string): Promise<Diagnosis[]> {
  const stdout = await diagnoseOutput(['--json', resolve(root, rel)]);
  return (JSON.parse(stdout) as { diagnoses: Diagnosis[] }).diagnoses;
}
const DIR = 'test/fixtures/paste-series';

describe('a memory series in the paste decides leak or not, and which leak fix comes first', () => {
  it('yolov7 #727: gpu_mem 4.11G -> 18.6 G inside epoch 0, then out of memory: a per-iteration creep, .item()/loss = None first', async () => {
    const [d] = await diagnoseFile(`${DIR}/yolov7-727-gpu-mem-within-epoch.log`);
    expect(d.category).toBe('growing_memory_leak');
    expect(d.facts.memorySeriesMiB).toEqual([4.11, 8.21, 15.1, 18.6].map((g) => Math.round(g * 1024)));
    expect(d.facts).toMatchObject({ memoryShape: 'growth', memoryGrowsAt: 'per_iteration' });
    expect(d.fixes[0].summary).toMatch(/loss\.item\(\)/);
  });

  it('a GPU_mem column rising from epoch to epoch (YOLOv5, seed 000): empty_cache after validation first, then a fresh validation loader', async () => {
    const [d] = await diagnoseFile('knowledge/growing-memory-leak/match/yolov5-epoch-gpu-mem.log');
    expect(d.facts).toMatchObject({ memoryShape: 'growth', memoryGrowsAt: 'between_epochs' });
    expect(d.fixes[0].summary).toMatch(/empty_cache\(\)/);
    expect(d.fixes[1].summary).toMatch(/validation DataLoader afresh/);
  });

  it.each(['mmdet-1956-memory-flat.log', 'mmdet-5096-memory-flat.log'])(
    '%s: memory: flat on every line, so the growth people see is host RAM, not a GPU leak',
    async (file) => {
      const [d, ...rest] = await diagnoseFile(`${DIR}/${file}`);
      expect(d.facts.memoryShape).toBe('flat');
      expect(d.rule).toBe('host-ram-growth-gpu-flat');
      expect([d, ...rest].map((x) => x.rule)).not.toContain('growing-memory-leak');
    },
  );

  it.each([
    ['ultralytics-1654-gpu-mem-per-epoch-up-and-down.log', [16.1, 19.8, 18]],
    ['ultralytics-18642-gpu-mem-one-step.log', [13.1, 13.1, 13.1, 13.1, 14.5]],
  ])('%s: up and down, or one step, is no creep: no leak diagnosis', async (file, gib) => {
    const diagnoses = await diagnoseFile(`${DIR}/${file}`);
    expect(diagnoses.map((x) => x.category)).not.toContain('growing_memory_leak');
    const { readFileSync } = await import('node:fs');
    const series = extractMemorySeries(readFileSync(resolve(root, DIR, file), 'utf8'));
    expect(series.map((p) => p.mib)).toEqual(gib.map((g) => Math.round(g * 1024)));
    expect(['growth', 'sawtooth_rising']).not.toContain(classifyShape(series)!.shape);
  });
});

describe('classifyShape on the figures a log prints', () => {
  const pts = (mib: number[], epochs?: number[]) => mib.map((m, i) => ({ mib: m, ...(epochs ? { epoch: epochs[i] } : {}) }));
  it('flat within the 0.1 GiB a YOLO column rounds to', () => {
    expect(classifyShape(pts([6814, 6814, 6850, 6814]))!.shape).toBe('flat');
  });
  it('peaks that return to a rising floor are saw-tooth on a rising level; to the same floor, plain saw-tooth', () => {
    expect(classifyShape(pts([4000, 6000, 4200, 6200, 4400, 6400, 4600]))!.shape).toBe('sawtooth_rising');
    expect(classifyShape(pts([4000, 6000, 4000, 6000, 4000, 6000, 4000]))!.shape).toBe('sawtooth');
  });
  it('rose early then level is warm-up, not a creep', () => {
    expect(classifyShape(pts([1000, 3000, 5000, 5000, 5000, 5000, 5000, 5000, 5000]))!.shape).toBe('warmup');
  });
  it('where a creep rises: between epochs when the lines inside each epoch stay level', () => {
    const v = classifyShape(pts([4000, 4000, 4000, 4500, 4500, 4500, 5000, 5000, 5000, 5500], [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]))!;
    expect(v).toMatchObject({ shape: 'growth', growsAt: 'between_epochs' });
    const w = classifyShape(pts([4000, 4200, 4400, 4600, 4800, 5000, 5200, 5400], [0, 0, 0, 0, 1, 1, 1, 1]))!;
    expect(w).toMatchObject({ shape: 'growth', growsAt: 'per_iteration' });
  });
  it('a hostile paste: an endless run of one line keeps the last 2000 points; a 1 MB line is not scanned', () => {
    expect(extractMemorySeries('  1/300   1.5G   0.1\n'.repeat(200_000)).length).toBe(2000);
    expect(extractMemorySeries(`  1/300   1.5G ${'9'.repeat(1 << 20)}\n`)).toEqual([]);
  });
});
