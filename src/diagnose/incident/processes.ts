// Other processes on the card, and ranks of one job that hold a context on one shared GPU.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface OtherProcess {
  pid: number;
  memoryMiB: number;
}

export interface ProcessesPart {
  otherProcesses?: OtherProcess[];
  /** Ranks of one job that also hold a context on one shared GPU (src/diagnose/rank-contexts.ts). */
  strayContextGpu?: number;
  strayContextPids?: string;
  strayContextMiB?: string;
  /** The report's own sentence naming another holder of the GPU ("used by other processes", "被别人占用"), trimmed. */
  reportedHolder?: string;
}
