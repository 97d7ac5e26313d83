// A PNG line chart of one memory series, drawn in-process with no dependency: an RGB raster, a
// Bresenham polyline, and a minimal PNG encoder (zlib deflate + CRC32 from node:zlib).
import { crc32, deflateSync } from 'node:zlib';

type Rgb = readonly [number, number, number];
const GRID: Rgb = [226, 230, 236];
const AXIS: Rgb = [120, 128, 140];
const LINE: Rgb = [214, 48, 49];
const LIMIT: Rgb = [30, 30, 30];

class Raster {
  readonly px: Buffer;
  constructor(readonly width: number, readonly height: number) {
    this.px = Buffer.alloc(width * height * 3, 255);
  }
  set(x: number, y: number, c: Rgb): void {
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    const i = (Math.round(y) * this.width + Math.round(x)) * 3;
    this.px[i] = c[0];
    this.px[i + 1] = c[1];
    this.px[i + 2] = c[2];
  }
  line(x0: number, y0: number, x1: number, y1: number, c: Rgb, dash = 0): void {
    [x0, y0, x1, y1] = [x0, y0, x1, y1].map(Math.round);
    const dx = Math.abs(x1 - x0);
    const dy = -Math.abs(y1 - y0);
    const sx = x0 < x1 ? 1 : -1;
    const sy = y0 < y1 ? 1 : -1;
    let err = dx + dy;
    for (let n = 0; ; n++) {
      if (!dash || Math.floor(n / dash) % 2 === 0) {
        this.set(x0, y0, c);
        this.set(x0, y0 + 1, c); // 2 px thick
      }
      if (x0 === x1 && y0 === y1) break;
      const e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  }
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

export function encodePng(r: Raster): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(r.width, 0);
  ihdr.writeUInt32BE(r.height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const rows = Buffer.alloc((r.width * 3 + 1) * r.height);
  for (let y = 0; y < r.height; y++) r.px.copy(rows, y * (r.width * 3 + 1) + 1, y * r.width * 3, (y + 1) * r.width * 3);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * The series (MiB, oldest first) as a line, scaled to its own range so a slow creep is visible, with a
 * dashed line at the GPU's total when the series comes within 20% of it.
 */
export function seriesChartPng(series: readonly number[], opts: { width?: number; height?: number; totalMiB?: number } = {}): Buffer {
  const width = opts.width ?? 480;
  const height = opts.height ?? 160;
  const r = new Raster(width, height);
  const pad = 12;
  const values = series.filter(Number.isFinite);
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  const total = opts.totalMiB;
  if (total !== undefined && total > hi && total - hi < 0.2 * total) hi = total;
  if (!(hi > lo)) [lo, hi] = [lo - 1, hi + 1];
  const x = (i: number) => pad + ((width - 2 * pad) * i) / Math.max(1, values.length - 1);
  const y = (v: number) => height - pad - ((height - 2 * pad) * (v - lo)) / (hi - lo);
  for (let g = 1; g < 4; g++) r.line(pad, pad + ((height - 2 * pad) * g) / 4, width - pad, pad + ((height - 2 * pad) * g) / 4, GRID);
  r.line(pad, pad, pad, height - pad, AXIS);
  r.line(pad, height - pad, width - pad, height - pad, AXIS);
  if (total !== undefined && total <= hi) r.line(pad, y(total), width - pad, y(total), LIMIT, 4);
  for (let i = 1; i < values.length; i++) r.line(x(i - 1), y(values[i - 1]), x(i), y(values[i]), LINE);
  return encodePng(r);
}

