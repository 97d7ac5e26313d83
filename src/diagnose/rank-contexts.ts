// Ranks that each open a CUDA context on one shared GPU, read from nvidia-smi's process table: the
// same pids appear on their own GPU and again on one other GPU, where each holds a context-sized share.
// One pid on two GPUs is a single process using both (DataParallel, model parallel) and is not this.
import type { Readings } from '../readings/types.js';
import { formatMiB } from './fixes/arithmetic.js';
import type { ProcessesPart } from './incident/index.js';

/** A CUDA context with its kernels is a few hundred MiB to ~1.5 GiB; more is real work, not a stray. */
const MAX_CONTEXT_MIB = 2048;

export function strayContexts(readings: Readings): Pick<ProcessesPart, 'strayContextGpu' | 'strayContextPids' | 'strayContextMiB'> {
  const gpusOf = new Map<number, Map<number, number | null>>();
  for (const p of readings.processes) {
    if (p.gpuIndex === null) continue;
    let m = gpusOf.get(p.pid);
    if (!m) gpusOf.set(p.pid, (m = new Map<number, number | null>()));
    m.set(p.gpuIndex, p.memoryMiB);
  }
  // For each GPU: the pids that are on it and on exactly one other GPU where they hold more.
  const strays = new Map<number, { pid: number; mib: number }[]>();
  for (const [pid, gpus] of gpusOf) {
    if (gpus.size !== 2) continue;
    const [[ga, ma], [gb, mb]] = [...gpus.entries()];
    if (ma === null || mb === null || ma === mb) continue;
    const [shared, mib] = ma < mb ? [ga, ma] : [gb, mb];
    if (mib > MAX_CONTEXT_MIB) continue;
    strays.set(shared, [...(strays.get(shared) ?? []), { pid, mib }]);
  }
  let best: [number, { pid: number; mib: number }[]] | undefined;
  for (const e of strays) if (e[1].length >= 2 && (!best || e[1].length > best[1].length)) best = e;
  if (!best) return {};
  const [gpu, list] = best;
  const avg = list.reduce((a, s) => a + s.mib, 0) / list.length;
  return { strayContextGpu: gpu, strayContextPids: list.map((s) => s.pid).join(', '), strayContextMiB: formatMiB(avg) };
}
