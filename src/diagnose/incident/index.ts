// The incident a log describes (issue 23), in typed parts: the OOM message's figures, the run's settings, the
// model, the card, the phase, who holds the memory, memory series, the environment, other stacks' figures, what
// the user tried... Each part is its own module here; the extractors fill them and the levers read them.
// Rule templates ({batch}, {holderWhy}) and the JSON contract's `facts` keep one flat record: flatView().
import type { FiguresPart } from './figures.js';
import type { ProcessesPart } from './processes.js';
import type { RunPart } from './run.js';
import type { ModelPart } from './model.js';
import type { CardPart } from './card.js';
import type { HostPart } from './host.js';
import type { PhasePart } from './phase.js';
import type { EvalPart } from './eval.js';
import type { ProgressPart } from './progress.js';
import type { SequencePart } from './sequence.js';
import type { InputPart } from './input.js';
import type { SeriesPart } from './series.js';
import type { HolderPart } from './holder.js';
import type { EnvironmentPart } from './environment.js';
import type { BudgetPart } from './budget.js';
import type { DistributedPart } from './distributed.js';
import type { StackPart } from './stack.js';
import type { ShmPart } from './shm.js';
import type { TriedPart } from './tried.js';

export type { FiguresPart } from './figures.js';
export type { ProcessesPart, OtherProcess } from './processes.js';
export type { RunPart } from './run.js';
export type { ModelPart } from './model.js';
export type { CardPart } from './card.js';
export type { HostPart } from './host.js';
export type { PhasePart } from './phase.js';
export type { EvalPart } from './eval.js';
export type { ProgressPart } from './progress.js';
export type { SequencePart } from './sequence.js';
export type { InputPart } from './input.js';
export type { SeriesPart } from './series.js';
export type { HolderPart } from './holder.js';
export type { EnvironmentPart } from './environment.js';
export type { BudgetPart } from './budget.js';
export type { DistributedPart } from './distributed.js';
export type { StackPart } from './stack.js';
export type { ShmPart } from './shm.js';
export type { TriedPart } from './tried.js';

export interface Incident {
  /** The OOM message's own figures (the last OOM message in the log; XLA's HBM report; vLLM's start-up check), in MiB. */
  figures: FiguresPart;
  /** Other processes on the card, and ranks of one job that hold a context on one shared GPU. */
  processes: ProcessesPart;
  /** The tool that wrote the log and the run's settings (command line, trainer dumps, argparse, TrainingArguments). */
  run: RunPart;
  /** The model: its name, size and the dtype its weights load in, with the evidence for an inferred dtype. */
  model: ModelPart;
  /** The card as the log names or states it (the OOM message's capacity is in figures). */
  card: CardPart;
  /** Host RAM, the DataLoader workers that take it, and what the paste shows of a host-RAM kill: loading, data preparation, the RAM cache. */
  host: HostPart;
  /** Where the run was when it failed (src/diagnose/phase.ts, holder-phase.ts), from frames and log lines. */
  phase: PhasePart;
  /** The evaluation's own settings and what its frames showed (levers/eval.ts). */
  eval: EvalPart;
  /** How far training got before the failure (levers/progress.ts). */
  progress: ProgressPart;
  /** The sequence length the paste states (levers/sequence.ts). */
  sequence: SequencePart;
  /** The size of one input the paste states (levers/input-size.ts). */
  input: InputPart;
  /** Memory over time as the paste prints it, its trend, and what growing memory keeps. */
  series: SeriesPart;
  /** Who holds the GPU memory (src/diagnose/holder.ts) and the arithmetic that says so. */
  holder: HolderPart;
  /** Where the job runs and its allocator settings (environment.ts, alloc-conf.ts). */
  environment: EnvironmentPart;
  /** The memory budget against the card, as the reply quotes it (levers.ts, levers/budget.ts). */
  budget: BudgetPart;
  /** Distributed training: ZeRO, ranks, NCCL, rendezvous, DDP reducer errors. */
  distributed: DistributedPart;
  /** Figures in a non-PyTorch stack's own format: vLLM, TF/XLA's BFC allocator, llama.cpp/ggml, TGI, Ray (stack-figures.ts). */
  stack: StackPart;
  /** Who ran out of /dev/shm and how (levers/shm.ts). */
  shm: ShmPart;
  /** What the user says they already tried. */
  tried: TriedPart;
}

/** Some fields of some parts: what an extractor found, merged into an incident by incidentOf() / mergeInto(). */
export type IncidentPatch = { [P in keyof Incident]?: Partial<Incident[P]> };

export const INCIDENT_PARTS = [
  'figures',
  'processes',
  'run',
  'model',
  'card',
  'host',
  'phase',
  'eval',
  'progress',
  'sequence',
  'input',
  'series',
  'holder',
  'environment',
  'budget',
  'distributed',
  'stack',
  'shm',
  'tried',
] as const satisfies readonly (keyof Incident)[];

/** An incident with every part and no field. */
export function newIncident(): Incident {
  return {
    figures: {},
    processes: {},
    run: {},
    model: {},
    card: {},
    host: {},
    phase: {},
    eval: {},
    progress: {},
    sequence: {},
    input: {},
    series: {},
    holder: {},
    environment: {},
    budget: {},
    distributed: {},
    stack: {},
    shm: {},
    tried: {},
  };
}

/** Merges patches into the incident part by part, later ones winning (an explicit undefined too, as a spread does). */
export function mergeInto(incident: Incident, ...patches: (IncidentPatch | Incident | undefined)[]): Incident {
  for (const patch of patches) {
    if (!patch) continue;
    for (const part of INCIDENT_PARTS) if (patch[part]) Object.assign(incident[part], patch[part]);
  }
  return incident;
}

/** A new incident from patches (parts are never shared with them). */
export function incidentOf(...patches: (IncidentPatch | Incident | undefined)[]): Incident {
  return mergeInto(newIncident(), ...patches);
}

/** Copies each field of `from` that the incident does not have (a figure already read is never overridden). */
export function fillMissing(incident: Incident, from: Incident): void {
  for (const part of INCIDENT_PARTS) {
    const target = incident[part] as Record<string, unknown>;
    for (const [k, v] of Object.entries(from[part])) if (target[k] === undefined) target[k] = v;
  }
}

/** Drops fields set to undefined, so that only what the log stated remains. */
export function pruneUndefined(incident: Incident): void {
  for (const part of INCIDENT_PARTS) {
    const fields = incident[part] as Record<string, unknown>;
    for (const k of Object.keys(fields)) if (fields[k] === undefined) delete fields[k];
  }
}

/** Whether any part holds a field. */
export function hasAnyFact(incident: Incident): boolean {
  return INCIDENT_PARTS.some((part) => Object.keys(incident[part]).length > 0);
}

/** Fields whose name in their part differs from the flat name templates and the JSON contract use. */
const FLAT_NAMES: Partial<Record<keyof Incident, Record<string, string>>> = {
  model: { name: 'model' },
  phase: { name: 'phase' },
  holder: { verdict: 'holder', why: 'holderWhy' },
  environment: { detected: 'environment' },
};

/**
 * The incident as one flat record, keys sorted: what rule templates fill their {placeholders} from and what
 * `gpu-doctor diagnose --json` prints as `facts`. Fields left undefined are not in it.
 */
export function flatView(incident: Incident): Record<string, unknown> {
  const flat: [string, unknown][] = [];
  for (const part of INCIDENT_PARTS) {
    for (const [k, v] of Object.entries(incident[part])) if (v !== undefined) flat.push([FLAT_NAMES[part]?.[k] ?? k, v]);
  }
  return Object.fromEntries(flat.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
