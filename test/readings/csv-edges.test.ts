// Edges of the nvidia-smi CSV reader that real outputs rarely show. Rows marked "synthetic" were written
// for the test in nvidia-smi's own format; the others are real (fixtures named in fixtures.json).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSmiCsv, parseSmiCsvWithFields, readingsFromSmiQueries } from '../../src/readings/nvidia-smi-csv.js';

const read = (rel: string) => readFileSync(new URL(`../fixtures/${rel}`, import.meta.url), 'utf8');
const A100 = () => read('readings/nvidia-smi/39-8x-a100-query-gpu-index-util.csv').trimEnd().split('\n');

describe('which lines are headers', () => {
  it.each([['memory.used [MiB]'], ['memory.total [MiB]'], ['memory.free [MiB]'], ['memory.reserved [MiB]'], ['utilization.gpu [%]'], ['temperature.gpu']])(
    'a lone "%s" column is a GPU query (synthetic value 42)',
    (header) => {
      const r = parseSmiCsv(`${header}\n42\n`);
      expect(r.gpus).toHaveLength(1);
      expect(r.tables).toEqual([{ kind: 'gpu', fields: [header.replace(/ \[.*/, '')], rows: 1, skipped: 0 }]);
    },
  );

  it('a lone "pid" line is not a header (a word in a log)', () => {
    expect(parseSmiCsv('pid\n4242\n').tables).toEqual([]);
  });

  it('a compute-apps query without pid gives neither GPUs nor processes (synthetic row)', () => {
    const r = parseSmiCsv('used_gpu_memory [MiB]\n5303 MiB\n');
    expect(r.gpus).toEqual([]);
    expect(r.processes).toEqual([]);
  });

  it.each(['max_memory_usage [MiB]', 'is_running', 'gpu_utilization [%]', 'mem_utilization [%]'])(
    'an accounted-apps header with %s lists no current holder (synthetic row)',
    (field) => {
      expect(parseSmiCsv(`pid, ${field}\n4242, 1\n`).processes).toEqual([]);
    },
  );

  it('a header line over 64 KiB is not read', () => {
    expect(parseSmiCsv(`${'memory.used, '.repeat(6000)}memory.used\n`).tables).toEqual([]);
  });
});

describe('where a table ends', () => {
  it('a blank line ends a one-column table', () => {
    expect(parseSmiCsv('memory.used [MiB]\n100 MiB\n\n200 MiB\n').gpus.map((g) => g.memoryUsedMiB)).toEqual([100]);
  });

  it('a line that is not a value ends a one-column table, without a note', () => {
    const r = parseSmiCsv('memory.used [MiB]\n100 MiB\nhello\n200 MiB\n');
    expect(r.gpus.map((g) => g.memoryUsedMiB)).toEqual([100]);
    expect(r.notes).toEqual([]);
  });

  it('a line without commas ends a table of several columns', () => {
    const [header, ...rows] = A100();
    const r = parseSmiCsv([header, rows[0], 'Traceback (most recent call last):', rows[1]].join('\n'));
    expect(r.gpus.map((g) => g.index)).toEqual([0]);
    expect(r.notes).toEqual([]);
  });

  it('a log line with commas after the table is not a skipped row (synthetic log line)', () => {
    const [header, ...rows] = A100();
    const r = parseSmiCsv([header, ...rows, 'Saved checkpoint-500/model.safetensors, 2.1 GB'].join('\n'));
    expect(r.gpus).toHaveLength(8);
    expect(r.notes).toEqual([]);
  });

  it('a header whose only row is cut short: no GPU, one row skipped', () => {
    const [header, row] = A100();
    const r = parseSmiCsv([header, row.slice(0, row.lastIndexOf(','))].join('\n'));
    expect(r.gpus).toEqual([]);
    expect(r.tables[0]).toMatchObject({ rows: 0, skipped: 1 });
  });

  it('the last row cut short is counted as skipped', () => {
    const [header, ...rows] = A100();
    const last = rows[7];
    const r = parseSmiCsv([header, ...rows.slice(0, 7), last.slice(0, last.lastIndexOf(','))].join('\n'));
    expect(r.gpus).toHaveLength(7);
    expect(r.tables[0]).toMatchObject({ rows: 7, skipped: 1 });
  });

  it('a row over 64 KiB is skipped (a process name run wild; synthetic)', () => {
    const r = parseSmiCsv(`pid, process_name, used_gpu_memory [MiB]\n1, ${'x'.repeat(70000)}, 5 MiB\n2, python, 7 MiB\n`);
    expect(r.processes.map((p) => p.pid)).toEqual([2]);
    expect(r.tables[0]).toMatchObject({ rows: 1, skipped: 1 });
  });
});

describe('cells', () => {
  it('a GPU row has exactly the fields its query asked for', () => {
    const [header, row] = A100();
    expect(parseSmiCsv(`${header}\n${row}`).gpus).toEqual([
      {
        index: 0,
        name: 'NVIDIA A100-SXM4-80GB',
        uuid: null,
        busId: null,
        memoryUsedMiB: 932,
        memoryTotalMiB: null,
        utilizationPct: 66,
        temperatureC: null,
        error: null,
      },
    ]);
  });

  it('memory.free and memory.reserved read in any column, the first included (synthetic rows)', () => {
    expect(parseSmiCsv('memory.free [MiB], memory.reserved [MiB]\n16280 MiB, 103 MiB\n').gpus[0]).toMatchObject({
      memoryFreeMiB: 16280,
      memoryReservedMiB: 103,
    });
    expect(parseSmiCsv('memory.reserved [MiB], memory.free [MiB]\n103 MiB, 16280 MiB\n').gpus[0]).toMatchObject({
      memoryFreeMiB: 16280,
      memoryReservedMiB: 103,
    });
  });

  it('ERR! in a clock alone is not a failed GPU (synthetic row)', () => {
    const [gpu] = parseSmiCsvWithFields('0, 593, ERR!\n', ['index', 'memory.used', 'clocks.current.sm']).gpus;
    expect(gpu).toMatchObject({ error: null, errorFields: ['clocks.current.sm'] });
  });

  it('text in the memory column of a compute-apps row: the row is skipped (synthetic row)', () => {
    const r = parseSmiCsv('pid, process_name, used_gpu_memory [MiB]\n1, python, lots\n2, python, 7 MiB\n');
    expect(r.processes.map((p) => p.pid)).toEqual([2]);
  });

  it('the process name in the first column, with a comma in it (synthetic row)', () => {
    const r = parseSmiCsv('process_name, pid, used_gpu_memory [MiB]\npython, train.py, 4242, 512 MiB\n');
    expect(r.processes).toEqual([expect.objectContaining({ name: 'python, train.py', pid: 4242, memoryMiB: 512 })]);
  });
});

describe('the headerless reader (what the SSH layer runs)', () => {
  it('maps gpu_uuid and gpu_bus_id to the GPU fields', () => {
    const [gpu] = parseSmiCsvWithFields('3, GPU-x, 00000000:3B:00.0\n', ['index', 'gpu_uuid', 'gpu_bus_id']).gpus;
    expect(gpu).toMatchObject({ index: 3, uuid: 'GPU-x', busId: '00000000:3B:00.0' });
  });

  it('without an index column the rows are GPUs 0, 1 ...; blank lines are not GPUs', () => {
    const r = parseSmiCsvWithFields('100\n\n200\n\n', ['memory.used']);
    expect(r.gpus.map((g) => [g.index, g.memoryUsedMiB])).toEqual([
      [0, 100],
      [1, 200],
    ]);
    expect(r.tables).toEqual([{ kind: 'gpu', fields: ['memory.used'], rows: 2, skipped: 0 }]);
    expect(r.notes).toEqual([]);
    expect(r.processes).toEqual([]);
  });

  it('both queries joined: names and indexes as printed, no errors (synthetic rows)', () => {
    const r = readingsFromSmiQueries('3, GPU-c, NVIDIA H100 80GB HBM3, 10, 81559, 5, 40\n', 'GPU-c, 77, 9, python\n');
    expect(r.gpus.map((g) => [g.index, g.name])).toEqual([[3, 'NVIDIA H100 80GB HBM3']]);
    expect(r.processes.map((p) => [p.gpuIndex, p.pid, p.name, p.memoryMiB])).toEqual([[3, 77, 'python', 9]]);
    expect(r.smiErrors).toEqual([]);
  });
});
