// nvidia-smi's own failure messages: driver not loaded, NVML/driver mismatch, no devices, a GPU
// whose handle cannot be read. Each matched line is returned as printed (trimmed).
import { toCleanLines } from './lines.js';

const SMI_ERRORS = [
  "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
  'NVIDIA-SMI has failed because',
  "NVIDIA-SMI couldn't find libnvidia-ml.so",
  'Failed to initialize NVML',
  'NVML library version',
  'Driver/library version mismatch',
  'No devices were found',
  'Unable to determine the device handle for GPU',
  'Unable to query number of CUDA devices',
];
const LOWER = SMI_ERRORS.map((s) => s.toLowerCase());
/** A matched line longer than this (a JSON log line, say) is returned as an excerpt from the match. */
const MAX_RETURNED = 300;

export function findSmiErrors(text: string): string[] {
  return findSmiErrorsInLines(toCleanLines(text));
}

export function findSmiErrorsInLines(lines: string[]): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    const hit = matchSmiError(line);
    if (hit !== null && !seen.has(hit)) {
      seen.add(hit);
      found.push(hit);
    }
  }
  return found;
}

/** The error text in this line, or null. */
export function matchSmiError(line: string): string | null {
  // Cheap pre-filters: the shortest message is 20 characters, and each contains one of these.
  if (line.length < 20) return null;
  if (line.indexOf('NV') === -1 && line.indexOf('devic') === -1 && line.indexOf('Devic') === -1 && line.indexOf('libr') === -1) return null;
  const lower = line.length > 100_000 ? line.slice(0, 100_000).toLowerCase() : line.toLowerCase();
  let at = -1;
  for (const needle of LOWER) {
    const i = lower.indexOf(needle);
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  if (at === -1) return null;
  const trimmed = line.trim();
  if (trimmed.length <= MAX_RETURNED) return trimmed;
  return line.slice(at, at + MAX_RETURNED).trim();
}
