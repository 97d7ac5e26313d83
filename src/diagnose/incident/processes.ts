// Other processes on the card, and ranks of one job that hold a context on one shared GPU.
// A typed part of the incident (index.ts); generated from the Facts fields by scripts/codemods/facts-to-incident.mjs.

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
}
