// Utilisation as a second series on the per-GPU chart (`/gpu chart HOST GPU`, issue 25 §2): the sampler's
// utilization.gpu, stored with each GPU row in the leak watch's SQLite store and read back, is drawn as a line
// on an axis of its own (0-100 %, right) beside memory. Read from the SVG the chart child rasterises (the
// same spec and drawing code), and from the spec's data model. A GPU that reports no utilisation (MIG,
// [N/A]) gets no second axis.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { anyChartSvg, anySpecProblem } from '../../src/watch/chart-draw.js';
import type { MemoryChartSpec } from '../../src/watch/chart.js';
import { gpuChartPlan } from '../../src/watch/chart-store.js';
import type { Sample } from '../../src/watch/types.js';

const MIN = 60_000;
const NOW = Date.parse('2026-11-20T12:00:00Z');

/** Two hours of polls each minute: GPU 0 busy (utilisation rising 10 % -> 90 %), GPU 1 under MIG (utilisation [N/A]). */
function polls(): Sample[] {
  const out: Sample[] = [];
  for (let m = 0; m <= 120; m++) {
    const ts = NOW - (120 - m) * MIN;
    const util = 10 + Math.round((80 * m) / 120);
    out.push({ ts, host: 'gpu01', gpu: 0, gpuTotalMiB: 81_559, gpuUsedMiB: 30_000, utilizationPct: util });
    out.push({
      ts,
      host: 'gpu01',
      gpu: 0,
      gpuTotalMiB: 81_559,
      gpuUsedMiB: 30_000,
      utilizationPct: util,
      pid: 4242,
      processStart: NOW - 86_400_000,
      user: 'alice',
      command: 'python train.py',
      processMiB: 29_500,
    });
    out.push({ ts, host: 'gpu01', gpu: 1, gpuTotalMiB: 143_771, gpuUsedMiB: 16_959, utilizationPct: null });
  }
  return out;
}

const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);

describe('utilisation on the per-GPU chart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-chart-util-'));
  let store: WatchStore;
  const plan = (gpu: number) => {
    const p = gpuChartPlan(store, { host: 'gpu01', gpu, hours: 2 }, { timeZone: 'UTC', sampleIntervalSec: 60 }, {}, ['gpu01'], NOW);
    return p.chart!.spec as MemoryChartSpec;
  };

  beforeAll(() => {
    store = WatchStore.inDataDir(join(dir, 'data'));
    store.insert(polls());
  });
  afterAll(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('draws the stored utilisation as a series on a 0-100 % axis of its own', () => {
    const spec = plan(0);
    // Every poll read back from the store, in order, as stored.
    const util = spec.utilization!.points;
    expect(util).toHaveLength(121);
    expect(util[0]).toEqual([NOW - 120 * MIN, 10]);
    expect(util.at(-1)).toEqual([NOW, 90]);
    expect(anySpecProblem(spec)).toBeNull();
    const svg = anyChartSvg(spec);
    const all = texts(svg);
    expect(all).toContain('GPU 0 utilisation (right axis)');
    expect(all).toContain('util (%)');
    expect(all.filter((t) => /^(0|25|50|75|100)%$/.test(t))).toEqual(['0%', '25%', '50%', '75%', '100%']);
    // The series itself: a path in the utilisation colour with a vertex per poll (undashed: dashes are the fit's).
    const paths = [...svg.matchAll(/<path d="([^"]+)"[^>]*stroke="#0b7285"[^>]*>/g)].filter((m) => !m[0].includes('stroke-dasharray')).map((m) => m[1]);
    expect(paths.length).toBe(1);
    expect(paths[0].match(/[ML]/g)!.length).toBe(121);
    // Memory keeps its own axis on the left.
    expect(all).toContain('memory (GiB)');
  });

  it('a GPU without utilisation readings (MIG) has no second axis and no utilisation series', () => {
    const spec = plan(1);
    expect(spec.utilization!.points.every(([, v]) => v === null)).toBe(true);
    const all = texts(anyChartSvg(spec));
    expect(all).not.toContain('util (%)');
    expect(all).not.toContain('GPU 1 utilisation (right axis)');
  });

  it('refuses a utilisation outside 0-100 % before it is drawn', () => {
    const spec = plan(0);
    expect(anySpecProblem({ ...spec, utilization: { name: 'u', points: [[NOW, 250]] } })).toBe('the utilisation is out of range');
    expect(anySpecProblem({ ...spec, utilization: { name: 'u', points: Array.from({ length: 5000 }, (_, i) => [NOW - i, 1] as const) } })).toMatch(
      /utilisation has 5000 points/,
    );
  });
});
