// The digest's PNG chart: a valid PNG of the requested size whose pixels show the series rising.
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { seriesChartPng } from '../../src/watch/chart.js';
import { digestReply } from '../../src/watch/digest.js';
import type { Finding } from '../../src/watch/types.js';

function decode(png: Buffer) {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const idat: Buffer[] = [];
  for (let off = 8; off < png.length; ) {
    const len = png.readUInt32BE(off);
    if (png.toString('ascii', off + 4, off + 8) === 'IDAT') idat.push(png.subarray(off + 8, off + 8 + len));
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const red = (x: number, y: number) => {
    const i = y * (width * 3 + 1) + 1 + x * 3;
    return raw[i] > 200 && raw[i + 1] < 80 && raw[i + 2] < 80;
  };
  return { width, height, red };
}

describe('series chart', () => {
  it('draws a rising series low on the left and high on the right', () => {
    const series = Array.from({ length: 48 }, (_, i) => 40000 + i * 50);
    const { width, height, red } = decode(seriesChartPng(series, { width: 200, height: 100 }));
    expect([width, height]).toEqual([200, 100]);
    const redRows = (x: number) => [...Array(height).keys()].filter((y) => red(x, y));
    expect(Math.min(...redRows(14))).toBeGreaterThan(Math.min(...redRows(185)));
  });

  it('a digest with a leak attaches the worst series as a PNG', () => {
    const f: Finding = { kind: 'leak', host: 'gpu1', gpu: 0, pid: 42, user: 'alice', command: 'python train.py', slopeMiBPerHour: 120, hoursToFull: 6, currentMiB: 40000, totalMiB: 81559, series: [39000, 39500, 40000], rule: 'growing-memory-leak', severity: 80 };
    const reply = digestReply([f], { hosts: 1, processes: 1 });
    expect(reply.files?.[0]).toMatchObject({ filename: 'gpu1-gpu0-42.png', contentType: 'image/png' });
    expect(decode(reply.files![0].data).width).toBe(480);
  });
});
