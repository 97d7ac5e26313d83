// The time axis of a chart names each tick once (issue 25, charts): a window of a few minutes has ticks
// every 10-30 s, which read "14:00" three times when labelled in minutes. Read back from the SVG
// (ECharts' server-side renderer) for windows of one minute to a day, in two zones, across midnight.
import { describe, expect, it } from 'vitest';
import { renderChartSvg } from '../../src/watch/chart.js';

/** The time axis' labels: wall-clock times and dates, in the order drawn. */
function timeLabels(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]).filter((t) => /^\d\d:\d\d(:\d\d)?$|^[A-Z][a-z]{2} \d{1,2}$/.test(t));
}

function chartOf(fromIso: string, minutes: number, stepS: number, timeZone: string): string {
  const t0 = Date.parse(fromIso);
  const points: [number, number][] = [];
  for (let s = 0; s <= minutes * 60; s += stepS) points.push([t0 + s * 1000, 20_000 + s / 10]);
  return renderChartSvg({ title: 'gpu01 · GPU 0', timeZone, processes: [{ name: 'alice · pid 4242', points }] });
}

describe('time labels of a chart', () => {
  for (const [minutes, stepS] of [
    [1, 1],
    [2, 5],
    [3, 5],
    [7, 5],
    [12, 10],
    [45, 30],
    [180, 60],
    [24 * 60, 60],
  ] as const)
    for (const timeZone of ['UTC', 'Asia/Kolkata'])
      it(`names every tick once over ${minutes} min (${timeZone})`, () => {
        const labels = timeLabels(chartOf('2026-11-20T14:00:07Z', minutes, stepS, timeZone));
        expect(labels.length).toBeGreaterThanOrEqual(2);
        expect(new Set(labels).size).toBe(labels.length);
      });

  it('shows seconds only between minutes, and the date at midnight', () => {
    const labels = timeLabels(chartOf('2026-11-20T23:59:07Z', 2, 5, 'UTC'));
    expect(labels).toContain('Nov 21');
    expect(labels.some((l) => /^\d\d:\d\d:\d\d$/.test(l))).toBe(true);
    expect(labels.filter((l) => l.endsWith(':00') && l.length === 8)).toEqual([]);
  });
});
