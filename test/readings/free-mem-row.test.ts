// Which labelled row of a `free` output is its Mem row (src/readings/free.ts): a row with at least the
// three values every layout starts with (total, used, free), labelled Mem or right under a header with as
// many columns; never the Swap row, nor the Total / Low / High / Comm rows of free -t, -l and --committed.
import { describe, expect, it } from 'vitest';
import { parseFree } from '../../src/readings/free.js';

const MODERN_HEADER = '              total        used        free      shared  buff/cache   available';
const THREE_COLUMNS = '              total        used        free';

describe('parseFree: the Mem row', () => {
  it('a Mem row cut short (fewer than three values) is no free output', () => {
    expect(parseFree(`${MODERN_HEADER}\nMem:         128665       31887\n`)).toBeNull();
    expect(parseFree('Mem:         128665\n')).toBeNull();
  });

  it('three values are enough: total, used and free', () => {
    const r = parseFree('Mem:       1877        859       1018\n', { unitBytes: 1024 ** 2 });
    expect(r).toMatchObject({ totalBytes: 1877 * 1024 ** 2, usedBytes: 859 * 1024 ** 2, freeBytes: 1018 * 1024 ** 2 });
  });

  it('a Swap row is never read as host memory, even right under a header with as many columns', () => {
    expect(parseFree(`${THREE_COLUMNS}\nSwap:          2047          91        1956\n`)).toBeNull();
  });

  it('the Total, Low, High and Comm rows are never the Mem row, even right under a header with as many columns', () => {
    for (const label of ['Total', 'Low', 'High', 'Comm']) expect(parseFree(`${THREE_COLUMNS}\n${label}:  2047  91  1956\n`), label).toBeNull();
  });

  it('under a header with as many columns, a row with a translated label is the Mem row', () => {
    expect(parseFree(`${THREE_COLUMNS}\nSpeicher:  2047  91  1956\n`, { unitBytes: 1024 ** 2 })?.totalBytes).toBe(2047 * 1024 ** 2);
  });
});
