// One nvidia-smi (or gpustat) snapshot pasted beside a failure: how full each GPU was when the reporter looked. Its
// own fixed formats only (nvtop's too, below): nvidia-smi's GPU row ("|   0  Tesla V100-SXM2...  On   | 00000000:00:08.0 Off |") followed
// by its memory cell ("|  15514MiB / 16130MiB |"), and gpustat's one line per GPU ("[0] Tesla V100-SXM2-16GB | 44'C,
// 0 % | 15836 / 16130 MB |"). A failed run's own memory is gone once it exits, and a run not yet started holds none:
// a card nearly full in the snapshot is held by other processes (holder.ts reads it only when the error itself gives
// no figure). Bounded per line, linear.
import type { LogText } from './normalize.js';
import type { SmiCard } from './incident/processes.js';

const MAX_LINES = 5000;
const MAX_LINE = 300;
const GPU_ROW = /^\|\s{1,6}(\d{1,2})\s{1,4}[A-Za-z][^|\n]{0,60}\|\s{0,4}[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d/;
const MEMORY_CELL = /\|\s{0,12}(\d{1,7})MiB\s{0,3}\/\s{0,3}(\d{1,7})MiB\s{0,12}\|/;
// nvtop's device header ("Device 0 [NVIDIA A100 80GB PCIe] PCIe GEN 3@16x ...") and, two lines on, its memory bar
// ("GPU[||   5%] MEM[|||||||79.020Gi/80.000Gi]"; nvtop 1.x "MEM[|||   3516Mi/11178Mi]").
const NVTOP_DEVICE = /^\s{0,8}Device (\d{1,2}) \[[^\]\n]{1,80}\]/;
const NVTOP_MEM = /MEM\[\|{0,120}\s{0,120}(\d{1,7}(?:\.\d{1,3})?)([MG])i\/(\d{1,7}(?:\.\d{1,3})?)([MG])i\]/;
const GPUSTAT = /^\[(\d{1,2})\]\s{1,3}[^|\n]{1,60}\|[^|\n]{1,40}\|\s{0,6}(\d{1,7})\s{0,3}\/\s{0,3}(\d{1,7})\s{0,3}MB\s{0,3}\|/;

/** Each GPU's first memory figure in the paste (one snapshot; a repeated table is a series, memory-series.ts). */
export function readSmiSnapshot(log: LogText): SmiCard[] {
  const cards = new Map<number, SmiCard>();
  let gpu: number | undefined;
  const stop = Math.min(log.lineCount, MAX_LINES);
  for (let l = 0; l < stop; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    const stat = GPUSTAT.exec(line);
    if (stat) {
      const g = Number(stat[1]);
      if (!cards.has(g)) cards.set(g, { gpu: g, usedMiB: Number(stat[2]), totalMiB: Number(stat[3]) });
      continue;
    }
    const top = NVTOP_DEVICE.exec(line);
    if (top) {
      const next = (k: number) => (l + k < log.lineCount ? NVTOP_MEM.exec(log.line(l + k).slice(0, MAX_LINE)) : null);
      const mem = next(2) ?? next(1);
      const g = Number(top[1]);
      const scale = (unit: string) => (unit === 'G' ? 1024 : 1);
      if (mem && !cards.has(g) && Number(mem[3]) > 0)
        cards.set(g, { gpu: g, usedMiB: Math.round(Number(mem[1]) * scale(mem[2])), totalMiB: Math.round(Number(mem[3]) * scale(mem[4])) });
      continue;
    }
    const row = GPU_ROW.exec(line);
    if (row) {
      gpu = Number(row[1]);
      continue;
    }
    const mem = gpu !== undefined ? MEMORY_CELL.exec(line) : null;
    if (mem && gpu !== undefined) {
      if (!cards.has(gpu) && Number(mem[2]) > 0) cards.set(gpu, { gpu, usedMiB: Number(mem[1]), totalMiB: Number(mem[2]) });
      gpu = undefined;
    }
  }
  return [...cards.values()];
}

/** Over this share of the card in use leaves no room for a new job's context and weights. */
export const SMI_FULL = 0.85;

/** The snapshot's card the run used (the error's GPU index, else GPU 0) when it was nearly full. */
export function fullCardInSnapshot(cards: readonly SmiCard[], gpuIndex: number | undefined): SmiCard | undefined {
  const card = cards.find((c) => c.gpu === (gpuIndex ?? 0));
  return card && card.usedMiB >= SMI_FULL * card.totalMiB ? card : undefined;
}

// TensorFlow's device creation states what it could take of the card as the job started ("Created device
// /job:localhost/replica:0/task:0/device:GPU:0 with 210 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090"):
// by default it takes nearly all that is free, so a few hundred MB on a large card says others held the rest.
const TF_DEVICE = /Created (?:TensorFlow )?device [^\n]{1,120}? with (\d{1,7}) MB memory\)?:?\s{0,3}->\s{0,3}(?:physical GPU \()?device: (\d{1,2})/;

/** The memory TensorFlow's first GPU device was created with, in MiB (MB as TF prints them), and its index. */
export function readTfDeviceMemory(log: LogText): { mib: number; gpu: number } | undefined {
  const stop = Math.min(log.lineCount, MAX_LINES);
  for (let l = 0; l < stop; l++) {
    const m = TF_DEVICE.exec(log.line(l).slice(0, 600));
    if (m) return { mib: Number(m[1]), gpu: Number(m[2]) };
  }
  return undefined;
}
