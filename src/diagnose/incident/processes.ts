// Other processes on the card, and ranks of one job that hold a context on one shared GPU.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface OtherProcess {
  pid: number;
  memoryMiB: number;
}

/** One GPU's memory in a pasted nvidia-smi / gpustat snapshot (src/diagnose/smi-snapshot.ts). */
export interface SmiCard {
  gpu: number;
  usedMiB: number;
  totalMiB: number;
}

/** One row of a pasted nvidia-smi "Processes:" table (src/diagnose/smi-processes.ts). */
export interface SmiProcess {
  /** The GPU index; for a compute-apps CSV row -2 (one device, unnamed: the run's) or -1 (the device cannot be told). */
  gpu: number;
  pid: number;
  /** The process name's last path part ("python", "uwsgi"). */
  name: string;
  usedMiB: number;
}

export interface ProcessesPart {
  /** The rows of a pasted nvidia-smi process table that state their memory. */
  smiProcesses?: SmiProcess[];
  /** Workers of one pre-fork server holding the GPU in that table, as the reply quotes them ("2 × uwsgi (pid 3240: 3.16 GiB, ...)"). */
  serverWorkers?: string;
  /** Each GPU's memory in a pasted nvidia-smi or gpustat snapshot. */
  smiCards?: SmiCard[];
  otherProcesses?: OtherProcess[];
  /** Ranks of one job that also hold a context on one shared GPU (src/diagnose/rank-contexts.ts). */
  strayContextGpu?: number;
  strayContextPids?: string;
  strayContextMiB?: string;
  /** The report's own sentence naming another holder of the GPU ("used by other processes", "被别人占用"), trimmed. */
  reportedHolder?: string;
  /** The GPU index the report asks to run on instead (levers/other-gpu.ts). */
  otherGpuAsked?: number;
  /** The GPUs the paste says the job was given ("1,2,3"), by the variable before start or an index inside (levers/gpu-selection.ts). */
  gpuSelected?: string;
  gpuSelectedBy?: 'env' | 'index';
  /** A card the report says another job fills or holds. */
  gpuBusyStated?: number;
}
