// Range checks on parsed rows: a GPU, process, MIG device or `free` row with a value no real tool prints
// (see limits.ts) is left out by its parser and named in the readings' notes; the other rows stay.
import type { GpuReading, HostMemoryReading, ProcessReading } from './types.js';
import { MAX_GPU_INDEX, MAX_GPU_MEMORY_MIB, MAX_HOST_MEMORY_BYTES, MAX_MIG_ID, MAX_PID, MAX_UTILIZATION_PCT, TEMPERATURE_RANGE_C } from './limits.js';
import type { ReadingNote } from './notes.js';

/** One value outside its range: which field, what it was, and the range it must lie in. */
export interface RangeViolation {
  field: string;
  value: number;
  min: number;
  max: number;
  unit: string;
}

type Check = [field: string, value: number | null | undefined, min: number, max: number, unit: string];

function firstViolation(checks: Check[]): RangeViolation | null {
  for (const [field, value, min, max, unit] of checks) {
    if (value === null || value === undefined) continue;
    // NaN fails both comparisons: it is out of range too.
    if (!(value >= min && value <= max)) return { field, value, min, max, unit };
  }
  return null;
}

const mib = (field: string, value: number | null | undefined): Check => [field, value, 0, MAX_GPU_MEMORY_MIB, 'MiB'];

export function gpuViolation(g: GpuReading): RangeViolation | null {
  return firstViolation([
    ['index', g.index, 0, MAX_GPU_INDEX, ''],
    mib('memory.used', g.memoryUsedMiB),
    mib('memory.total', g.memoryTotalMiB),
    mib('memory.free', g.memoryFreeMiB),
    mib('memory.reserved', g.memoryReservedMiB),
    ['utilization.gpu', g.utilizationPct, 0, MAX_UTILIZATION_PCT, '%'],
    ['temperature.gpu', g.temperatureC, TEMPERATURE_RANGE_C[0], TEMPERATURE_RANGE_C[1], 'C'],
  ]);
}

export function processViolation(p: ProcessReading): RangeViolation | null {
  return firstViolation([
    ['pid', p.pid, 1, MAX_PID, ''],
    ['gpu', p.gpuIndex, 0, MAX_GPU_INDEX, ''],
    mib('used_memory', p.memoryMiB),
    ['gi', p.gi, 0, MAX_MIG_ID, ''],
    ['ci', p.ci, 0, MAX_MIG_ID, ''],
  ]);
}

export function migViolation(m: NonNullable<GpuReading['mig']>[number]): RangeViolation | null {
  return firstViolation([
    ['gi', m.gi, 0, MAX_MIG_ID, ''],
    ['ci', m.ci, 0, MAX_MIG_ID, ''],
    ['mig', m.migIndex, 0, MAX_MIG_ID, ''],
    mib('memory.used', m.memoryUsedMiB),
    mib('memory.total', m.memoryTotalMiB),
  ]);
}

export function hostMemoryViolation(m: HostMemoryReading): RangeViolation | null {
  const bytes = (field: string, value: number | null | undefined): Check => [field, value, 0, MAX_HOST_MEMORY_BYTES, 'bytes'];
  return firstViolation([
    bytes('total', m.totalBytes),
    bytes('used', m.usedBytes),
    bytes('free', m.freeBytes),
    bytes('available', m.availableBytes),
    bytes('shared', m.sharedBytes),
    bytes('buff/cache', m.buffCacheBytes),
    bytes('swap_total', m.swapTotalBytes),
    bytes('swap_used', m.swapUsedBytes),
  ]);
}

/** How a row is named in its note: "GPU 3", "pid 1234", "GPU 0 MIG 2". */
export const gpuRow = (g: Pick<GpuReading, 'index'>) => `GPU ${g.index}`;
export const processRow = (p: Pick<ProcessReading, 'pid'>) => `pid ${p.pid}`;

/** The note naming a row left out (locales/*.json's note.readings.outOfRange), as data: the reply renders it. */
export function outOfRangeNote(tool: 'nvidia-smi' | 'free', row: string, v: RangeViolation): ReadingNote {
  const unit = v.unit ? ` ${v.unit}` : '';
  return {
    key: 'note.readings.outOfRange',
    params: {
      tool,
      row,
      field: v.field,
      value: `${Number.isFinite(v.value) ? String(v.value) : 'NaN'}${unit}`,
      range: `${v.min}..${v.max}${unit}`,
    },
  };
}
