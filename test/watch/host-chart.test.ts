// A host's chart with every GPU (src/watch/host-chart.ts, issue 25): one panel per GPU with memory used,
// capacity and utilisation on one time range, at most MAX_HOST_PANELS panels, and a spec that is out of
// bounds refused before resvg sees it (a panic there aborts the process that draws). Samples are written
// here in the sampler's own shape; the panels are read back from the SVG.
import { describe, expect, it } from 'vitest';
import { anyChartSvg, anySpecProblem, drawAnyChart } from '../../src/watch/chart-draw.js';
import { hostChartSize, hostPanels, hostSpecProblem, MAX_HOST_PANELS, type HostChartSpec } from '../../src/watch/host-chart.js';
import type { Sample } from '../../src/watch/types.js';

const MIN = 60_000;
const END = Date.parse('2026-11-20T12:00:00Z');

/** `gpus` GPUs of `host` polled every minute for `minutes`: GPU g holds (g+1) x 4 GiB at g x 10 % utilisation, with one process row each. */
function fleet(host: string, gpus: number, minutes: number): Sample[] {
  const out: Sample[] = [];
  for (let m = 0; m <= minutes; m++) {
    const ts = END - (minutes - m) * MIN;
    for (let g = 0; g < gpus; g++) {
      const used = (g + 1) * 4096;
      out.push({ ts, host, gpu: g, gpuTotalMiB: 81_559, gpuUsedMiB: used, utilizationPct: (g * 10) % 101 });
      out.push({
        ts,
        host,
        gpu: g,
        gpuTotalMiB: 81_559,
        gpuUsedMiB: used,
        utilizationPct: (g * 10) % 101,
        pid: 100 + g,
        processStart: END - 86_400_000,
        user: 'alice',
        command: 'python train.py',
        processMiB: used - 500,
      });
    }
    out.push({ ts, host: 'other', gpu: 0, gpuTotalMiB: 24_576, gpuUsedMiB: 1, utilizationPct: 1 });
  }
  return out;
}

const specOf = (host: string, gpus: number, minutes = 120): HostChartSpec => {
  const { panels } = hostPanels(fleet(host, gpus, minutes), host, END - minutes * MIN, END, {});
  return { kind: 'host', title: `${host} · every GPU`, timeZone: 'UTC', fromMs: END - minutes * MIN, toMs: END, panels };
};

const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);

describe('a host chart with every GPU', () => {
  it('has a panel per GPU of that host only, each poll once, with its reading now in the heading', () => {
    const spec = specOf('gpu01', 4);
    expect(spec.panels.map((p) => p.gpu)).toEqual([0, 1, 2, 3]);
    expect(spec.panels.every((p) => p.used.length === 121 && p.util.length === 121)).toBe(true);
    const all = texts(anyChartSvg(spec));
    expect(all).toContain('GPU 0 · 4.0 / 79.6 GiB · util 0%');
    expect(all).toContain('GPU 3 · 16.0 / 79.6 GiB · util 30%');
    // Memory on one scale for every panel (the capacity), utilisation 0-100 % on the right of each.
    expect(all.filter((t) => t === '100%')).toHaveLength(4);
    expect(all.filter((t) => /^\d+(\.\d)? GiB$/.test(t)).length).toBeGreaterThanOrEqual(8);
    expect(anySpecProblem(spec)).toBeNull();
  });

  it('lays out one column for one GPU, two up to eight, four beyond, and draws it', () => {
    expect(hostChartSize(specOf('h', 1)).width).toBe(800);
    expect(hostChartSize(specOf('h', 8))).toEqual({ width: 800, height: 764 });
    expect(hostChartSize(specOf('h', 12)).width).toBe(1200);
    const png = drawAnyChart(specOf('h', 8), 1).png;
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([800, 764]);
  });

  it(`draws at most ${MAX_HOST_PANELS} panels and names every GPU it saw`, () => {
    const { panels, gpus } = hostPanels(fleet('big', 20, 10), 'big', END - 10 * MIN, END, {});
    expect(panels.map((p) => p.gpu)).toEqual([...Array(MAX_HOST_PANELS).keys()]);
    expect(gpus).toEqual([...Array(20).keys()]);
  });

  it('reads a poll without utilisation as a gap, and a process row alone as no capacity', () => {
    const samples: Sample[] = [
      { ts: END - 2 * MIN, host: 'h', gpu: 0, gpuTotalMiB: 81_559, gpuUsedMiB: 1000, utilizationPct: null },
      { ts: END - MIN, host: 'h', gpu: 0, gpuTotalMiB: 81_559, gpuUsedMiB: 1200, utilizationPct: 50 },
      {
        ts: END - MIN,
        host: 'h',
        gpu: 1,
        gpuTotalMiB: 0,
        gpuUsedMiB: 0,
        utilizationPct: null,
        pid: 7,
        processStart: END,
        user: 'u',
        command: 'c',
        processMiB: 9,
      },
    ];
    const { panels } = hostPanels(samples, 'h', END - 10 * MIN, END, {});
    expect(panels[0].util.map((p) => p[1])).toEqual([null, 50]);
    expect(panels[1]).toMatchObject({ gpu: 1, capacityMiB: null, used: [] });
  });

  it('refuses hostile or corrupt specs before they are drawn', () => {
    const good = specOf('h', 2, 10);
    const bad: [string, HostChartSpec][] = [
      ['no panels', { ...good, panels: [] }],
      ['too many panels', { ...good, panels: Array.from({ length: MAX_HOST_PANELS + 1 }, () => good.panels[0]) }],
      ['a NaN value', { ...good, panels: [{ ...good.panels[0], used: [[END, NaN]] }] }],
      ['an absurd value', { ...good, panels: [{ ...good.panels[0], used: [[END, 1e300]] }] }],
      ['utilisation over 100', { ...good, panels: [{ ...good.panels[0], util: [[END, 250]] }] }],
      ['a time out of range', { ...good, panels: [{ ...good.panels[0], used: [[-1, 5]] }] }],
      ['a window ending before it starts', { ...good, toMs: good.fromMs - 1 }],
      ['a huge title', { ...good, title: 'x'.repeat(10_000) }],
      ['a GPU index out of range', { ...good, panels: [{ ...good.panels[0], gpu: 1e9 }] }],
      ['too many points', { ...good, panels: [{ ...good.panels[0], used: Array.from({ length: 5000 }, (_, i) => [END - i, 1] as const) }] }],
    ];
    for (const [what, spec] of bad) expect(hostSpecProblem(spec), what).not.toBeNull();
    expect(hostSpecProblem(good)).toBeNull();
  });
});
