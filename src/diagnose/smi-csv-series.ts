// A memory series from nvidia-smi's CSV query (memory-series.ts reads the paste's other series forms).
import type { SeriesPoint } from './series-point.js';

const MAX_POINTS = 2000;

// nvidia-smi --query-gpu=...,memory.used --format=csv (often under `-l 1` or `watch`): the header names the column
// ("memory.used [MiB]"), each row below it is one reading of the first GPU; a row that is not a reading ends it.
const SMI_CSV_HEADER = /(?:^|,)\s{0,3}memory\.used(?: \[MiB\])?\s{0,3}(?:,|$)/;
const SMI_CSV_MIB = /^\s{0,3}(\d{1,7})\s?MiB\s{0,3}$/;

export function smiCsvSeries(text: string): SeriesPoint[] {
  const at = text.indexOf('memory.used');
  if (at < 0) return [];
  const lines = text.slice(text.lastIndexOf('\n', at) + 1).split('\n', 2 * MAX_POINTS);
  if (!SMI_CSV_HEADER.test(lines[0])) return [];
  const column = lines[0].split(',').findIndex((c) => /^\s{0,3}memory\.used\b/.test(c));
  const out: SeriesPoint[] = [];
  for (const row of lines.slice(1)) {
    // `-l` repeats the header for every GPU count change; other GPUs' rows are read only in a one-GPU query.
    if (SMI_CSV_HEADER.test(row)) continue;
    const cell = SMI_CSV_MIB.exec(row.split(',')[column] ?? '');
    if (!cell) break;
    out.push({ mib: Number(cell[1]) });
  }
  return out;
}
