// Issue 22 item 7: a row with a value no real tool prints (memory.used 99999999999 MiB, a 15-digit pid or
// GPU index, a free total of exabytes) is left out by its parser and named in the readings' notes; the
// other rows are read. Through the CLI (`gpu-doctor diagnose --json FILE` prints what the parsers read),
// on the real captures of test/fixtures/readings with one row changed each (the test says which).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe as describeVitest, expect, it } from 'vitest';
import { t } from '../../src/core/i18n.js';
import { render } from '../../src/core/message.js';
import { outOfRangeNote } from '../../src/readings/ranges.js';

// CLI runs in a child process, which mutation testing cannot switch mutants in.
const describe = process.env.STRYKER_MUTATOR_WORKER ? describeVitest.skip : describeVitest;

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');
const fixture = (p: string) => readFileSync(resolve(import.meta.dirname, '../fixtures/readings', p), 'utf8');

interface CliReadings {
  gpus: { index: number; memoryUsedMiB: number | null }[];
  processes: { gpuIndex: number | null; pid: number }[];
  hostMemory: { totalBytes: number } | null;
  notes?: string[];
}

const work = mkdtempSync(join(tmpdir(), 'gpu-doctor-ranges-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let written = 0;

async function readingsOf(text: string): Promise<CliReadings> {
  const file = join(work, `paste-${written++}.txt`);
  writeFileSync(file, text);
  const { stdout } = await run(process.execPath, [BIN, 'diagnose', '--json', file], { maxBuffer: 16 << 20, timeout: 120_000 });
  return JSON.parse(stdout).readings;
}

/** The text with `from` replaced once, checking it was there. */
function changed(text: string, from: string, to: string): string {
  expect(text.split(from), from).toHaveLength(2);
  return text.replace(from, to);
}

const note = (tool: string, row: string, field: string, value: string, range: string) =>
  t('en', 'note.readings.outOfRange', { tool, row, field, value, range });

describe('rows with values out of range are left out and named; the rest is read', () => {
  it('the note is the catalogue message, in en and in zh', () => {
    const made = outOfRangeNote('nvidia-smi', 'GPU 3', { field: 'memory.used', value: 99999999999, min: 0, max: 16777216, unit: 'MiB' });
    const vars = { tool: 'nvidia-smi', row: 'GPU 3', field: 'memory.used', value: '99999999999 MiB', range: '0..16777216 MiB' };
    expect(made).toEqual({ key: 'note.readings.outOfRange', params: vars });
    expect(render('en', made)).toBe(note('nvidia-smi', 'GPU 3', 'memory.used', '99999999999 MiB', '0..16777216 MiB'));
    expect(render('zh', made)).toBe(t('zh', 'note.readings.outOfRange', vars));
  });

  it('the default table (8x H200): GPU 3 with memory.used 99999999999 MiB and the process with a 15-digit pid', async () => {
    let table = fixture('nvidia-smi/13-8x-h200-8procs-570.txt');
    // GPU 3's second row (the only one at 117 W) and GPU 6's process row.
    table = changed(table, '117W /  700W |   84522MiB / 143771MiB', '117W /  700W | 99999999999MiB / 143771MiB');
    table = changed(table, '    916343      C', ' 123456789012345      C');
    const r = await readingsOf(table);
    expect(r.gpus.map((g) => g.index)).toEqual([0, 1, 2, 4, 5, 6, 7]);
    expect(r.processes.map((p) => p.pid)).toEqual([915920, 916338, 916339, 916340, 916341, 916342, 916344]);
    expect(r.notes).toEqual([
      note('nvidia-smi', 'pid 123456789012345', 'pid', '123456789012345', '1..4194304'),
      note('nvidia-smi', 'GPU 3', 'memory.used', '99999999999 MiB', '0..16777216 MiB'),
    ]);
  }, 150_000);

  it('a CSV query (8x A100): a GPU row with a 15-digit index and one with memory.used 99999999999 MiB', async () => {
    let csv = fixture('nvidia-smi/39-8x-a100-query-gpu-index-util.csv');
    csv = changed(csv, '5, NVIDIA A100-SXM4-80GB, 100 %, 73539 MiB', '5, NVIDIA A100-SXM4-80GB, 100 %, 99999999999 MiB');
    csv = changed(csv, '7, NVIDIA A100-SXM4-80GB, 0 %, 14 MiB', '123456789012345, NVIDIA A100-SXM4-80GB, 0 %, 14 MiB');
    const r = await readingsOf(csv);
    expect(r.gpus.map((g) => [g.index, g.memoryUsedMiB])).toEqual([
      [0, 932],
      [1, 1758],
      [2, 73539],
      [3, 73539],
      [4, 73539],
      [6, 73539],
    ]);
    expect(r.notes).toEqual([
      note('nvidia-smi', 'GPU 5', 'memory.used', '99999999999 MiB', '0..16777216 MiB'),
      note('nvidia-smi', 'GPU 123456789012345', 'index', '123456789012345', '0..1023'),
    ]);
  }, 150_000);

  it('nvidia-smi -q -x with fb used 99999999999 MiB, and a second free output of 10^19 bytes: the first free output counts', async () => {
    const xml = changed(
      fixture('nvidia-smi/05-gtx1660ti-graphics-device-418.xml'),
      '<fb_memory_usage>\n                        <total>5912 MiB</total>\n                        <used>0 MiB</used>',
      '<fb_memory_usage>\n                        <total>5912 MiB</total>\n                        <used>99999999999 MiB</used>',
    );
    const free = fixture('free/17-free-b-6gb.txt');
    const huge = changed(free, 'Mem:     6249144320 ', 'Mem:     10000000000000000000 ');
    const r = await readingsOf(`${xml}\n$ free -b\n${free}\n$ free -b\n${huge}`);
    expect(r.gpus).toEqual([]);
    expect(r.hostMemory?.totalBytes).toBe(6249144320);
    expect(r.notes).toEqual([
      note('nvidia-smi', 'GPU 0', 'memory.used', '99999999999 MiB', '0..16777216 MiB'),
      note('free', 'Mem', 'total', '10000000000000000000 bytes', '0..1125899906842624 bytes'),
    ]);
  }, 150_000);
});
