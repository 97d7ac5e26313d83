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
    expect(m).toMatchObject({
      totalBytes: 2024 * MiB,
      usedBytes: 818 * MiB,
      freeBytes: 1206 * MiB,
      buffCacheBytes: (57 + 495) * MiB,
      availableBytes: (1206 + 57 + 495) * MiB,
      swapTotalBytes: 6000 * MiB,
      swapUsedBytes: 0,
    });
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
    expect(m).toMatchObject({
      totalBytes: 1877 * MiB,
      freeBytes: 1017 * MiB,
      buffCacheBytes: (70 + 557) * MiB,
      availableBytes: 1645 * MiB,
      unitInferred: true,
    });
  });
});

describe('rows pasted without their header: the number of values decides the layout', () => {
  const rowsOf = (file: string) =>
    fixture(file)
      .split('\n')
      .filter((l) => l.includes(':'))
      .join('\n');

  it('seven values are the wide layout (free -w, fixture 09)', () => {
    const m = parseFree(rowsOf('09-free-w-kib-wide.txt'));
    expect(m).toMatchObject({
      totalBytes: 8070604 * KiB,
      sharedBytes: 1162676 * KiB,
      buffCacheBytes: (104156 + 4542508) * KiB,
      availableBytes: 3624840 * KiB,
      swapTotalBytes: 8127484 * KiB,
    });
  });

  it('six values are the modern layout (fixture 05)', () => {
    const m = parseFree(rowsOf('05-free-kib-modern-available.txt'));
    expect(m).toMatchObject({
      totalBytes: 8011164 * KiB,
      usedBytes: 3767900 * KiB,
      freeBytes: 735364 * KiB,
      sharedBytes: 8804 * KiB,
      buffCacheBytes: 3507900 * KiB,
      availableBytes: 3898568 * KiB,
    });
  });

  it('five values are BusyBox: available is free + buffers', () => {
    const m = parseFree(rowsOf('29-busybox-free-usage-example.txt'));
    expect(m).toMatchObject({ totalBytes: 257628 * KiB, freeBytes: 8904 * KiB, buffCacheBytes: 93124 * KiB, availableBytes: (8904 + 93124) * KiB });
  });

  it('three values (the "Total:" row alone) are not a Mem row', () => {
    expect(parseFree('Total:       386144       257128       129016')).toBeNull();
  });
});

describe('what is not a free row', () => {
  // Real rows (fixture 13: "Mem:  128665 31887 2905 3 93873 95806" under a free -m header), changed as each test says.
  const [header, mem, swap] = fixture('13-ubuntu-128g-free-m.txt').split('\n');

  it('the real output is read', () => {
    expect(parseFree(`$ free -m\n${header}\n${mem}\n${swap}`)).toMatchObject({
      totalBytes: 128665 * MiB,
      availableBytes: 95806 * MiB,
      swapTotalBytes: 2047 * MiB,
      swapUsedBytes: 91 * MiB,
    });
  });

  it.each([
    ['a second colon in the row', mem.replace('31887', '31:887')],
    ['a label over 40 characters', mem.replace('Mem:', `${'M'.repeat(41)}:`)],
    ['no label before the colon', mem.replace('Mem:', ':')],
    ['a word where a value belongs', mem.replace('2905', 'free')],
    ['more than seven values (free -w prints seven)', `${mem} 1 2`],
    ['no label at all', mem.replace('Mem:', '')],
    ['text after the colon', mem.replace('Mem:', 'Mem: total')],
  ])('%s', (_, row) => {
    expect(parseFree(`$ free -m\n${header}\n${row}\n${swap}`)).toBeNull();
  });

  it('an unknown row label counts as Mem only under a header with as many columns', () => {
    const relabelled = mem.replace('Mem:', 'Mémoria:');
    expect(parseFree(`$ free -m\n${header}\n${relabelled}`)?.totalBytes).toBe(128665 * MiB);
    expect(parseFree(relabelled)).toBeNull();
    expect(parseFree(`$ free -m\nepoch 3 done\n${relabelled}`)).toBeNull();
    expect(parseFree(`$ free -m\n${header} extra words\n${relabelled}`)).toBeNull();
  });

  it('a header-like line with digits, long words or a colon is not a header', () => {
    const relabelled = mem.replace('Mem:', 'Mémoria:');
    expect(parseFree(`$ free -m\ntotal used free shared buff/cache 42\n${relabelled}`)).toBeNull();
    expect(parseFree(`$ free -m\ntotal used free shared ${'x'.repeat(21)} available\n${relabelled}`)).toBeNull();
    expect(parseFree(`$ free -m\ntotal used: free shared buff/cache available\n${relabelled}`)).toBeNull();
    // Translated header words (not read) with as many columns still make the row a Mem row.
    expect(parseFree(`$ free -m\nвсего занято свободно общая буф/врем. доступно\n${relabelled}`)?.availableBytes).toBe(95806 * MiB);
  });

  it('a label of up to 40 characters is read', () => {
    const relabelled = mem.replace('Mem:', `${'M'.repeat(40)}:`);
    expect(parseFree(`$ free -m\n${header}\n${relabelled}`)?.totalBytes).toBe(128665 * MiB);
  });

  it('a line too long to be a free row ends the output before it', () => {
    expect(parseFree(`$ free -m\n${header}\n${mem}\n${'x'.repeat(5000)}\n${swap}`)).toMatchObject({ totalBytes: 128665 * MiB, swapTotalBytes: null });
  });

  it('a line that is not a row between Mem and Swap ends the output: that Swap is not its swap', () => {
    expect(parseFree(`$ free -m\n${header}\n${mem}\nsome log line\n${swap}`)?.swapTotalBytes).toBeNull();
  });
});

describe('translated labels and the printed resolution', () => {
  it('Russian rows without their header: "Память" is Mem and the short row after it is swap', () => {
    const rows = fixture('19-ru-locale-free-h-translated-row-labels.txt').split('\n').slice(1).join('\n');
    const m = parseFree(rows);
    expect(m?.totalBytes).toBe(15 * 1024 ** 3);
    expect(m?.swapTotalBytes).toBe(4 * 1024 ** 3);
  });

  it('the resolution is that of the printed total ("15Gi": 1 GiB), not of a later column ("9,0Gi")', () => {
    expect(parseFree(fixture('19-ru-locale-free-h-translated-row-labels.txt'))?.resolutionBytes).toBe(1024 ** 3);
    expect(parseFree(fixture('07-ubuntu1804-free-h-G-M-suffix.txt'))?.resolutionBytes).toBe(1024 ** 3 / 10);
  });
});
