// The charts' content read back from their SVG (ECharts' server-side renderer) and their PNG (resvg):
// title, axes with units, one legend entry per process, capacity, the dashed fit and forecast, the
// shaded window, times in the chart's zone, every sample of a saw-tooth drawn. The series are the
// project's labelled traces (test/watch/traces/generated.jsonl, written by test/watch/generate-traces.ts
// from seeded models of PyTorch's caching allocator: no recorded GPU series exist in the repo).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { chartSize, renderChart, renderChartSvg, type MemoryChartSpec } from '../../src/watch/chart.js';
import { chartPoints, findingChartSpec, gpuChartSpec, gpuSeries, type GpuSeries } from '../../src/watch/chart-data.js';
import { detectLeaks } from '../../src/watch/detector.js';
import { digestReply } from '../../src/watch/digest.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import type { Reply } from '../../src/core/reply.js';
import { TRACES_PATH } from './generate-traces.js';
import { decodeTrace, type LabelledTrace } from './generator.js';
import { isProcessSample, type Finding } from '../../src/watch/types.js';
import { tempWatchStore } from '../storage/sqlite-stores.js';

let traces: LabelledTrace[];
beforeAll(() => {
  traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);
});

function traceFinding(id: string): { finding: Finding; data: GpuSeries; trace: LabelledTrace } {
  const trace = traces.find((t) => t.id === id)!;
  const finding = detectLeaks(trace.samples).find((f) => f.kind === 'leak')!;
  expect(finding, `${id} has a leak finding`).toBeDefined();
  return { finding, data: gpuSeries(trace.samples, finding.host, finding.gpu!)!, trace };
}

/** Every <text> element's content with its font size and position. */
function texts(svg: string): { text: string; size: number; x: number; y: number }[] {
  return [...svg.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)].map((m) => {
    const size = Number(/font-size:(\d+(?:\.\d+)?)px|(\d+(?:\.\d+)?)px DejaVu/.exec(m[1])?.slice(1).find(Boolean));
    const t = /translate\(([-\d.]+) ([-\d.]+)\)/.exec(m[1]);
    return { text: m[2].replace(/&amp;/g, '&').replace(/&#39;/g, "'"), size, x: Number(t?.[1]), y: Number(t?.[2]) };
  });
}
const paths = (svg: string) => [...svg.matchAll(/<path ([^>]*)>/g)].map((m) => ({ attrs: m[1], d: /\bd="([^"]*)"/.exec(m[1])?.[1] ?? '' }));
const vertices = (d: string) => [...d.matchAll(/[ML]([-\d.]+) ([-\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);

function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  expect(png.toString('ascii', 12, 16)).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('a digest chart of a steady creep on a shared GPU (trace creep-shared-gpu)', () => {
  let svg: string;
  let spec: MemoryChartSpec;
  beforeAll(() => {
    const { finding, data } = traceFinding('creep-shared-gpu');
    spec = findingChartSpec(finding, data, { timeZone: 'Europe/Berlin' });
    svg = renderChartSvg(spec);
  });

  it('titles the host, GPU, process and what grew, with the forecast in the subtitle', () => {
    const all = texts(svg).map((t) => t.text);
    expect(all).toContainEqual(expect.stringMatching(/^gpu-creep-shared-gpu · GPU 0 · alice pid 4242: memory creep \+\d+(\.\d)? MiB\/h$/));
    expect(all).toContainEqual(expect.stringMatching(/^full in [\d.]+ d \(Dec \d+ \d\d:\d\d CET\) · steady creep$/));
  });

  it('names both axes with units and labels the memory ticks in GiB', () => {
    const all = texts(svg).map((t) => t.text);
    expect(all).toContain('memory (GiB)');
    expect(all).toContain('time (Europe/Berlin, CET)');
    expect(all).toEqual(expect.arrayContaining(['0 GiB', '40 GiB', '80 GiB']));
  });

  it('has a legend entry per process (user and pid), the total, the capacity and the fit', () => {
    const legend = texts(svg)
      .filter((t) => t.y === Math.max(...texts(svg).map((u) => u.y)) || /pid|used|capacity|fitted/.test(t.text))
      .map((t) => t.text);
    expect(legend).toEqual(expect.arrayContaining(['alice · pid 4242', 'bob · pid 6100', 'GPU 0 used (all processes)', 'GPU 0 capacity 79.6 GiB']));
    expect(legend).toContainEqual(expect.stringMatching(/^fitted creep \+[\d.]+ MiB\/h → full Dec \d+ \d\d:\d\d CET$/));
  });

  it('draws the capacity as a horizontal line at the 79.6 GiB level of the memory axis', () => {
    const capacity = paths(svg).find((p) => p.attrs.includes('stroke="#d7263d"') && p.d.includes('L'))!;
    const [[x0, y0], [x1, y1]] = vertices(capacity.d);
    expect(y0).toBe(y1);
    expect(x1 - x0).toBeGreaterThan(600); // across the plot
    const tick = (label: string) => texts(svg).find((t) => t.text === label)!.y;
    const expected = tick('0 GiB') + ((tick('80 GiB') - tick('0 GiB')) * 79.6) / 80;
    expect(Math.abs(y0 - expected)).toBeLessThan(1.5);
  });

  it('draws the fit dashed, rising, and running past the last sample (the forecast)', () => {
    const dashed = paths(svg).filter((p) => p.attrs.includes('stroke-dasharray'));
    expect(dashed.length).toBeGreaterThanOrEqual(1);
    const [[fx0, fy0], [fx1, fy1]] = vertices(dashed[0].d);
    expect(fy1).toBeLessThan(fy0); // higher on screen = more memory
    const lastSampleX = Math.max(...vertices(paths(svg).find((p) => p.attrs.includes('stroke="#1f77b4"'))!.d).map((v) => v[0]));
    expect(fx1).toBeGreaterThan(lastSampleX + 50);
    expect(fx0).toBeLessThan(lastSampleX);
  });

  it('shades the window the finding is based on: from the fit start to the last sample, labelled with its onset', () => {
    const bands = [...svg.matchAll(/<polygon points="([^"]*)" fill="rgb\(250,176,5\)" fill-opacity="0.16"/g)].map((m) => m[1].split(' ').map(Number));
    expect(bands.length).toBeGreaterThanOrEqual(1);
    const xs = bands[0].filter((_, i) => i % 2 === 0);
    const fitStart = vertices(paths(svg).find((p) => p.attrs.includes('stroke-dasharray'))!.d)[0][0];
    const lastSampleX = Math.max(...vertices(paths(svg).find((p) => p.attrs.includes('stroke="#1f77b4"'))!.d).map((v) => v[0]));
    expect(Math.abs(Math.min(...xs) - fitStart)).toBeLessThan(1.5);
    expect(Math.abs(Math.max(...xs) - lastSampleX)).toBeLessThan(1.5);
    expect(texts(svg).map((t) => t.text)).toContainEqual(expect.stringMatching(/^growth since \d\d:\d\d CET$/));
  });

  it('adds a zoomed panel of the grown process when the creep is too small to see at capacity scale', () => {
    expect(texts(svg).map((t) => t.text)).toContain('alice · pid 4242, zoomed (GiB)');
    expect(chartSize(spec)).toEqual({ width: 800, height: 520 });
  });

  it('uses no text under 12 px', () => {
    const sizes = texts(svg).map((t) => t.size);
    expect(sizes.every((s) => Number.isFinite(s))).toBe(true);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(12);
  });

  it('renders a PNG at twice the CSS size, light and dark', () => {
    const light = renderChart(spec);
    expect(pngSize(light.png)).toEqual({ width: 1600, height: 1040 });
    const dark = renderChart({ ...spec, theme: 'dark' });
    expect(pngSize(dark.png)).toEqual({ width: 1600, height: 1040 });
    expect(dark.svg).toContain('fill="#181b1f"');
    expect(light.svg).toContain('fill="#ffffff"');
    expect(dark.png.equals(light.png)).toBe(false);
  });
});

describe('a digest chart of a creep under a validation saw-tooth (trace creep-50-seg20-sawtooth)', () => {
  it('draws the process unsmoothed and undecimated, so each validation peak in the samples is a peak on screen', () => {
    const { finding, data } = traceFinding('creep-50-seg20-sawtooth');
    expect(finding.pattern).toBe('despite_empty_cache');
    const svg = renderChartSvg(findingChartSpec(finding, data, { timeZone: 'UTC' }));
    const line = paths(svg).find((p) => p.attrs.includes('stroke="#1f77b4"'))!;
    expect(line.d).not.toMatch(/[CQ]/); // straight segments only
    // zrender drops only sub-pixel moves; a peak several pixels high always stays.
    const drawn = vertices(line.d);
    const samples = data.processes[0].points.filter((p) => p[1] !== null);
    expect(samples.length).toBeLessThanOrEqual(1600); // under the decimation threshold: every sample is passed on
    // Peaks: runs above the midpoint between the median and the maximum, in the data and on screen.
    const runs = (v: number[]) => {
      const sorted = [...v].sort((a, b) => a - b);
      const mid = (sorted[sorted.length >> 1] + sorted[sorted.length - 1]) / 2;
      return v.filter((x, i) => x > mid && !(v[i - 1] > mid)).length;
    };
    const peaks = runs(samples.map((p) => p[1]!));
    expect(peaks).toBeGreaterThanOrEqual(20); // hourly validation over ~24 h
    expect(runs(drawn.map((p) => -p[1]))).toBe(peaks);
  });
});

describe('time axis', () => {
  const spec = (timeZone: string): MemoryChartSpec => ({
    title: 't',
    timeZone,
    processes: [
      {
        name: 'alice · pid 1',
        points: [
          [Date.parse('2026-11-20T08:00:00Z'), 1000],
          [Date.parse('2026-11-20T11:00:00Z'), 1200],
        ],
      },
    ],
  });
  const timeLabels = (svg: string) => texts(svg).filter((t) => /^\d\d:\d\d$/.test(t.text));

  it('labels the ticks with the wall clock of the given zone, at the same instants', () => {
    const utc = timeLabels(renderChartSvg(spec('UTC')));
    const tokyo = timeLabels(renderChartSvg(spec('Asia/Tokyo')));
    expect(utc.length).toBeGreaterThanOrEqual(3);
    expect(tokyo.map((t) => t.x)).toEqual(utc.map((t) => t.x));
    const plus9 = (hhmm: string) => `${String((Number(hhmm.slice(0, 2)) + 9) % 24).padStart(2, '0')}${hhmm.slice(2)}`;
    expect(tokyo.map((t) => t.text)).toEqual(utc.map((t) => plus9(t.text)));
    expect(utc.map((t) => t.text)).toContain('09:00');
    expect(texts(renderChartSvg(spec('Asia/Tokyo'))).map((t) => t.text)).toContain('time (Asia/Tokyo, GMT+9)');
  });
});

describe('chart points', () => {
  it('breaks a line where samples stop for longer than the gap (unknown, not zero)', () => {
    const pts = chartPoints(
      [
        [0, 1],
        [60_000, 2],
        [900_000, 3],
      ],
      180_000,
    );
    expect(pts).toEqual([
      [0, 1],
      [60_000, 2],
      [480_000, null],
      [900_000, 3],
    ]);
  });

  it("keeps every bucket's lowest and highest sample when a long series is decimated", () => {
    const saw: [number, number][] = Array.from({ length: 10_000 }, (_, i) => [i * 60_000, i % 60 === 30 ? 9000 : i % 60 === 31 ? 500 : 5000]);
    const pts = chartPoints(saw, 180_000, 1600);
    expect(pts.length).toBeLessThanOrEqual(1600);
    expect(pts.filter((p) => p[1] === 9000).length).toBe(saw.filter((p) => p[1] === 9000).length);
    expect(pts.filter((p) => p[1] === 500).length).toBe(saw.filter((p) => p[1] === 500).length);
  });
});

describe('/gpu chart without a finding', () => {
  it('draws the processes and capacity of a flat GPU and says no creep was found', () => {
    const trace = traces.find((t) => t.id === 'shared-gpu-flat')!;
    const host = trace.samples.find(isProcessSample)!.host;
    const data = gpuSeries(trace.samples, host, 0)!;
    const spec = gpuChartSpec(data, { timeZone: 'UTC', hours: 6 });
    expect(spec.fit).toBeUndefined();
    const svg = renderChartSvg(spec);
    const all = texts(svg).map((t) => t.text);
    expect(all).toContain(`${host} · GPU 0: memory over the last 6 h`);
    expect(all.filter((t) => /· pid \d+$/.test(t))).toHaveLength(2);
    expect(svg).not.toContain('stroke-dasharray');
  });
});

describe('digest', () => {
  it('attaches the chart its caller draws for the worst growing finding, and none without one', () => {
    const { finding } = traceFinding('creep-shared-gpu');
    const drawn: Finding[] = [];
    const reply = digestReply(
      [finding],
      { hosts: 1, processes: 2 },
      undefined,
      'Leak watch digest',
      (f) => (drawn.push(f), { filename: 'x.png', contentType: 'image/png', data: Buffer.from('png') }),
    );
    expect(drawn).toEqual([finding]);
    expect(reply.files).toEqual([{ filename: 'x.png', contentType: 'image/png', data: Buffer.from('png') }]);
    expect(digestReply([finding], { hosts: 1, processes: 2 }).files).toBeUndefined();
  });
});

describe('scheduled digest', () => {
  it('posts the chart of its worst finding, drawn from the store', async () => {
    const trace = traces.find((t) => t.id === 'creep-shared-gpu')!;
    const store = tempWatchStore();
    store.insert(trace.samples);
    const now = Math.max(...trace.samples.map((s) => (typeof s.ts === 'number' ? s.ts : Date.parse(s.ts)))) + 60_000;
    const digest = { name: 'daily', platform: 'console' as const, channel: 'c', cron: '0 9 * * *', timezone: 'Asia/Tokyo' };
    const runtime = new WatchRuntime(store, undefined, undefined, { sample_interval_s: 60, retention_days: 7, min_slope_mib_per_hour: 10, digests: [digest] });
    const posted: Reply[] = [];
    runtime.setPoster(async (_d, reply) => void posted.push(reply));
    try {
      expect(await runtime.scheduler.run(digest, now)).toBe(true);
      const file = posted[0].files?.[0];
      expect(file).toMatchObject({ filename: 'gpu-creep-shared-gpu-gpu0-4242.png', contentType: 'image/png' });
      expect(pngSize(file!.data)).toEqual({ width: 1600, height: 1040 });
      expect(runtime.timeZoneFor('console', 'c')).toBe('Asia/Tokyo');
    } finally {
      runtime.stop();
    }
  });
});
