// `free` layouts that only the header tells apart, and the arithmetic of "available" where free does
// not print it. Every output here is real (test/fixtures/readings/fixtures.json names each source).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFree } from '../../src/readings/free.js';
import { parseReadings } from '../../src/readings/index.js';

const fixture = (file: string) => readFileSync(new URL(`../fixtures/readings/free/${file}`, import.meta.url), 'utf8');
const KiB = 1024;
const MiB = KiB ** 2;

describe('old layout without the "-/+ buffers/cache" row', () => {
  it('free -o: the header says buffers and cached, so available is free + buffers + cached, not the cached column', () => {
    const m = parseReadings(fixture('25-ubuntu1404-free-o-no-adjusted-row.txt')).hostMemory;
    expect(m).toEqual({
      totalBytes: 500988 * KiB,
      usedBytes: 345368 * KiB,
      freeBytes: 155620 * KiB,
      sharedBytes: 864 * KiB,
      buffCacheBytes: (14532 + 106416) * KiB,
      availableBytes: (155620 + 14532 + 106416) * KiB,
      swapTotalBytes: 522236 * KiB,
      swapUsedBytes: 278908 * KiB,
      resolutionBytes: KiB,
    });
  });

  it('free -o without its header line is ambiguous and read as the modern layout (the header is what decides)', () => {
    const [, , ...rows] = fixture('25-ubuntu1404-free-o-no-adjusted-row.txt').split('\n');
    const m = parseFree(rows.join('\n'));
    expect(m?.availableBytes).toBe(106416 * KiB);
    expect(m?.unitInferred).toBe(true);
  });

  it('free -om three times in one post: the last output, in MiB as the command says', () => {
    const m = parseReadings(fixture('27-free-om-three-outputs-tmpfs.txt')).hostMemory;
    expect(m).toMatchObject({ totalBytes: 2024 * MiB, usedBytes: 818 * MiB, freeBytes: 1206 * MiB, buffCacheBytes: (57 + 495) * MiB, availableBytes: (1206 + 57 + 495) * MiB, swapTotalBytes: 6000 * MiB, swapUsedBytes: 0 });
    expect(m?.unitInferred).toBeUndefined();
  });
});

describe('BusyBox', () => {
  it('five columns with indented labels and a Total row: available is free + buffers; the Total row is not swap', () => {
    const m = parseReadings(fixture('29-busybox-free-usage-example.txt')).hostMemory;
    expect(m).toEqual({
      totalBytes: 257628 * KiB,
      usedBytes: 248724 * KiB,
      freeBytes: 8904 * KiB,
      sharedBytes: 59644 * KiB,
      buffCacheBytes: 93124 * KiB,
      availableBytes: (8904 + 93124) * KiB,
      swapTotalBytes: 128516 * KiB,
      swapUsedBytes: 8404 * KiB,
      resolutionBytes: KiB,
    });
  });
});

describe('units', () => {
  it('the unit the caller knows (the SSH layer runs free -b) is used as given, not guessed', () => {
    const text = fixture('15-ubuntu-128g-free-b-columns-run-together.txt');
    expect(parseFree(text, { unitBytes: 1 })).toMatchObject({ totalBytes: 134915833856, availableBytes: 100424712192, swapTotalBytes: 2147479552 });
    expect(parseFree(text, { unitBytes: 1 })?.unitInferred).toBeUndefined();
    // The same numbers said to be KiB are read as KiB: the caller wins over the guess.
    expect(parseFree(text, { unitBytes: KiB })?.totalBytes).toBe(134915833856 * KiB);
  });

  it('old layout pasted without its header: six values and a "-/+" row are the old columns', () => {
    // Real output (fixture 01) with its header line left out, as when only the rows are copied.
    const [, ...rows] = fixture('01-centos6-free-m-old-format.txt').split('\n');
    const m = parseFree(rows.join('\n'));
    expect(m).toMatchObject({ totalBytes: 1877 * MiB, freeBytes: 1017 * MiB, buffCacheBytes: (70 + 557) * MiB, availableBytes: 1645 * MiB, unitInferred: true });
  });
});
