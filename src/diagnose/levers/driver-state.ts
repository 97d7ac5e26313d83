// CUDA could not start at all: the runtime's "unknown error" while it initialises (old PyTorch's THCGeneral "cuda runtime
// error (30) : unknown error" from torch._C._cuda_init, the driver API's "failed call to cuInit: CUDA_ERROR_UNKNOWN").
// No allocation was made yet, so no other process and no batch is to blame: the driver or its kernel modules are in a
// bad state (an upgrade under a running module, nvidia_uvm not loaded, a GPU fallen off the bus). A report that also
// says "out of memory" in prose does not change that; only an allocation failure's own figures (a request, a free
// amount) would. Fixed message formats, bounded patterns (untrusted input, linear).
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 2000;
const MAX_LINES = 4000;
/**
 * The allocation failure's own figures: PyTorch's request and free amounts, TF/XLA's bytes free, a MiB/GiB free (not TF's
 * start-up device line "freeMemory: 7.65GiB", printed before anything was allocated).
 */
const MEMORY_FIGURES = /Tried to allocate \d|\bbytes free\b|\d(?:\.\d{1,3})? ?[KMG]i?B free\b/i;

/** The paste prints an allocation failure's figures anywhere (the init-error reading then steps back). */
export function readsMemoryFigures(log: LogText): boolean {
  for (let l = 0; l < Math.min(log.lineCount, MAX_LINES); l++) if (MEMORY_FIGURES.test(log.line(l).slice(0, MAX_LINE))) return true;
  return false;
}

export const readDriverState = (log: LogText): Partial<StackPart> => ({ memoryFiguresPrinted: readsMemoryFigures(log) });

export const DRIVER_STATE_CONDITIONS = {
  no_memory_figures_printed: ({ incident: i }: { incident: Incident }) => i.stack.memoryFiguresPrinted === false,
};
