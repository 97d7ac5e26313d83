// Attack 13 (issue 11): malformed readings, checked against a peer's real captures through the CLI
// (`gpu-doctor diagnose --json FILE` prints what the readings parsers found). The captures are
// nvidia_gpu_exporter's (test/fixtures/readings-peers/README.md); where a test breaks a real
// capture on purpose (a row cut short), it says which line it changes and how.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe as describeVitest, expect, it } from 'vitest';

// These run the CLI in a child process, which mutation testing cannot switch mutants in: there they
// would only repeat the unmutated code, slowly (the same code paths are tested in-process elsewhere).
const describe = process.env.STRYKER_MUTATOR_WORKER ? describeVitest.skip : describeVitest;

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');
const PEERS = resolve(import.meta.dirname, '../fixtures/readings-peers/nvidia_gpu_exporter');
const WINDOWS_2080 = join(PEERS, 'windows-x86_64__nvidia-geforce-rtx-2080-super__610.62.txt');
const H200_MIG = join(PEERS, 'linux-x86_64__nvidia-h200-mig__590.48.01.txt');

interface CliReadings {
  gpus: { index: number; name: string | null; memoryUsedMiB: number | null; memoryTotalMiB: number | null }[];
  processes: { gpuIndex: number | null; pid: number; name: string | null; memoryMiB: number | null }[];
  notes?: string[];
}

const work = mkdtempSync(join(tmpdir(), 'gpu-doctor-readings-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let written = 0;

/** What `gpu-doctor diagnose --json` reads from the text. */
async function readingsOf(text: string): Promise<CliReadings> {
  const file = join(work, `paste-${written++}.txt`);
  writeFileSync(file, text);
  const { stdout } = await run(process.execPath, [BIN, 'diagnose', '--json', file], { maxBuffer: 16 << 20 });
  return JSON.parse(stdout).readings;
}

/** One "# <label>" section of a capture: its lines after the "####" rule under the label, up to the next section. */
function section(capture: string, label: string): string[] {
  const lines = readFileSync(capture, 'utf8').split('\n');
  const at = lines.indexOf(`# ${label}`);
  expect(at, `section "${label}"`).toBeGreaterThan(0);
  const body: string[] = [];
  for (let i = at + 3; i < lines.length && !lines[i].startsWith('####'); i++) body.push(lines[i]);
  while (body.length && body[body.length - 1] === '') body.pop();
  return body;
}

describe('a list of nvidia-smi field names is not a list of GPUs', () => {
  it('the whole real capture (field list one per line, as collect.sh writes it) shows its one GPU', async () => {
    const r = await readingsOf(readFileSync(WINDOWS_2080, 'utf8'));
    expect(r.gpus.map((g) => [g.index, g.name, g.memoryTotalMiB])).toEqual([[0, 'NVIDIA GeForce RTX 2080 SUPER', 8192]]);
    expect(r.notes).toBeUndefined();
  });

  it.each([
    [WINDOWS_2080, 'capabilities :: query-gpu field list (derived, used for query-gpu above)'],
    [H200_MIG, 'capabilities :: query-gpu field list (derived, used for query-gpu above)'],
  ])('the field list alone is no GPU (%s)', async (capture, label) => {
    const list = section(capture, label);
    expect(list.length).toBeGreaterThan(100);
    expect(list).toContain('memory.used');
    const r = await readingsOf(`${list.join('\n')}\n`);
    expect(r.gpus).toEqual([]);
    expect(r.processes).toEqual([]);
  });

  it('a query header with no data rows is no GPU, whatever follows it', async () => {
    const gpuCsv = section(WINDOWS_2080, 'idle :: query-gpu (csv, what the exporter parses)');
    const [header] = gpuCsv;
    expect((await readingsOf(`${header}\n`)).gpus).toEqual([]);
    // The header, then the field list pasted under it.
    const list = section(WINDOWS_2080, 'capabilities :: query-gpu field list (derived, used for query-gpu above)');
    expect((await readingsOf(`${header}\n${list.join('\n')}\n`)).gpus).toEqual([]);
  });
});

describe('a short or broken CSV row is skipped and said, the rows after it are read', () => {
  const apps = () => section(WINDOWS_2080, 'load :: query-compute-apps (per-process)');

  it('the real compute-apps table (process name in the middle column) lists all 21 processes', async () => {
    const table = apps();
    expect(table).toHaveLength(22);
    const r = await readingsOf(`${table.join('\n')}\n`);
    expect(r.processes.map((p) => p.pid)).toEqual(table.slice(1).map((row) => Number(row.split(', ')[5])));
    expect(r.processes[6]).toEqual({
      gpuIndex: null,
      pid: 16760,
      name: 'C:\\Windows\\SystemApps\\ShellExperienceHost_cw5n1h2txyewy\\ShellExperienceHost.exe',
      memoryMiB: null,
    });
    expect(r.notes).toBeUndefined();
  });

  it('row 5 cut short (its last cell removed): the 16 processes after it are still there, and a note says so', async () => {
    const table = apps();
    const cut = table[5].slice(0, table[5].lastIndexOf(','));
    expect(cut.split(',')).toHaveLength(7); // 8 columns in the header
    const broken = [...table.slice(0, 5), cut, ...table.slice(6)];
    const r = await readingsOf(`${broken.join('\n')}\n`);
    const pids = table.slice(1).map((row) => Number(row.split(', ')[5]));
    expect(r.processes.map((p) => p.pid)).toEqual([...pids.slice(0, 4), ...pids.slice(5)]);
    expect(r.notes).toEqual([
      'Skipped 1 row of an nvidia-smi compute-apps CSV table that did not fit its 8-column header (first: data row 5); the other 20 rows were read.',
    ]);
  });

  it('the last row cut off mid-line (a truncated paste) is counted as skipped', async () => {
    const table = apps();
    const last = table[table.length - 1];
    const truncated = [...table.slice(0, -1), last.slice(0, last.indexOf(', GPU-'))];
    const r = await readingsOf(truncated.join('\n'));
    expect(r.processes).toHaveLength(20);
    expect(r.notes).toEqual([
      'Skipped 1 row of an nvidia-smi compute-apps CSV table that did not fit its 8-column header (first: data row 21); the other 20 rows were read.',
    ]);
  });

  it('a header whose only row is cut short gives no process and says one row was skipped', async () => {
    const table = apps();
    const r = await readingsOf(`${table[0]}\n${table[1].slice(0, table[1].lastIndexOf(','))}\n`);
    expect(r.processes).toEqual([]);
    expect(r.notes).toEqual([
      'Skipped 1 row of an nvidia-smi compute-apps CSV table that did not fit its 8-column header (first: data row 1); the other 0 rows were read.',
    ]);
  });

  it('two GPU rows run together: the good rows around them are read', async () => {
    // Real header and row from the capture's load query-gpu section; the row appears three times, the
    // middle one joined to the next (newline removed), as a terminal wrap can do.
    const [header, row] = section(WINDOWS_2080, 'load :: query-gpu (csv, what the exporter parses)');
    const r = await readingsOf(`${header}\n${row}\n${row}${row}\n${row}\n`);
    expect(r.gpus.map((g) => g.index)).toEqual([0]); // every copy of the row is GPU 0
    expect(r.notes?.[0]).toMatch(
      /^Skipped 1 row of an nvidia-smi GPU CSV table that did not fit its \d+-column header \(first: data row 2\); the other 2 rows were read\.$/,
    );
  });

  it('a log line with commas right after the table is not taken for a broken row', async () => {
    const table = apps();
    const r = await readingsOf(`${table.join('\n')}\nEpoch 3:  45%|████▌     | 450/1000 [00:10<00:12, 45.00it/s]\n`);
    expect(r.processes).toHaveLength(21);
    expect(r.notes).toBeUndefined();
  });
});

describe('finished (accounted) apps are not current holders', () => {
  it('the real query-accounted-apps table with six finished processes lists none', async () => {
    const accounted = section(H200_MIG, 'load :: query-accounted-apps');
    expect(accounted).toHaveLength(7);
    const r = await readingsOf(`${accounted.join('\n')}\n`);
    expect(r.processes).toEqual([]);
  });

  it('compute-apps then accounted-apps with no blank line between: only the running ones', async () => {
    const running = section(H200_MIG, 'load :: query-compute-apps (per-process)');
    const accounted = section(H200_MIG, 'load :: query-accounted-apps');
    const r = await readingsOf(`${[...running, ...accounted].join('\n')}\n`);
    expect(r.processes.map((p) => [p.pid, p.memoryMiB])).toEqual([
      [12249, 2194],
      [12250, 1170],
      [12267, 13526],
    ]);
    expect(r.notes).toBeUndefined();
  });
});
