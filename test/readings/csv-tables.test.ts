// nvidia-smi CSV tables as users paste them: GPUs not listed from 0, the process name in the middle
// column, limits. Real outputs from test/fixtures (sources in fixtures.json and readings-peers/README.md);
// a test that changes one says how.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { english } from '../../src/core/message.js';
import { parseReadings } from '../../src/readings/index.js';
import { parseSmiCsv, parseSmiCsvWithFields } from '../../src/readings/nvidia-smi-csv.js';
import { MAX_GPUS, MAX_PROCESSES } from '../../src/readings/limits.js';

const read = (rel: string) => readFileSync(new URL(`../fixtures/${rel}`, import.meta.url), 'utf8');
const A100 = () => read('readings/nvidia-smi/39-8x-a100-query-gpu-index-util.csv').trimEnd().split('\n');
const WINDOWS_APPS = () => {
  const lines = read('readings-peers/nvidia_gpu_exporter/windows-x86_64__nvidia-geforce-rtx-2080-super__610.62.txt').split('\n');
  const at = lines.indexOf('# load :: query-compute-apps (per-process)');
  return lines.slice(at + 3, at + 3 + 22);
};

describe('GPUs not listed from 0', () => {
  it('rows 2 and 7 only (what `nvidia-smi -i 2,7` prints): the index column, not the row order, names each GPU', () => {
    const [header, ...rows] = A100();
    const r = parseReadings([header, rows[2], rows[7]].join('\n'));
    expect(r.gpus.map((g) => [g.index, g.memoryUsedMiB, g.utilizationPct, g.name])).toEqual([
      [2, 73539, 100, 'NVIDIA A100-SXM4-80GB'],
      [7, 14, 0, 'NVIDIA A100-SXM4-80GB'],
    ]);
  });

  it('rows in reverse order keep their indexes; the parser reports them in the order printed', () => {
    const [header, ...rows] = A100();
    const r = parseSmiCsv([header, ...[...rows].reverse()].join('\n'));
    expect(r.gpus.map((g) => g.index)).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    expect(r.gpus[0].memoryUsedMiB).toBe(14);
    expect(r.tables).toEqual([{ kind: 'gpu', fields: ['index', 'name', 'utilization.gpu', 'memory.used'], rows: 8, skipped: 0 }]);
    expect(parseReadings([header, ...[...rows].reverse()].join('\n')).gpus.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('a row whose index is not a number is skipped and counted, the others read', () => {
    // Real rows; row 4 has its index replaced by "x" (a stand-in for any corrupted cell).
    const [header, ...rows] = A100();
    const broken = rows.map((row, i) => (i === 3 ? row.replace(/^3,/, 'x,') : row));
    const r = parseSmiCsv([header, ...broken].join('\n'));
    expect(r.gpus.map((g) => g.index)).toEqual([0, 1, 2, 4, 5, 6, 7]);
    expect(r.tables[0]).toMatchObject({ rows: 7, skipped: 1 });
    expect(r.notes.map(english)).toEqual([
      'Skipped 1 row of an nvidia-smi GPU CSV table that did not fit its 4-column header (first: data row 4); the other 7 rows were read.',
    ]);
  });

  it('text in a number column is not a GPU (a log line with the same number of commas)', () => {
    const [header, ...rows] = A100();
    const r = parseSmiCsv([header, rows[0], '1, step done, loss 0.25, lr warmup', rows[2]].join('\n'));
    expect(r.gpus.map((g) => g.index)).toEqual([0, 2]);
    expect(r.tables[0]).toMatchObject({ rows: 2, skipped: 1 });
  });
});

describe('what the note says', () => {
  it('counts several skipped rows and names the first; one row read is "row was"', () => {
    // Real header and rows (fixture 39); rows 1 and 3 cut after their name, row 2 kept.
    const [header, ...rows] = A100();
    const cut = (row: string) => row.slice(0, row.indexOf(', ', row.indexOf(', ') + 1));
    const r = parseSmiCsv([header, cut(rows[0]), rows[1], cut(rows[2])].join('\n'));
    expect(r.gpus.map((g) => g.index)).toEqual([1]);
    expect(r.notes.map(english)).toEqual([
      'Skipped 2 rows of an nvidia-smi GPU CSV table that did not fit its 4-column header (first: data row 1); the other 1 row was read.',
    ]);
  });

  it('one note per table, in the order of the tables', () => {
    const [header, ...rows] = A100();
    const cut = (row: string) => row.slice(0, row.lastIndexOf(','));
    const [appsHeader, ...apps] = WINDOWS_APPS();
    const r = parseSmiCsv([header, rows[0], cut(rows[1]), rows[2], '', appsHeader, apps[0], apps[1], cut(apps[2]), cut(apps[3]), apps[4]].join('\n'));
    expect(r.notes.map(english)).toEqual([
      'Skipped 1 row of an nvidia-smi GPU CSV table that did not fit its 4-column header (first: data row 2); the other 2 rows were read.',
      'Skipped 2 rows of an nvidia-smi compute-apps CSV table that did not fit its 8-column header (first: data row 3); the other 3 rows were read.',
    ]);
    expect(r.tables.map((t) => [t.kind, t.rows, t.skipped])).toEqual([
      ['gpu', 2, 1],
      ['apps', 3, 2],
    ]);
  });
});

describe('the process name in the middle column', () => {
  it('each field lands in its own column: pid, name, memory and the GPU by bus id and uuid', () => {
    const r = parseSmiCsv(WINDOWS_APPS().join('\n'));
    expect(r.processes).toHaveLength(21);
    expect(r.processes[0]).toEqual({
      gpuIndex: null,
      gpuUuid: 'GPU-00000000-0000-0000-0000-000000000000',
      gpuBusId: '00000000:0C:00.0',
      pid: 2140,
      name: 'C:\\Windows\\System32\\dwm.exe',
      memoryMiB: null,
    });
  });

  it('a comma inside the name (nvidia-smi does not quote) stays in the name and the cells after it keep their columns', () => {
    // Real row 9 ("...\\NVIDIA App\\CEF\\NVIDIA Overlay.exe"), with "NVIDIA App" renamed "NVIDIA, App" and its
    // last cell set to 512 MiB so that the column after the name is checked.
    const [header, ...rows] = WINDOWS_APPS();
    const row = rows[8].replace('NVIDIA App', 'NVIDIA, App').replace(/\[N\/A\]$/, '512 MiB');
    const r = parseSmiCsv([header, row].join('\n'));
    expect(r.processes).toEqual([
      expect.objectContaining({ pid: 15964, name: 'C:\\Program Files\\NVIDIA Corporation\\NVIDIA, App\\CEF\\NVIDIA Overlay.exe', memoryMiB: 512 }),
    ]);
  });

  it('joins processes to the GPU listed by a query-gpu table in the same paste, by uuid', () => {
    const lines = read('readings-peers/nvidia_gpu_exporter/windows-x86_64__nvidia-geforce-rtx-2080-super__610.62.txt').split('\n');
    const at = lines.indexOf('# load :: query-gpu (csv, what the exporter parses)');
    const r = parseReadings([lines[at + 3], lines[at + 4], '', ...WINDOWS_APPS()].join('\n'));
    expect(r.gpus.map((g) => g.index)).toEqual([0]);
    expect(new Set(r.processes.map((p) => p.gpuIndex))).toEqual(new Set([0]));
  });
});

describe('not rows (in-process twins of the CLI tests in malformed-readings.test.ts)', () => {
  const capture = (name: string) => read(`readings-peers/nvidia_gpu_exporter/${name}`).split('\n');
  const sectionOf = (lines: string[], label: string) => {
    const at = lines.indexOf(`# ${label}`);
    const end = lines.findIndex((l, i) => i > at + 2 && l.startsWith('####'));
    return lines.slice(at + 3, end).join('\n');
  };

  it('the query-gpu field list, one name per line, is no GPU', () => {
    const list = sectionOf(
      capture('windows-x86_64__nvidia-geforce-rtx-2080-super__610.62.txt'),
      'capabilities :: query-gpu field list (derived, used for query-gpu above)',
    );
    const r = parseSmiCsv(list);
    expect(r.gpus).toEqual([]);
    expect(r.tables.every((t) => t.rows === 0 && t.skipped === 0)).toBe(true);
    expect(r.tables.map((t) => t.fields[0])).toEqual(['memory.total', 'memory.reserved', 'memory.used', 'memory.free', 'utilization.gpu', 'temperature.gpu']);
  });

  it('accounted (finished) apps right after the running ones are not read as running', () => {
    const lines = capture('linux-x86_64__nvidia-h200-mig__590.48.01.txt');
    const running = sectionOf(lines, 'load :: query-compute-apps (per-process)').trimEnd();
    const accounted = sectionOf(lines, 'load :: query-accounted-apps').trimEnd();
    const r = parseSmiCsv(`${running}\n${accounted}`);
    expect(r.processes.map((p) => p.pid)).toEqual([12249, 12250, 12267]);
    expect(r.notes).toEqual([]);
    expect(parseSmiCsv(accounted).processes).toEqual([]);
  });
});

describe('limits', () => {
  it(`keeps at most ${MAX_GPUS} GPUs from one table`, () => {
    const [header, row] = A100();
    const rows = Array.from({ length: MAX_GPUS + 5 }, (_, i) => row.replace(/^0,/, `${i},`));
    const r = parseSmiCsv([header, ...rows].join('\n'));
    expect(r.gpus).toHaveLength(MAX_GPUS);
    expect(r.gpus[MAX_GPUS - 1].index).toBe(MAX_GPUS - 1);
    expect(r.notes).toEqual([]); // rows past the limit are dropped, not "skipped as broken"
    // The headerless reader (the SSH layer's) has the same limit.
    const noheader = parseSmiCsvWithFields(rows.join('\n'), ['index', 'name', 'utilization.gpu', 'memory.used']);
    expect(noheader.gpus).toHaveLength(MAX_GPUS);
  });

  // 65,539 rows through instrumented code for every mutant would take most of a mutation run; the GPU
  // limit above covers the same loop.
  it.skipIf(process.env.STRYKER_MUTATOR_WORKER)(`keeps at most ${MAX_PROCESSES} processes`, () => {
    const header = 'pid, process_name, used_gpu_memory [MiB]';
    const row = read('readings/nvidia-smi/29-gb10-query-compute-apps-ollama-580.csv').trimEnd().split('\n')[1];
    const rows = Array.from({ length: MAX_PROCESSES + 3 }, (_, i) => row.replace(/^\d+/, String(i + 1)));
    const r = parseSmiCsv([header, ...rows].join('\n'));
    expect(r.processes).toHaveLength(MAX_PROCESSES);
    expect(r.processes[MAX_PROCESSES - 1].pid).toBe(MAX_PROCESSES);
    expect(r.notes).toEqual([]);
    expect(parseSmiCsvWithFields(rows.join('\n'), ['pid', 'process_name', 'used_gpu_memory']).processes).toHaveLength(MAX_PROCESSES);
  });
});
