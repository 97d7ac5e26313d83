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

export interface ProcessesPart {
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
}
