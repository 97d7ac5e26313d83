// Bounds that keep parsing cheap on hostile or accidental input (a 20 MB paste of repeated rows).
// Real outputs are far below them: a node has at most a few dozen GPUs and a few thousand processes.

/** Lines longer than this cannot be nvidia-smi table / free rows; parsers skip them. */
export const MAX_ROW_CHARS = 4096;
/** GPUs kept per parsed output; further rows are ignored. */
export const MAX_GPUS = 1024;
/** Processes kept per parsed output; further rows are ignored. */
export const MAX_PROCESSES = 65536;
/** XML elements read from one `nvidia-smi -q -x` document (8 GPUs with MIG is about 5,000). */
export const MAX_XML_ELEMENTS = 500_000;

// Ranges a real value lies in. A row with a value outside them (a broken driver, a corrupted or hostile
// output: memory.used 99999999999, a 15-digit pid) is dropped and named in the notes, never stored or
// added up: one such row must not fail the leak watch's INSERT for every host (Postgres integers) or
// skew a sum.

/** GPU indices: nvidia-smi numbers GPUs from 0; MAX_GPUS are kept. */
export const MAX_GPU_INDEX = MAX_GPUS - 1;
/** Linux pids: pid_max is at most 2^22 (PID_MAX_LIMIT on 64-bit kernels). */
export const MAX_PID = 4_194_304;
/**
 * GPU memory in MiB: 2^24 MiB (16 TiB), 16x the largest package announced (about 1 TiB of HBM), and
 * 2^7 below what a Postgres integer holds.
 */
export const MAX_GPU_MEMORY_MIB = 2 ** 24;
/** Host memory in bytes: 2^50 (1 PiB), 20x the largest single-system RAM sold (about 48 TiB). */
export const MAX_HOST_MEMORY_BYTES = 2 ** 50;
/** MIG GPU / compute instance and device ids (a GPU has at most 7 or 8 of each). */
export const MAX_MIG_ID = 1023;
/** Utilization in percent. */
export const MAX_UTILIZATION_PCT = 100;
/** GPU temperatures in °C that a sensor can report (throttling starts near 90). */
export const TEMPERATURE_RANGE_C = [-50, 200] as const;
