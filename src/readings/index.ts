// parseReadings: every nvidia-smi / free output inside a paste (a training log, a chat message),
// merged into one Readings. Linear in the input: the paste is split and cleaned once, and each
// parser makes one pass over the lines with anchored, bounded patterns.
import { emptyReadings, type Readings } from './types.js';
import { toCleanLines } from './lines.js';
import { mergeReadings, type ReadingsPart } from './merge.js';
import { parseSmiTableLines } from './nvidia-smi-table.js';
import { parseSmiCsvLines } from './nvidia-smi-csv.js';
import { parseSmiXml } from './nvidia-smi-xml.js';
import { findSmiErrorsInLines } from './nvidia-smi-errors.js';
import { parseFreeLines } from './free.js';
import type { ReadingNote } from './notes.js';

export type { Readings, GpuReading, ProcessReading, HostMemoryReading } from './types.js';
export { emptyReadings } from './types.js';
export { parseSmiTable } from './nvidia-smi-table.js';
export {
  parseSmiCsv,
  parseSmiCsvWithFields,
  joinProcessesToGpus,
  readingsFromSmiQueries,
  SMI_GPU_QUERY_FIELDS,
  SMI_APPS_QUERY_FIELDS,
} from './nvidia-smi-csv.js';
export { parseSmiXml } from './nvidia-smi-xml.js';
export { findSmiErrors } from './nvidia-smi-errors.js';
export { parseFree } from './free.js';
export { mergeReadings } from './merge.js';

export function parseReadings(text: string): Readings {
  let lines: string[];
  try {
    lines = toCleanLines(typeof text === 'string' ? text : String(text ?? ''));
  } catch {
    return emptyReadings();
  }
  // Each parser runs on its own so that a bug in one cannot lose what the others found.
  const parts: ReadingsPart[] = [
    attempt(() => parseSmiTableLines(lines)),
    ...attempt(() => xmlRegions(lines).map(parseSmiXml), []),
    attempt(() => parseSmiCsvLines(lines)),
    attempt(() => {
      const notes: ReadingNote[] = [];
      return { hostMemory: parseFreeLines(lines, undefined, notes), notes };
    }),
    attempt(() => ({ smiErrors: findSmiErrorsInLines(lines) })),
  ];
  return attempt(() => mergeReadings(parts), emptyReadings());
}

function attempt<T>(fn: () => T, fallback?: T): T {
  try {
    return fn();
  } catch {
    return (fallback ?? {}) as T;
  }
}

/** Each `<nvidia_smi_log> ... </nvidia_smi_log>` document in the paste, as text. */
function xmlRegions(lines: string[]): string[] {
  const regions: string[] = [];
  let start = -1;
  for (let i = 0; i < lines.length; i++) {
    if (start < 0 && lines[i].includes('<nvidia_smi_log')) start = i;
    if (start >= 0 && lines[i].includes('</nvidia_smi_log>')) {
      regions.push(lines.slice(start, i + 1).join('\n'));
      start = -1;
    }
  }
  if (start >= 0) regions.push(lines.slice(start).join('\n')); // truncated paste
  return regions;
}
