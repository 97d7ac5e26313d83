// nvidia-smi's own failure messages: driver not loaded, NVML/driver mismatch, no devices, a GPU
// whose handle cannot be read. Each matched line is returned as printed (trimmed).
import { toCleanLines } from './lines.js';

// One alternation of plain phrases: no quantifiers, so matching is linear in the line.
const SMI_ERROR = new RegExp(
  [
    'NVIDIA-SMI has failed because', // "... couldn't communicate with the NVIDIA driver"
    "NVIDIA-SMI couldn't find libnvidia-ml",
    'Failed to initialize NVML', // ": Driver/library version mismatch", ": Unknown Error", ...
    'NVML library version',
    'Driver/library version mismatch',
    'No devices were found',
    'Unable to determine the device handle for GPU', // ": Unknown Error", ": GPU is lost"
    'Unable to query number of CUDA devices',
  ]
    .map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .join('|'),
);
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
  if (line.length < 20) return null; // shorter than any message
  const m = SMI_ERROR.exec(line);
  if (!m) return null;
  const trimmed = line.trim();
  return trimmed.length <= MAX_RETURNED ? trimmed : line.slice(m.index, m.index + MAX_RETURNED).trim();
}
