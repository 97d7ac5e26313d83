// TensorFlow 1.x states each GPU's free memory as it finds the device, before it allocates anything (gpu_device.cc:
// "Found device 0 with properties: ... totalMemory: 3.94GiB freeMemory: 187.62MiB"). What is not free then is held by
// someone else: a desktop takes a few hundred MiB, so most of the card gone says another process holds it, and then
// neither the batch nor allow_growth in this job is the first lever: freeing or moving off that card is (issue 23
// item 5: a stack is read for its own numbers). Anchored on TF's fixed text, bounded per line (untrusted input, linear).
import { mergeInto, type Incident, type StackPart } from '../incident/index.js';
import { boundedLines } from '../lines.js';
import { formatMiB } from '../fixes/arithmetic.js';
import { readTfTogether } from './tf-own-processes.js';

const FOUND = /Found device (\d{1,2}) with properties/;
const FREE = /totalMemory: (\d{1,6}(?:\.\d{1,3})?)([GM])iB freeMemory: (\d{1,6}(?:\.\d{1,3})?)([GM])iB/;
// TF up to 1.4 printed them on two lines: "Total memory: 2.00GiB" then "Free memory: 1.54GiB".
const TOTAL_OLD = /^\s{0,4}Total memory: (\d{1,6}(?:\.\d{1,3})?)([GM])iB\s{0,4}$/;
// TF 2.0-2.3 print the card's size at discovery ("deviceMemorySize: 10.76GiB") and then the device they created with
// nearly all that was free ("Created device /job:localhost/.../device:GPU:0 with 215 MB memory"): that is the free figure.
const SIZE_TF2 = /deviceMemorySize: (\d{1,6}(?:\.\d{1,3})?)([GM])iB/;
const CREATED = /Created (?:TensorFlow )?device [^\n]{1,120}? with (\d{1,7}) MB memory/;
const FREE_OLD = /^\s{0,4}Free memory: (\d{1,6}(?:\.\d{1,3})?)([GM])iB\s{0,4}$/;
/** Discoveries read after the first: a later TF process of the same paste (tf-own-processes.ts). */
const MAX_DISCOVERIES = 8;
/** Held outside before TF started: over half the card and at least 1 GiB (more than any desktop takes). */
const HELD_SHARE = 0.5;
const HELD_MIN_MIB = 1024;

const mib = (n: string, unit: string) => Number(n) * (unit === 'G' ? 1024 : 1);

/** Whether most of a card was held at discovery: over half of it and at least 1 GiB (more than any desktop takes). */
const heldAt = (total: number, free: number) => total - free >= HELD_MIN_MIB && total - free > HELD_SHARE * total;

/**
 * The first GPU TensorFlow found: its free and total memory at discovery, and whether most of it was held already. A
 * later discovery in the same paste is a second TF process (one process discovers its GPUs once): when the first found
 * the card nearly free and the later one found most of it held, the first process's reservation is what holds it.
 */
export function readTfStartFree(text: string): Partial<StackPart> {
  let gpu = 0;
  // TF<=1.4's total, on the line just before its free figure; TF 2.0-2.3's card size, until a device is created.
  let oldTotal: number | undefined;
  let size: number | undefined;
  let first: Partial<StackPart> | undefined;
  let seen = 0;
  for (const line of boundedLines(text, 20_000, 600)) {
    const found = FOUND.exec(line);
    if (found) gpu = Number(found[1]);
    let total: number | undefined;
    let free: number | undefined;
    const both = line.includes('freeMemory:') ? FREE.exec(line) : null;
    const old = oldTotal !== undefined && line.includes('Free memory:') ? FREE_OLD.exec(line) : null;
    const created = size !== undefined && line.includes('Created') ? CREATED.exec(line) : null;
    if (both) [total, free] = [mib(both[1], both[2]), mib(both[3], both[4])];
    else if (old) [total, free] = [oldTotal, mib(old[1], old[2])];
    else if (created && first === undefined) [total, free] = [size, Number(created[1])];
    const t = line.includes('Total memory:') ? TOTAL_OLD.exec(line) : null;
    oldTotal = t ? mib(t[1], t[2]) : undefined;
    const s2 = line.includes('deviceMemorySize:') ? SIZE_TF2.exec(line) : null;
    if (s2 && size === undefined) size = mib(s2[1], s2[2]);
    if (total === undefined || free === undefined) continue;
    if (total <= 0 || free > total) return first ?? {};
    if (first === undefined) {
      first = {
        tfStartGpu: gpu,
        tfStartFreeMiB: free,
        tfStartTotalMiB: total,
        tfStartHeld: heldAt(total, free) ? formatMiB(total - free) : undefined,
      };
      continue;
    }
    if (++seen > MAX_DISCOVERIES) break;
    // The first found the card nearly free; a later discovery of the same GPU most of it held: the earlier TF process
    // took it (another index is the same process's next GPU, not a second process).
    if (gpu === first.tfStartGpu && first.tfStartHeld === undefined && heldAt(total, free)) {
      first.tfLaterHeld = formatMiB(total - free);
      first.tfLaterFreeMiB = free;
      break;
    }
  }
  return first ?? {};
}

/** Reads TF's start-up figures into the incident; most of the card held then is what was free at its start (holder.ts). */
export function applyTfStartFree(text: string, incident: Incident): void {
  const start = readTfStartFree(text);
  const told = readTfTogether(text);
  mergeInto(incident, {
    stack: { ...start, tfTogether: told.together, tfTogetherProcesses: told.processes, tfSequential: told.sequential, tfOom: told.tfOom },
  });
  if (incident.stack.tfStartHeld === undefined) return;
  incident.figures.startupFreeMiB ??= incident.stack.tfStartFreeMiB;
  incident.figures.totalCapacityMiB ??= incident.stack.tfStartTotalMiB;
}

export const TF_START_CONDITIONS = {
  // Most of the card was held before TensorFlow allocated anything: another process, not this job's reservation.
  tf_start_held: ({ incident: i }: { incident: Incident }) => i.stack.tfStartHeld !== undefined,
  not_tf_start_held: ({ incident: i }: { incident: Incident }) => i.stack.tfStartHeld === undefined,
};
