// Growth + OOM (issue 23): a paste with a memory series and a CUDA OOM is answered by the evidence. A
// per-step series in a tool's own memory column (YOLO GPU_mem, mmengine memory:, torchvision's MetricLogger
// max mem:, Megatron's memory report) that climbs to the card: the leak and its lever first. A series that
// stays far below the card, a flat one, or an OOM with only prose about growth: the OOM's own answer first.
// Synthetic variants written from the principle (test/fixtures/phase-levers/growth/README.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { diagnose } from '../../src/diagnose/diagnose.js';
import { growthReachesCard, orderGrowthAndOom } from '../../src/diagnose/growth-oom.js';
import { incidentOf, newIncident } from '../../src/diagnose/incident/index.js';

const base = await loadRuleBase();
const run = (name: string) => diagnose(readFileSync(new URL(`../fixtures/phase-levers/growth/${name}`, import.meta.url), 'utf8'), base).diagnoses;

describe('a growth series that reaches the card, with an OOM: the leak first', () => {
  it.each(['yolo-gpu-mem-growth-oom.log', 'mmengine-growth-oom.log', 'metric-logger-growth-oom.log', 'megatron-growth-oom.log'])('%s', (name) => {
    const [first, ...rest] = run(name);
    expect(first.category).toBe('growing_memory_leak');
    // What is kept: released where the paste shows it, else the measurement that finds it (growth-series-forms.test.ts).
    const fix = first.fixes[0];
    expect(['release_graph_references', 'empty_cache_after_validation'].includes(fix.kind) || /memory_summary|_record_memory_history/.test(fix.summary)).toBe(
      true,
    );
    expect(first.fixes[0].kind).not.toBe('reduce_batch');
    // The OOM is still reported, after it.
    expect(rest.some((d) => d.category === 'cuda_oom')).toBe(true);
  });
});

describe('no series that reaches the card: the OOM answers first, never the leak', () => {
  it('a single OOM with only prose about growing memory', () => {
    const ds = run('prose-only-oom.log');
    expect(ds[0].category).toBe('cuda_oom');
    expect(ds.some((d) => d.category === 'growing_memory_leak')).toBe(false);
  });
  it('a flat series up to the OOM is capacity', () => {
    const ds = run('metric-logger-flat-oom.log');
    expect(ds[0].category).toBe('cuda_oom');
    expect(ds.some((d) => d.category === 'growing_memory_leak')).toBe(false);
  });
  it('a series that grows far below the card did not fill it', () => {
    const ds = run('metric-logger-growth-short-of-card-oom.log');
    expect(ds[0].category).toBe('cuda_oom');
    expect(ds.findIndex((d) => d.category === 'growing_memory_leak')).not.toBe(0);
  });
});

describe('growthReachesCard / orderGrowthAndOom', () => {
  it('the last reading against the card; an unknown card leaves the series as the evidence', () => {
    expect(growthReachesCard([4000, 9000, 15000], 16384)).toBe(true);
    expect(growthReachesCard([2000, 2500, 3000], 81920)).toBe(false);
    expect(growthReachesCard([2000, 2500, 3000], undefined)).toBe(true);
    expect(growthReachesCard([], 16384)).toBe(false);
  });
  it('swaps only the leak and the OOM, the others keep their places', () => {
    const leak = { category: 'growing_memory_leak' as const, incident: incidentOf({ series: { memorySeriesMiB: [1000, 2000] } }) };
    const oom = { category: 'cuda_oom' as const, incident: incidentOf({ figures: { totalCapacityMiB: 81920 } }) };
    const other = { category: 'shm_exhausted' as const, incident: newIncident() };
    expect(orderGrowthAndOom([leak, other, oom])).toEqual([oom, other, leak]);
    expect(orderGrowthAndOom([oom, other, leak])).toEqual([oom, other, leak]);
    const near = { ...leak, incident: incidentOf({ series: { memorySeriesMiB: [40000, 80000] } }) };
    expect(orderGrowthAndOom([oom, near])).toEqual([near, oom]);
  });
});
