// `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` and `--query-compute-apps=...`.
// Columns are mapped by field name; nvidia-smi prints some aliases under another name in the header
// (gpu_name -> "name", used_memory -> "used_gpu_memory"), so both spellings map to one field.
// A cell that is not a value ([N/A], N/A, [Not Supported], ERR!, [GPU requires reset], "") is null.
import type { GpuReading, ProcessReading, Readings } from './types.js';
import { toCleanLines } from './lines.js';
import { skippedRowsNote, type ReadingNote } from './notes.js';
import { MAX_GPUS, MAX_PROCESSES } from './limits.js';
import { errorMarker, worstErrorMarker, isMissing, normalizeBusId, parseIntCell, parseMiBCell, parseNumberCell } from './cells.js';
import { gpuRow, gpuViolation, outOfRangeNote, processRow, processViolation } from './ranges.js';

export type SmiCsvKind = 'gpu' | 'apps';

export interface SmiCsvTable {
  kind: SmiCsvKind;
  /** Canonical field names, in column order. */
  fields: string[];
  rows: number;
  /** Data rows that did not fit the header (too few or too many cells, text in a number column), skipped. */
  skipped: number;
}

export interface SmiCsvResult {
  gpus: GpuReading[];
  processes: ProcessReading[];
  tables: SmiCsvTable[];
  /** One line per table that had rows not fitting its header, which were skipped, and per row left out for a value out of range. */
  notes: ReadingNote[];
}

/** The queries the SSH layer runs (with --format=csv,noheader,nounits). */
export const SMI_GPU_QUERY_FIELDS = ['index', 'uuid', 'name', 'memory.used', 'memory.total', 'utilization.gpu', 'temperature.gpu'];
export const SMI_APPS_QUERY_FIELDS = ['gpu_uuid', 'pid', 'used_memory', 'process_name'];

const GPU_ALIASES: Record<string, string> = {
  gpu_name: 'name',
  gpu_uuid: 'uuid',
  gpu_bus_id: 'pci.bus_id',
};
const APPS_ALIASES: Record<string, string> = { name: 'process_name', used_memory: 'used_gpu_memory' };

/**
 * Fields that make a header worth reading (a log line "loss, acc" is not a query header). A
 * compute-apps header needs its pid: "used_gpu_memory" alone would only give GPUs with no values.
 */
const VALUE_FIELDS = new Set(['memory.used', 'memory.total', 'memory.free', 'memory.reserved', 'utilization.gpu', 'temperature.gpu', 'pid']);
/** --query-accounted-apps lists finished processes too; those are not current GPU holders. */
const ACCOUNTED_FIELDS = new Set(['max_memory_usage', 'is_running', 'gpu_utilization', 'mem_utilization']);
const FIELD_NAME = /^[a-z][a-z0-9_.]{0,79}$/;
const MAX_CSV_LINE = 65536;

/** Lowercase, without the unit suffix nvidia-smi adds to the header ("memory.used [MiB]"). */
function bareField(raw: string): string {
  let f = raw.trim().toLowerCase();
  const bracket = f.indexOf('[');
  if (bracket >= 0) f = f.slice(0, bracket).trim();
  return f;
}

export function kindOfFields(fields: string[]): SmiCsvKind {
  return fields.map(bareField).includes('pid') ? 'apps' : 'gpu';
}

export function canonicalFields(fields: string[], kind: SmiCsvKind): string[] {
  const aliases = kind === 'apps' ? APPS_ALIASES : GPU_ALIASES;
  return fields.map((raw) => {
    const f = bareField(raw);
    return aliases[f] ?? f;
  });
}

/** Field names if the line is shaped like a query header (any query, any fields), else null. */
function headerLikeFields(line: string): string[] | null {
  // Every cell a lowercase field name; data rows start with a digit, "GPU-", "NVIDIA" ...
  if (line.length > MAX_CSV_LINE) return null;
  const fields = line.split(',').map(bareField);
  return fields.every((f) => FIELD_NAME.test(f)) ? fields : null;
}

/** Field names if the line is a query header we can use, else null. */
export function csvHeaderFields(line: string): string[] | null {
  const fields = headerLikeFields(line);
  if (!fields || !fields.some((f) => VALUE_FIELDS.has(f))) return null;
  if (fields.length === 1 && !fields[0].includes('.') && !fields[0].includes('_')) return null;
  if (fields.some((f) => ACCOUNTED_FIELDS.has(f))) return null;
  return fields;
}

export function parseSmiCsv(text: string): SmiCsvResult {
  return parseSmiCsvLines(toCleanLines(text));
}

/**
 * Every header-led CSV block in the lines, e.g. inside a longer paste. A table ends at a blank line,
 * at a line shaped like a header (another query's, or a field list pasted one name per line), or at
 * a line that is not a row. A row that does not fit the header (cut short, run together, text where
 * a number belongs) is skipped and counted, and the rows after it are still read.
 */
export function parseSmiCsvLines(lines: string[]): SmiCsvResult {
  const result: SmiCsvResult = { gpus: [], processes: [], tables: [], notes: [] };
  let i = 0;
  while (i < lines.length) {
    const header = csvHeaderFields(lines[i]);
    i++;
    if (!header) continue;
    const kind = kindOfFields(header);
    const fields = canonicalFields(header, kind);
    const read = rowReader(result, kind, fields);
    const full = () => (kind === 'apps' ? result.processes.length >= MAX_PROCESSES : result.gpus.length >= MAX_GPUS);
    let rows = 0;
    let skipped = 0;
    let firstSkipped = 0;
    // Misfit lines since the last good row (count, first one's row number and line): the table's only if a row follows.
    let pending = 0;
    let pendingRow = 0;
    let pendingAt = 0;
    let rowShape: string | null = null;
    const skipPending = () => {
      skipped += pending;
      firstSkipped ||= pendingRow;
      pending = 0;
    };
    for (let rowNumber = 1; i < lines.length && !full(); i++, rowNumber++) {
      const line = lines[i];
      if (line === '' || headerLikeFields(line)) break;
      const cells = splitRow(line, fields);
      if (cells && read(cells, rows)) {
        rows++;
        rowShape ??= cellShape(line);
        skipPending();
      } else if (fields.length > 1 && line.includes(',')) {
        if (pending++ === 0) [pendingRow, pendingAt] = [rowNumber, i];
      } else break;
    }
    // Misfits at the end belong to the table when it has no rows yet (a header, then a cut-off row) or
    // when they start like its rows (a truncated last row); a log line with commas after it does not.
    if (pending && (rowShape === null || cellShape(lines[pendingAt]) === rowShape)) skipPending();
    result.tables.push({ kind, fields, rows, skipped });
    if (skipped) {
      const what = kind === 'apps' ? 'compute-apps' : 'GPU';
      result.notes.push(skippedRowsNote({ skipped, what, columns: fields.length, first: firstSkipped, rows }));
    }
  }
  return result;
}

/** The first cell (of a line with a comma) without letters, digits and spaces: "2026/07/03 22:22:27.377" -> "//::.". */
function cellShape(line: string): string {
  return line.slice(0, line.indexOf(',')).replace(/[\dA-Za-z\s]/g, '');
}

/**
 * Headerless CSV (--format=csv,noheader[,nounits]) given the fields that were queried, in order.
 * Lines that do not fit the field list (warnings, a stray header) are skipped.
 */
export function parseSmiCsvWithFields(text: string, queriedFields: string[], kind: SmiCsvKind = kindOfFields(queriedFields)): SmiCsvResult {
  const fields = canonicalFields(queriedFields, kind);
  const result: SmiCsvResult = { gpus: [], processes: [], tables: [], notes: [] };
  const read = rowReader(result, kind, fields);
  let rows = 0;
  // A stray header or warning line has text where the pid, index or a number belongs: read() rejects it.
  for (const line of toCleanLines(text)) {
    if (line === '') continue;
    const cells = splitRow(line, fields);
    if (cells && read(cells, rows)) rows++;
  }
  result.tables.push({ kind, fields, rows, skipped: 0 });
  return result;
}

/** Fill each process's GPU index (and UUID) from the GPU list, matching by UUID or bus id. */
export function joinProcessesToGpus(processes: ProcessReading[], gpus: GpuReading[]): ProcessReading[] {
  const byUuid = new Map<string, GpuReading>();
  const byBus = new Map<string | null, GpuReading>();
  const byIndex = new Map<number | null, GpuReading>();
  for (const g of gpus) {
    if (g.uuid) byUuid.set(g.uuid.toLowerCase(), g);
    byBus.set(normalizeBusId(g.busId), g);
    byIndex.set(g.index, g);
  }
  return processes.map((p) => {
    const gpu =
      (p.gpuUuid ? byUuid.get(p.gpuUuid.toLowerCase()) : undefined) ??
      (p.gpuBusId ? byBus.get(normalizeBusId(p.gpuBusId)) : undefined) ??
      byIndex.get(p.gpuIndex);
    if (!gpu) return p;
    return { ...p, gpuIndex: p.gpuIndex ?? gpu.index, gpuUuid: p.gpuUuid ?? gpu.uuid };
  });
}

/** What the SSH layer's two noheader queries say, joined into one Readings. */
export function readingsFromSmiQueries(gpuCsv: string, appsCsv: string): Readings {
  const { gpus, notes: gpuNotes } = parseSmiCsvWithFields(gpuCsv, SMI_GPU_QUERY_FIELDS);
  const { processes, notes: appNotes } = parseSmiCsvWithFields(appsCsv, SMI_APPS_QUERY_FIELDS);
  const readings: Readings = { gpus, processes: joinProcessesToGpus(processes, gpus), hostMemory: null, smiErrors: [] };
  const notes = [...gpuNotes, ...appNotes];
  if (notes.length) readings.notes = notes;
  return readings;
}

/** Cells of a data row, or null when the line does not have the header's shape. */
function splitRow(line: string, fields: string[]): string[] | null {
  if (line.length > MAX_CSV_LINE) return null;
  const cells = line.split(','); // cells keep their spaces; every reader trims
  if (cells.length === fields.length) return cells;
  // nvidia-smi does not quote; a comma inside a process name yields extra cells.
  const nameAt = fields.indexOf('process_name');
  if (cells.length > fields.length && nameAt >= 0) {
    const extra = cells.length - fields.length;
    const name = cells.slice(nameAt, nameAt + extra + 1).join(',');
    return [...cells.slice(0, nameAt), name, ...cells.slice(nameAt + extra + 1)];
  }
  return null;
}

type RowReader = (cells: string[], rowNumber: number) => boolean;

/** A reader for one table's rows; column positions are looked up once per table, not per row. */
function rowReader(result: SmiCsvResult, kind: SmiCsvKind, fields: string[]): RowReader {
  const col = (field: string) => fields.indexOf(field);
  // A column not queried is cells[-1], undefined: a missing value.
  const text = (cells: string[], at: number): string | null => (isMissing(cells[at]) ? null : cells[at].trim());
  // Text where a number belongs ("power.draw" under memory.used) means the line is not this table's row.
  const notANumber = (cells: string[], at: number) => !isMissing(cells[at]) && parseNumberCell(cells[at]) === null;
  if (kind === 'apps') {
    const [pidAt, uuidAt, busAt, nameAt, memAt] = ['pid', 'gpu_uuid', 'gpu_bus_id', 'process_name', 'used_gpu_memory'].map(col);
    return (cells) => {
      const pid = parseIntCell(cells[pidAt]);
      if (pid === null || notANumber(cells, memAt) || result.processes.length >= MAX_PROCESSES) return false;
      const proc: ProcessReading = {
        gpuIndex: null,
        gpuUuid: text(cells, uuidAt),
        gpuBusId: text(cells, busAt),
        pid,
        name: text(cells, nameAt),
        memoryMiB: parseMiBCell(cells[memAt]),
      };
      // A row of the table all the same (it fits the header), left out for its impossible value.
      const bad = processViolation(proc);
      if (bad) result.notes.push(outOfRangeNote('nvidia-smi', processRow(proc), bad));
      else result.processes.push(proc);
      return true;
    };
  }
  const [indexAt, nameAt, uuidAt, busAt, usedAt, totalAt, freeAt, reservedAt, utilAt, tempAt] = [
    'index',
    'name',
    'uuid',
    'pci.bus_id',
    'memory.used',
    'memory.total',
    'memory.free',
    'memory.reserved',
    'utilization.gpu',
    'temperature.gpu',
  ].map(col);
  const numberAts = [usedAt, totalAt, freeAt, reservedAt, utilAt, tempAt];
  const mib = (cells: string[], at: number) => parseMiBCell(cells[at]);
  const num = (cells: string[], at: number) => parseNumberCell(cells[at]);
  return (cells, rowNumber) => {
    const index = indexAt < 0 ? rowNumber : parseIntCell(cells[indexAt]);
    if (index === null || numberAts.some((at) => notANumber(cells, at)) || result.gpus.length >= MAX_GPUS) return false;
    const errorAt = fields.map((_, i) => i).filter((i) => errorMarker(cells[i]) !== null);
    const errorFields = errorAt.map((i) => fields[i]);
    // ERR! in power or clocks alone is usually a transient sensor read, not a failed GPU.
    const faultCells = errorAt.filter((i) => !fields[i].startsWith('power.') && !fields[i].startsWith('clocks')).map((i) => cells[i]);
    const gpu: GpuReading = {
      index,
      name: text(cells, nameAt),
      uuid: text(cells, uuidAt),
      busId: text(cells, busAt),
      memoryUsedMiB: mib(cells, usedAt),
      memoryTotalMiB: mib(cells, totalAt),
      utilizationPct: num(cells, utilAt),
      temperatureC: num(cells, tempAt),
      error: worstErrorMarker(faultCells),
    };
    if (freeAt >= 0) gpu.memoryFreeMiB = mib(cells, freeAt);
    if (reservedAt >= 0) gpu.memoryReservedMiB = mib(cells, reservedAt);
    if (errorFields.length) gpu.errorFields = errorFields;
    const bad = gpuViolation(gpu);
    if (bad) result.notes.push(outOfRangeNote('nvidia-smi', gpuRow(gpu), bad));
    else result.gpus.push(gpu);
    return true;
  };
}
