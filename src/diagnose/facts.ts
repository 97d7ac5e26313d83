// Pulls the numbers a fix needs out of a log: the OOM message's figures and the run's settings
// (command lines, Ultralytics `engine/trainer:` dumps, argparse Namespace, YOLOv5 opt/hyp dumps,
// HF TrainingArguments). All patterns are bounded and anchored so a hostile paste cannot make them slow.
import type { LogText } from './normalize.js';

export interface OtherProcess {
  pid: number;
  memoryMiB: number;
}

export interface Facts {
  triedAllocMiB?: number;
  totalCapacityMiB?: number;
  freeMiB?: number;
  allocatedMiB?: number;
  reservedMiB?: number;
  reservedUnallocatedMiB?: number;
  cachedMiB?: number;
  thisProcessMiB?: number;
  gpuIndex?: number;
  otherProcesses?: OtherProcess[];
  batch?: number;
  autobatch?: number;
  workers?: number;
  imgsz?: number;
  cache?: string | boolean;
  singleCls?: boolean;
  resume?: boolean;
  amp?: boolean;
  accumulate?: number;
  epochs?: number;
  model?: string;
  gpuName?: string;
  gpuMemoryMiB?: number;
  hostRamGiB?: number;
  /** GPU memory per epoch or iteration, in MiB, as the training log printed it. */
  memorySeriesMiB?: number[];
  commandLine?: string;
  ncclTimeoutMs?: number;
  /** Highest NCCL SeqNum each rank reported in watchdog timeouts. */
  ncclSeqByRank?: Record<string, number>;
  /** Percent shown on the last YOLO "Caching images (N GB)" progress line. */
  cacheProgressPct?: number;
}

const UNIT_MIB: Record<string, number> = { b: 1 / 1048576, bytes: 1 / 1048576, kib: 1 / 1024, kb: 1 / 1024, mib: 1, mb: 1, gib: 1024, gb: 1024, tib: 1048576, tb: 1048576 };

export function toMiB(value: string, unit: string): number | undefined {
  const n = Number(value.replace(/,/g, ''));
  const f = UNIT_MIB[unit.toLowerCase()];
  if (!Number.isFinite(n) || f === undefined) return undefined;
  return Math.round(n * f * 100) / 100;
}

const NUM = String.raw`(\d{1,15}(?:\.\d{1,4})?)\s?([KMGT]i?B|bytes|B)`;
const OOM_FIELDS: [keyof Facts, RegExp][] = [
  ['triedAllocMiB', new RegExp(String.raw`Tried to allocate ${NUM}`, 'i')],
  ['totalCapacityMiB', new RegExp(String.raw`${NUM} total capac(?:i)?ty`, 'i')],
  ['totalCapacityMiB', new RegExp(String.raw`total capac(?:i)?ty of ${NUM}`, 'i')],
  ['freeMiB', new RegExp(String.raw`of which ${NUM} is free`, 'i')],
  ['freeMiB', new RegExp(String.raw`${NUM} free\b`, 'i')],
  ['allocatedMiB', new RegExp(String.raw`${NUM} already allocated`, 'i')],
  ['allocatedMiB', new RegExp(String.raw`${NUM} is allocated by PyTorch`, 'i')],
  ['reservedMiB', new RegExp(String.raw`${NUM} reserved in total`, 'i')],
  ['reservedUnallocatedMiB', new RegExp(String.raw`${NUM} is reserved by PyTorch but unallocated`, 'i')],
  ['cachedMiB', new RegExp(String.raw`${NUM} cached\b`, 'i')],
  ['thisProcessMiB', new RegExp(String.raw`this process has ${NUM} memory in use`, 'i')],
];
const OOM_LINE = /out of memory|OutOfMemoryError/i;
const GPU_INDEX = /\((?:GPU|device) (\d{1,3});|\bGPU (\d{1,3}) has a total capac(?:i)?ty/i;
const OTHER_PROCESS = /Process (\d{1,10}) has (\d{1,9}(?:\.\d{1,4})?)\s?([KMGT]i?B) memory in use/gi;

/** The OOM message can be hard-wrapped over a few lines; join the lines until it looks complete. */
// A real OOM message is under 1 kB; reading at most this much keeps a hostile 10 MB "message" cheap.
const MAX_MESSAGE = 4096;

function oomMessage(log: LogText, line: number): string {
  let msg = clip(log.line(line));
  for (let next = line + 1; next < log.lineCount && next <= line + 6; next++) {
    if (/\)\s*$|PYTORCH_CUDA_ALLOC_CONF|Memory Management|\(\s*$/.test(msg) && /\)|CONF/.test(msg)) break;
    const cont = clip(log.line(next));
    if (cont.length === 0 || /^\s*(Traceback|File "|\[|During handling|\w+Error\b)/.test(cont)) break;
    // A wrap inside a word or number ("allo|cated", "2.0|0 GiB") joins without a space.
    const inNumber = /[0-9.]$/.test(msg) && /^[0-9.]/.test(cont);
    const inWord = /[A-Za-z]$/.test(msg) && /^[a-z]/.test(cont) && msg.length >= 40;
    const glue = inNumber || inWord ? '' : ' ';
    msg += glue + cont.trim();
  }
  return msg.slice(0, 2 * MAX_MESSAGE);
}

/** The part of a line around its OOM words (the whole line when short). */
function clip(line: string): string {
  if (line.length <= MAX_MESSAGE) return line;
  const at = line.search(OOM_LINE);
  return at === -1 ? line.slice(0, MAX_MESSAGE) : line.slice(Math.max(0, at - 200), at + MAX_MESSAGE);
}

export function extractOomFacts(log: LogText, lines: number[]): Facts {
  const facts: Facts = {};
  // The last OOM message in the log is the one that ended the run.
  for (let i = lines.length - 1; i >= 0; i--) {
    const first = log.line(lines[i]);
    if (!OOM_LINE.test(first)) continue;
    const msg = oomMessage(log, lines[i]);
    for (const [key, re] of OOM_FIELDS) {
      if (facts[key] !== undefined) continue;
      const m = re.exec(msg);
      const v = m && toMiB(m[1], m[2]);
      if (typeof v === 'number') (facts as Record<string, unknown>)[key] = v;
    }
    const g = GPU_INDEX.exec(msg);
    if (g) facts.gpuIndex = Number(g[1] ?? g[2]);
    const others: OtherProcess[] = [];
    for (const m of msg.matchAll(OTHER_PROCESS)) {
      const mib = toMiB(m[2], m[3]);
      if (mib !== undefined) others.push({ pid: Number(m[1]), memoryMiB: mib });
    }
    if (others.length) facts.otherProcesses = others;
    if (Object.keys(facts).length > 0) break;
  }
  return facts;
}
