// A pasted nvidia-smi "Processes:" table (its fixed row layouts: "| GPU PID Type name usage |" up to driver ~440,
// "| GPU GI CI PID Type name usage |" from 450) read as who held each GPU (smi-processes.ts, holder-listed.ts), when the
// error itself states nothing of this process: several workers of one pre-fork server (uwsgi, gunicorn, celery) are the
// service's own copies of its model (run fewer workers; nothing foreign to stop), and GiBs listed on the run's GPU
// otherwise belong to other processes (free or move the GPU). Real threads (blind8 read split) and synthetic tables
// written from nvidia-smi's layouts (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { readSmiProcesses } from '../../src/diagnose/smi-processes.js';
import { LogText } from '../../src/diagnose/normalize.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const HEAD_NEW = [
  '| Processes:                                                                  |',
  '|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |',
  '|        ID   ID                                                   Usage      |',
  '|=============================================================================|',
];
const rowNew = (gpu: number, pid: number, name: string, mib: number) =>
  `|    ${gpu}   N/A  N/A    ${String(pid).padStart(6)}      C   ${name.padEnd(30)}${String(mib).padStart(6)}MiB |`;
const rowOld = (gpu: number, pid: number, name: string, mib: number) => `|    ${gpu}     ${pid}      C   ${name.padEnd(40)}${String(mib).padStart(6)}MiB |`;

describe('real threads (blind8)', () => {
  it('5651: 7.6 GiB listed on GPU 0 beside a figure-less runtime OOM: another process holds it; the batch is not first', async () => {
    const d = await firstOfCase('blind8', '5651');
    expect(d?.facts.holder).toBe('other_processes');
    expect(first(d)).toMatch(/^Another process holds GPU memory/);
  });
  it('5656: two uwsgi workers hold the P4: run one worker, and no other process is blamed', async () => {
    const d = await firstOfCase('blind8', '5656');
    expect(d?.rule).toBe('mxnet-cuda-oom');
    expect(first(d)).toMatch(/2 × uwsgi[\s\S]*one worker process/);
    expect(first(d)).not.toMatch(/another process|other process|kill/i);
  });
});

describe('the row layouts (synthetic)', () => {
  it('reads the old and the new layout, tabs, and paths, and skips a WDDM "N/A" usage', () => {
    const rows = readSmiProcesses(
      new LogText(
        [
          rowOld(0, 4242, 'python', 10240),
          rowNew(1, 977, '/usr/bin/python3', 2048),
          '|    0   N/A  N/A      3240\t C   uwsgi                            3233MiB |',
          '|    0   N/A  N/A      1204    C+G   ...\\Chrome\\Application\\chrome.exe      N/A      |',
        ].join('\n'),
      ),
    );
    expect(rows).toEqual([
      { gpu: 0, pid: 4242, name: 'python', usedMiB: 10240 },
      { gpu: 1, pid: 977, name: 'python3', usedMiB: 2048 },
      { gpu: 0, pid: 3240, name: 'uwsgi', usedMiB: 3233 },
    ]);
  });
  it.each([
    ['gunicorn', 'gunicorn'],
    ['celery', 'celery'],
  ])('%s workers holding the card under a CUDA OOM: fewer workers, not another process', async (_n, name) => {
    const paste = [
      'RuntimeError: CUDA error: out of memory',
      ...HEAD_NEW,
      rowNew(0, 101, name, 7000),
      rowNew(0, 102, name, 7000),
      rowNew(0, 103, name, 700),
    ].join('\n');
    const d = await diagnosePaste(paste);
    expect(first(d)).toMatch(/one worker process/);
    expect(first(d)).not.toMatch(/Another process/);
  });
  it('another job listed on the run GPU beside a figure-less OOM: free or move the GPU (old layout)', async () => {
    const paste = [
      'RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58',
      rowOld(0, 5150, 'python', 11200),
    ].join('\n');
    const d = await diagnosePaste(paste);
    expect(d?.facts.holder).toBe('other_processes');
    expect(first(d)).toMatch(/^Another process holds GPU memory/);
  });
  it('the listed processes are on another GPU than the one that failed: no verdict from them', async () => {
    const paste = ['ResourceExhaustedError: Out of memory error on GPU 1.', ...HEAD_NEW, rowNew(0, 5150, 'python', 11200)].join('\n');
    const d = await diagnosePaste(paste);
    expect(String(d?.facts.holderWhy as string | undefined)).not.toMatch(/process table/);
  });
  it('an error with its own figures decides, not the table', async () => {
    const paste = [
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.50 GiB memory in use. Of the allocated memory 21.00 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.',
      ...HEAD_NEW,
      rowNew(0, 777, 'python', 23040),
    ].join('\n');
    const d = await diagnosePaste(paste);
    expect(String(d?.facts.holderWhy as string | undefined)).not.toMatch(/process table/);
  });
});

// `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv`: a header of nvidia-smi's field names, then
// one row a process. The query names no GPU index: rows count only when they are of one device (one gpu_uuid) or the
// command above picked the device (-i N). Synthetic, written from nvidia-smi's field names (said so).
describe('the compute-apps CSV (synthetic)', () => {
  const OOM = 'RuntimeError: CUDA error: out of memory';
  it('one device by its uuid: 21 GiB listed beside a figure-less OOM is other processes', async () => {
    const paste = [OOM, 'gpu_uuid, pid, process_name, used_gpu_memory [MiB]', 'GPU-4f31bb83-f8dc, 1328668, /usr/local/bin/python3.10, 21504 MiB'].join('\n');
    const d = await diagnosePaste(paste);
    expect(d?.facts.holder).toBe('other_processes');
  });
  it('the device picked with -i, nounits: read', () => {
    const rows = readSmiProcesses(
      new LogText(
        [
          '$ nvidia-smi -i 3 --query-compute-apps=pid,process_name,used_memory --format=csv,nounits',
          'pid, process_name, used_gpu_memory [MiB]',
          '27220, ollama.exe, 12497',
        ].join('\n'),
      ),
    );
    expect(rows).toEqual([{ gpu: 3, pid: 27220, name: 'ollama.exe', usedMiB: 12497 }]);
  });
  it('no device column and no -i: the rows may be any GPU, so they decide nothing', async () => {
    const paste = [OOM, 'pid, process_name, used_gpu_memory [MiB]', '3858903, VLLM::EngineCore, 16265 MiB'].join('\n');
    const d = await diagnosePaste(paste);
    expect(String(d?.facts.holderWhy as string | undefined)).not.toMatch(/process table/);
  });
  it('two gunicorn workers of one device: fewer workers', async () => {
    const paste = [OOM, 'gpu_uuid, pid, process_name, used_gpu_memory [MiB]', 'GPU-aa, 101, gunicorn, 7000 MiB', 'GPU-aa, 102, gunicorn, 7000 MiB'].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(/one worker process/);
  });
});
