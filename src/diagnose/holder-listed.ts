// Holder verdicts from what the paste lists beside an OOM message that gives no figure of this process: the rows of a
// pasted nvidia-smi process table (smi-processes.ts), and the cudaMallocAsync backend's own "Currently allocated".
// Split from holder.ts (its size).
import { formatMiB } from './fixes/arithmetic.js';
import { t, type Locale } from '../core/i18n.js';
import type { Incident } from './incident/index.js';
import { heldOnGpu, serverWorkersOnGpu } from './smi-processes.js';

const MiB = formatMiB;
/** holder.ts's HolderVerdict, for the two holders these readings give (declared here: holder.ts imports this file). */
interface ListedVerdict {
  holder: 'weights' | 'other_processes';
  why: string;
}
/** Over this (4 TiB) a figure is a wrapped counter, not memory (holder.ts's `plausible`). */
const WRAPPED_COUNTER_MIB = 4 * 2 ** 20;
/** Listed processes holding this much of the run's GPU leave a job no room on any card a model runs on. */
const LISTED_HELD_MIB = 2048;

/**
 * The cudaMallocAsync backend's "Currently allocated" as what this process holds, when it is most of the card: then it
 * is the process's own memory whatever the driver's pool keeps beside it. Under half the card it is only a lower bound
 * (the pool's freed blocks are not in it), so the card minus it is no measure of other processes.
 */
export function asyncOwnMiB(f: Incident): number | undefined {
  const used = f.figures.asyncUsedMiB;
  const total = f.figures.totalCapacityMiB;
  return used !== undefined && used < WRAPPED_COUNTER_MIB && total !== undefined && used >= 0.5 * total ? used : undefined;
}

/**
 * What this process holds plus its failed request exceed the whole card: freeing every other process's memory would not
 * make room, so they are not the holder to act on (a single request that large is this process's own).
 */
export const ownPlusAskOverCard = (mine: number, tried: number | undefined, total: number) => tried !== undefined && mine + tried > total;

/** The message states no figure of this process (no request, allocated, reserved or own total). */
function noOwnFigure(f: Incident): boolean {
  const g = f.figures;
  return [g.triedAllocMiB, g.allocatedMiB, g.reservedMiB, g.thisProcessMiB, g.asyncUsedMiB].every((v) => v === undefined);
}

/**
 * From a pasted process table, when the message itself states nothing of this process: several workers of one pre-fork
 * server on the GPU are the service's own copies of its model (weights; fewer workers is the lever), and GiBs listed
 * on the run's GPU (the error's index, else the default GPU 0) otherwise are other processes'.
 */
export function listedHolder(f: Incident, loc?: Locale): ListedVerdict | undefined {
  const rows = f.processes.smiProcesses;
  if (!rows?.length || !noOwnFigure(f)) return undefined;
  const workers = serverWorkersOnGpu(rows, f.figures.gpuIndex);
  if (workers) {
    const list = workers.rows.map((r) => `pid ${r.pid}: ${MiB(r.usedMiB)}`).join(', ');
    f.processes.serverWorkers = `${workers.rows.length} × ${workers.name} (${list})`;
    return {
      holder: 'weights',
      why: t(loc, 'holder.why.serverWorkers', {
        workers: f.processes.serverWorkers,
        gpu: workers.rows[0].gpu >= 0 ? workers.rows[0].gpu : (f.figures.gpuIndex ?? 0),
      }),
    };
  }
  const held = heldOnGpu(rows, f.figures.gpuIndex);
  if (held.mib < LISTED_HELD_MIB) return undefined;
  const list = held.rows.map((r) => `pid ${r.pid} ${r.name}: ${MiB(r.usedMiB)}`).join(', ');
  return { holder: 'other_processes', why: t(loc, 'holder.why.smiProcesses', { gpu: held.gpu, held: MiB(held.mib), list }) };
}

/** Conditions on the listed processes (spread into stack-levers.ts's table). */
export const LISTED_HOLDER_CONDITIONS = {
  // Workers of one pre-fork server hold the card (the holder verdict above quoted them): fewer workers is the lever.
  server_workers_hold_card: ({ incident: i }: { incident: Incident }) => i.processes.serverWorkers !== undefined,
};
