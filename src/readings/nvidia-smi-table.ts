// The default `nvidia-smi` table, drivers 384 .. 590. Rows are recognised by their shape, not by
// headers, so fragments (one GPU block pasted alone) and tables inside longer logs still parse:
//   GPU block, first row:  |   0  NVIDIA A30   Off  | 00000000:01:00.0 Off |     0 |
//              second row: | N/A   26C  P0 29W / 165W |  0MiB / 24576MiB |  0%  Default |
//   MIG device row:        |  0    2   0   0  |  26MiB / 40448MiB | 60  0 | ... |
//   process row (only after a "Processes:" header, one wide cell):
//                          |    0   N/A  N/A   915920   C   python   84464MiB |
import type { GpuReading, ProcessReading } from './types.js';
import { MAX_GPUS, MAX_PROCESSES, MAX_ROW_CHARS } from './limits.js';
import { firstNonSpace, lastNonSpace, tokens, toCleanLines } from './lines.js';
import { errorMarker, isMissing, parseIntCell } from './cells.js';
import { gpuRow, gpuViolation, migViolation, outOfRangeNote, processRow, processViolation } from './ranges.js';
import type { ReadingNote } from './notes.js';

export interface SmiTableResult {
  gpus: GpuReading[];
  processes: ProcessReading[];
  /** Rows left out for a value out of range (a GPU, MIG device or process), one line each. */
  notes: ReadingNote[];
}

type MigDevice = NonNullable<GpuReading['mig']>[number];

const BUS_ID = /[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]/;
const MEMORY_PAIR = /(\d+)\s*MiB\s*\/\s*(\d+)\s*MiB/;
const PERSISTENCE = new Set(['On', 'Off', 'N/A', 'ERR!', 'WDDM', 'TCC', 'MCDM']);
const PROCESS_TYPE = /^[CGM](?:\+[CGM]){0,2}$/;
/** Markers that mean the whole GPU is in trouble, wherever they appear in its block. */
const GPU_FAULTS = ['GPU requires reset', 'GPU is lost', 'Unknown Error'];
/** An ERR! in one of these means the GPU is not reporting; ERR! in power alone is usually transient. */
const CORE_FIELDS = new Set(['name', 'memory', 'utilization', 'temperature', 'fan']);

export function parseSmiTable(text: string): SmiTableResult {
  return parseSmiTableLines(toCleanLines(text));
}

export function parseSmiTableLines(lines: string[]): SmiTableResult {
  const gpus: GpuReading[] = [];
  const processes: ProcessReading[] = [];
  const notes: ReadingNote[] = [];
  const migByGpu = new Map<number, MigDevice[]>();
  let section: 'none' | 'processes' = 'none';
  let awaitingSecondRow: GpuReading | null = null;

  for (const line of lines) {
    const row = tableRow(line);
    if (row === null) {
      // A blank line inside a pasted process table (Markdown adds one after the header) does not end it.
      if (line.trim() !== '') section = 'none';
      awaitingSecondRow = null;
      continue;
    }
    if (isBorder(row)) {
      awaitingSecondRow = null;
      continue;
    }
    const cells = row.slice(1, row.endsWith('|') ? -1 : undefined).split('|');
    if (cells.length === 1) {
      const cell = cells[0].trim();
      if (cell.startsWith('Processes:')) section = 'processes';
      else if (cell.startsWith('MIG devices:') || cell.startsWith('NVIDIA-SMI ')) section = 'none';
      else if (section === 'processes' && processes.length < MAX_PROCESSES) {
        const p = parseProcessRow(cell);
        const bad = p && processViolation(p);
        if (bad) notes.push(outOfRangeNote('nvidia-smi', processRow(p), bad));
        else if (p) processes.push(p);
      }
      continue;
    }
    const gpu = gpus.length < MAX_GPUS ? parseGpuFirstRow(cells) : null;
    if (gpu) {
      gpus.push(gpu);
      migByGpu.delete(gpu.index); // a second snapshot in the same paste starts over
      awaitingSecondRow = gpu;
      continue;
    }
    if (awaitingSecondRow) {
      applyGpuSecondRow(awaitingSecondRow, cells);
      awaitingSecondRow = null;
      continue;
    }
    const mig = parseMigRow(cells);
    const badMig = mig && migViolation(mig.device);
    if (badMig) notes.push(outOfRangeNote('nvidia-smi', `${gpuRow({ index: mig.gpuIndex })} MIG ${mig.device.migIndex ?? '?'}`, badMig));
    else if (mig) {
      const list = migByGpu.get(mig.gpuIndex) ?? [];
      list.push(mig.device);
      migByGpu.set(mig.gpuIndex, list);
    }
  }
  for (const gpu of gpus) {
    const mig = migByGpu.get(gpu.index);
    if (mig) gpu.mig = mig;
    gpu.error = gpuError(gpu);
    if (gpu.errorFields!.length === 0) delete gpu.errorFields;
  }
  // A GPU's values come from two rows: it is checked once both are read.
  const kept = gpus.filter((gpu) => {
    const bad = gpuViolation(gpu);
    if (bad) notes.push(outOfRangeNote('nvidia-smi', gpuRow(gpu), bad));
    return !bad;
  });
  return { gpus: kept, processes, notes };
}

/** The table part of a line ("|...|" or "+---+"), allowing a short log prefix before it. */
function tableRow(line: string): string | null {
  if (line.length > MAX_ROW_CHARS) return null;
  const end = lastNonSpace(line);
  if (end < 0 || (line[end] !== '|' && line[end] !== '+')) return null;
  const start = firstNonSpace(line);
  if (line[start] === '|' || line[start] === '+') return line.slice(start, end + 1);
  // e.g. "[rank0]: |   0  NVIDIA ..." or a timestamped log line.
  const bar = line.indexOf('|');
  return bar > 0 && bar <= 200 ? line.slice(bar, end + 1) : null;
}

function isBorder(row: string): boolean {
  if (row.length < 3) return false;
  for (let i = 0; i < row.length; i++) {
    const c = row[i];
    if (c !== '-' && c !== '=' && c !== '+' && c !== '|') return false;
  }
  return row[1] === '-' || row[1] === '=';
}

function newGpu(index: number): GpuReading {
  return {
    index,
    name: null,
    uuid: null,
    busId: null,
    memoryUsedMiB: null,
    memoryTotalMiB: null,
    utilizationPct: null,
    temperatureC: null,
    error: null,
    errorFields: [],
  };
}

/** "|   0  NVIDIA H100 80GB HBM3   On  |   00000000:00:09.0 Off |   On |" */
function parseGpuFirstRow(cells: string[]): GpuReading | null {
  if (cells.length < 3) return null;
  const busMatch = BUS_ID.exec(cells[1]);
  if (!busMatch) return null;
  const t = tokens(cells[0]);
  const index = parseIntCell(t[0]);
  if (index === null || t.length < 2) return null;
  const gpu = newGpu(index);
  const nameTokens = t.slice(1);
  if (nameTokens.length > 1 && PERSISTENCE.has(nameTokens[nameTokens.length - 1])) nameTokens.pop();
  const name = nameTokens.join(' ');
  if (errorMarker(name)) gpu.errorFields!.push('name');
  gpu.name = isMissing(name) || name === '' ? null : name;
  gpu.busId = busMatch[0];
  const ecc = tokens(cells[2]);
  if (ecc.includes('ERR!')) gpu.errorFields!.push('ecc');
  noteFaults(gpu, cells);
  return gpu;
}

/** "| N/A   42C    P0   98W /  700W |   59MiB /  81559MiB |   N/A   Default |" */
function applyGpuSecondRow(gpu: GpuReading, cells: string[]): void {
  const [fan, temp, perf, ...power] = tokens(cells[0] ?? '');
  if (fan === 'ERR!') gpu.errorFields!.push('fan');
  if (temp === 'ERR!') gpu.errorFields!.push('temperature');
  else if (temp && /^\d{1,4}C$/.test(temp)) gpu.temperatureC = Number(temp.slice(0, -1));
  if (perf === 'ERR!') gpu.errorFields!.push('perf');
  if (power.includes('ERR!')) gpu.errorFields!.push('power');

  const memory = cells[1] ?? '';
  const pair = MEMORY_PAIR.exec(memory);
  if (pair) {
    gpu.memoryUsedMiB = Number(pair[1]);
    gpu.memoryTotalMiB = Number(pair[2]);
  } else if (memory.includes('ERR!')) gpu.errorFields!.push('memory');

  const util = tokens(cells[2] ?? '')[0];
  if (util === 'ERR!') gpu.errorFields!.push('utilization');
  else if (util && /^\d{1,3}%$/.test(util)) gpu.utilizationPct = Number(util.slice(0, -1));
  noteFaults(gpu, cells);
}

function noteFaults(gpu: GpuReading, cells: string[]): void {
  for (const cell of cells) {
    for (const fault of GPU_FAULTS) {
      if (cell.includes(fault) && !gpu.errorFields!.includes(fault)) gpu.errorFields!.push(fault);
    }
  }
}

function gpuError(gpu: GpuReading): string | null {
  const fields = gpu.errorFields ?? [];
  const fault = fields.find((f) => GPU_FAULTS.includes(f));
  if (fault) return `[${fault}]`;
  return fields.some((f) => CORE_FIELDS.has(f)) ? 'ERR!' : null;
}

/** "|  0    2   0   0  |   26MiB / 40448MiB  | ..." (GPU, GI, CI, MIG device). */
function parseMigRow(cells: string[]): { gpuIndex: number; device: MigDevice } | null {
  const t = tokens(cells[0]);
  if (t.length !== 4) return null;
  const gpuIndex = parseIntCell(t[0]);
  if (gpuIndex === null || !t.every((x) => x === 'N/A' || parseIntCell(x) !== null)) return null;
  const pair = MEMORY_PAIR.exec(cells[1] ?? '');
  const num = (x: string) => parseIntCell(x);
  return {
    gpuIndex,
    device: {
      gi: num(t[1]),
      ci: num(t[2]),
      migIndex: num(t[3]),
      memoryUsedMiB: pair ? Number(pair[1]) : null,
      memoryTotalMiB: pair ? Number(pair[2]) : null,
    },
  };
}

/**
 * "0   N/A  N/A   915920   C   ...envs/vllm/bin/python   84464MiB" (GI/CI since driver 450)
 * "0     29720      C   python3     8933MiB" (older). Rows like "0  Not Supported" are skipped.
 */
function parseProcessRow(cell: string): ProcessReading | null {
  const t = tokens(cell);
  if (t.length < 4) return null;
  const gpuIndex = parseIntCell(t[0]);
  if (gpuIndex === null) return null;
  let typeAt = -1;
  for (let i = 2; i <= 4 && i < t.length; i++) {
    if (PROCESS_TYPE.test(t[i]) && parseIntCell(t[i - 1]) !== null) {
      typeAt = i;
      break;
    }
  }
  if (typeAt < 0) return null;
  const rest = t.slice(typeAt + 1);
  let memoryMiB: number | null = null;
  const last = rest[rest.length - 1];
  if (last !== undefined && /^\d+MiB$/.test(last)) {
    memoryMiB = Number(last.slice(0, -3));
    rest.pop();
  } else if (last === 'N/A' || last === 'ERR!' || last === '[N/A]') {
    rest.pop();
  } else if (last === 'Supported' && rest[rest.length - 2] === 'Not') {
    rest.length -= 2;
  }
  const name = rest.join(' ');
  const proc: ProcessReading = { gpuIndex, gpuUuid: null, pid: parseIntCell(t[typeAt - 1])!, name: name === '' ? null : name, memoryMiB, type: t[typeAt] };
  if (typeAt === 4) {
    proc.gi = parseIntCell(t[1]);
    proc.ci = parseIntCell(t[2]);
  }
  return proc;
}
