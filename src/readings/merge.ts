// Combining what several outputs in one paste say (a table, a CSV query, free) into one Readings.
// GPUs are matched by index and processes by (GPU, PID); a later source fills or replaces fields
// but never overwrites a value with null.
import type { GpuReading, HostMemoryReading, ProcessReading, Readings } from './types.js';
import { joinProcessesToGpus } from './nvidia-smi-csv.js';
import type { ReadingNote } from './notes.js';

export interface ReadingsPart {
  gpus?: GpuReading[];
  processes?: ProcessReading[];
  hostMemory?: HostMemoryReading | null;
  smiErrors?: string[];
  notes?: ReadingNote[];
}

export function mergeReadings(parts: ReadingsPart[]): Readings {
  const gpus = new Map<number, GpuReading>();
  const processes: ProcessReading[] = [];
  let hostMemory: HostMemoryReading | null = null;
  const smiErrors: string[] = [];
  const notes: ReadingNote[] = [];
  for (const part of parts) {
    for (const g of part.gpus ?? []) {
      const seen = gpus.get(g.index);
      gpus.set(g.index, seen ? fillFrom(seen, g) : g);
    }
    for (const p of part.processes ?? []) processes.push(p);
    if (part.hostMemory) hostMemory = part.hostMemory;
    for (const e of part.smiErrors ?? []) if (!smiErrors.includes(e)) smiErrors.push(e);
    notes.push(...(part.notes ?? []));
  }
  const gpuList = [...gpus.values()].sort((a, b) => a.index - b.index);
  const merged: Readings = { gpus: gpuList, processes: dedupeProcesses(joinProcessesToGpus(processes, gpuList)), hostMemory, smiErrors };
  if (notes.length) merged.notes = notes;
  return merged;
}

function dedupeProcesses(processes: ProcessReading[]): ProcessReading[] {
  const byKey = new Map<string, ProcessReading>();
  for (const p of processes) {
    const key = `${p.gpuIndex ?? p.gpuUuid?.toLowerCase() ?? '?'}:${p.pid}`;
    const seen = byKey.get(key);
    byKey.set(key, seen ? fillFrom(seen, p) : p);
  }
  return [...byKey.values()];
}

/** `base` with every non-empty field of `update` copied over it. */
function fillFrom<T extends object>(base: T, update: T): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(update)) {
    if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out as T;
}
