// Issue 22 item 7, in process: a CSV row with a value no real GPU or process has (a 15-digit index or pid,
// memory.used of 99999999999 MiB) is left out and named in the notes; the other rows are read.
// out-of-range.test.ts checks this through the CLI (a child process, which mutation testing cannot switch
// mutants in); this twin runs the parser itself on the real captures of test/fixtures/readings/nvidia-smi.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReadingNote } from '../../src/readings/notes.js';
import { parseSmiCsv, readingsFromSmiQueries } from '../../src/readings/nvidia-smi-csv.js';

const fixture = (name: string) => readFileSync(resolve(import.meta.dirname, '../fixtures/readings/nvidia-smi', name), 'utf8');
// The parser names the row as data (key and values); the reply renders it (test/readings/notes-catalogue.test.ts).
const note = (row: string, field: string, value: string, range: string): ReadingNote => ({
  key: 'note.readings.outOfRange',
  params: { tool: 'nvidia-smi', row, field, value, range },
});

/** The text with `from` replaced once, checking it was there once. */
function changed(text: string, from: string, to: string): string {
  expect(text.split(from), from).toHaveLength(2);
  return text.replace(from, to);
}

describe('nvidia-smi CSV: rows out of range are left out and named; the rest is read', () => {
  it('GPU query (8x A100): a GPU with memory.used 99999999999 MiB and one with a 15-digit index', () => {
    let csv = fixture('39-8x-a100-query-gpu-index-util.csv');
    csv = changed(csv, '5, NVIDIA A100-SXM4-80GB, 100 %, 73539 MiB', '5, NVIDIA A100-SXM4-80GB, 100 %, 99999999999 MiB');
    csv = changed(csv, '7, NVIDIA A100-SXM4-80GB, 0 %, 14 MiB', '123456789012345, NVIDIA A100-SXM4-80GB, 0 %, 14 MiB');
    const r = parseSmiCsv(csv);
    expect(r.gpus.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 6]);
    expect(r.notes).toEqual([
      note('GPU 5', 'memory.used', '99999999999 MiB', '0..16777216 MiB'),
      note('GPU 123456789012345', 'index', '123456789012345', '0..1023'),
    ]);
    // The rows left out still belong to the table (they fit its header): no "skipped rows" note.
    expect(r.tables).toEqual([expect.objectContaining({ kind: 'gpu', rows: 8, skipped: 0 })]);
  });

  it('compute-apps query (8x H200): a process with a 15-digit pid', () => {
    const csv = changed(
      fixture('37-8x-h200-query-compute-apps-not-found-procname.csv'),
      'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90, 1425258,',
      'GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90, 123456789012345,',
    );
    const r = parseSmiCsv(csv);
    expect(r.processes.map((p) => p.pid)).not.toContain(123456789012345);
    expect(r.processes.map((p) => p.pid)).toContain(1328667);
    expect(r.notes).toEqual([note('pid 123456789012345', 'pid', '123456789012345', '1..4194304')]);
  });

  it("the SSH layer's noheader queries name the bad rows the same way", () => {
    const r = readingsFromSmiQueries(
      '0, GPU-a, NVIDIA H200, 1000, 143771, 5, 40\n1, GPU-b, NVIDIA H200, 99999999999, 143771, 5, 40\n',
      'GPU-a, 123456789012345, 2000, python\nGPU-a, 42, 2000, python\n',
    );
    expect(r.gpus.map((g) => g.index)).toEqual([0]);
    expect(r.processes.map((p) => p.pid)).toEqual([42]);
    expect(r.notes).toEqual([
      note('GPU 1', 'memory.used', '99999999999 MiB', '0..16777216 MiB'),
      note('pid 123456789012345', 'pid', '123456789012345', '1..4194304'),
    ]);
  });
});
