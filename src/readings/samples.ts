// What the leak watch records every ~60 s, one shape for every source that yields it (the sampler
// over SSH and localhost, Prometheus history): readings with a time and a host, no i18n, no imports.

/** Timestamps are ISO-8601 strings (as sampled) or epoch milliseconds (cheaper to parse in bulk). */
export type Timestamp = string | number;

/**
 * GPU-level sample, one per GPU per poll (`nvidia-smi --query-gpu=index,memory.total,memory.used,utilization.gpu`).
 * Carries no pid.
 */
export interface GpuSample {
  ts: Timestamp;
  host: string;
  gpu: number;
  gpuTotalMiB: number;
  gpuUsedMiB: number;
  /** GPU-wide utilisation: nvidia-smi does not split it per process. Null when not reported. */
  utilizationPct: number | null;
  pid?: undefined;
  kind?: undefined;
}

/** One `nvidia-smi --query-compute-apps` row joined with its GPU's row and `ps` (user, start, command). */
export interface ProcessSample extends Omit<GpuSample, 'pid'> {
  pid: number;
  /** Process start time: with host and pid it names the process, so a reused pid is a new process. */
  processStart: Timestamp;
  user: string;
  command: string;
  /** used_memory of this process; null when the driver reports [N/A] (then the sample is unknown, not 0). */
  processMiB: number | null;
}

/**
 * Host RAM sample from `free -b`, one per host per poll:
 * `{"ts":"2026-11-20T09:00:00Z","host":"gpu1","kind":"host","memTotalBytes":540000000000,"memAvailableBytes":120000000000}`.
 * memAvailableBytes is free's "available" column (free + reclaimable cache), the kernel's own estimate of
 * what can still be allocated without swapping; "free" alone would call every page cache a leak.
 */
export interface HostRamSample {
  ts: Timestamp;
  host: string;
  kind: 'host';
  memTotalBytes: number;
  memAvailableBytes: number;
}

export type Sample = GpuSample | ProcessSample | HostRamSample;
