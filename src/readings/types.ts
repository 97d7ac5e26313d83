// Readings: what pasted or fetched nvidia-smi / free output says, in one platform-neutral shape.
// A value the tool did not report ([N/A], [Not Supported], ERR!, ...) is null, never 0.
import type { ReadingNote } from './notes.js';

export interface GpuReading {
  index: number;
  name: string | null;
  uuid: string | null;
  busId: string | null;
  memoryUsedMiB: number | null;
  memoryTotalMiB: number | null;
  utilizationPct: number | null;
  temperatureC: number | null;
  /** Raw marker when the GPU reported an error instead of values, e.g. "ERR!", "[GPU requires reset]". */
  error: string | null;
  /** MIG instances on this GPU, when the table or query lists them. */
  mig?: { gi: number | null; ci: number | null; migIndex: number | null; memoryUsedMiB: number | null; memoryTotalMiB: number | null }[];
  /** memory.free / fb_memory_usage.free, when reported (CSV queries may omit memory.total). */
  memoryFreeMiB?: number | null;
  /** memory.reserved (driver-reserved framebuffer, drivers >= 510), when reported. */
  memoryReservedMiB?: number | null;
  /** Which fields showed an error marker, e.g. ["power"] for a transient "ERR! / 250W". */
  errorFields?: string[];
}

export interface ProcessReading {
  gpuIndex: number | null;
  gpuUuid: string | null;
  /** PCI bus id of the GPU, when the source gives it (used to join to GPUs). */
  gpuBusId?: string | null;
  pid: number;
  name: string | null;
  /** GPU memory of this process; null when the driver does not report it ("N/A", "[Not Supported]"). */
  memoryMiB: number | null;
  /** MIG GPU instance / compute instance, when the table lists them (null: "N/A"). */
  gi?: number | null;
  ci?: number | null;
  /** "C" compute, "G" graphics, "C+G", "M" (MPS) ..., when the table lists it. */
  type?: string | null;
}

export interface HostMemoryReading {
  totalBytes: number;
  usedBytes: number | null;
  availableBytes: number | null;
  freeBytes: number | null;
  swapTotalBytes: number | null;
  swapUsedBytes: number | null;
  sharedBytes?: number | null;
  /** buff/cache (or buffers + cached in old and wide layouts). */
  buffCacheBytes?: number | null;
  /** Size of one step of the printed total (1 KiB for plain free, 0.1 GiB for "3.9Gi", 1 GiB for -g). */
  resolutionBytes?: number;
  /** True when the paste had no `free -m`/`-g`/... command line and the unit of bare numbers was inferred from their size. */
  unitInferred?: boolean;
}

export interface Readings {
  gpus: GpuReading[];
  processes: ProcessReading[];
  hostMemory: HostMemoryReading | null;
  /** nvidia-smi error texts found (driver not loaded, NVML mismatch, no devices, ...). */
  smiErrors: string[];
  /** What was skipped while reading and why (rows that did not fit their header), when anything was. */
  notes?: ReadingNote[];
}

export const emptyReadings = (): Readings => ({ gpus: [], processes: [], hostMemory: null, smiErrors: [] });
