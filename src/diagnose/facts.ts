// Pulls the numbers a fix needs out of a log: the OOM message's figures and the run's settings
// (command lines, Ultralytics `engine/trainer:` dumps, argparse Namespace, YOLOv5 opt/hyp dumps,
// HF TrainingArguments). All patterns are bounded and anchored so a hostile paste cannot make them slow.
import type { LogText } from './normalize.js';
import { isGenerating, oomPhase } from './holder-phase.js';
import { failurePhase, withPhase } from './phase.js';
import { readSmiSnapshot, readTfDeviceMemory } from './smi-snapshot.js';
import { readSmiProcesses } from './smi-processes.js';
import { hasAnyFact, newIncident, type FiguresPart, type Incident, type OtherProcess } from './incident/index.js';

const UNIT_MIB: Record<string, number> = {
  b: 1 / 1048576,
  bytes: 1 / 1048576,
  kib: 1 / 1024,
  kb: 1 / 1024,
  mib: 1,
  mb: 1,
  gib: 1024,
  gb: 1024,
  tib: 1048576,
  tb: 1048576,
  pib: 1073741824,
  pb: 1073741824,
  eib: 1099511627776,
  eb: 1099511627776,
};

export function toMiB(value: string, unit: string): number | undefined {
  const n = Number(value.replace(/,/g, ''));
  const f = UNIT_MIB[unit.toLowerCase()];
  if (!Number.isFinite(n) || f === undefined) return undefined;
  return Math.round(n * f * 100) / 100;
}

// Paddle prints six decimals ("98.000244MB").
const NUM = String.raw`(\d{1,15}(?:\.\d{1,6})?)\s?([KMGTPE]i?B|bytes|B)`;
const OOM_FIELDS: [keyof FiguresPart, RegExp][] = [
  // "Allocation on device 0 would exceed allowed memory. (out of memory)" then one figure a line (first: its "Free (according to CUDA)"
  // must not be read as the generic "<N> free" of the line joined before it):
  // "Currently allocated : 6.50 GiB", "Requested : 40.00 MiB", "Device limit : 8.00 GiB", "Free (according to CUDA): 0 bytes"
  // PyTorch pads the names to one column ("Requested               : 50.62 GiB"): the request and the limit are read padded.
  // Its "Currently allocated" is the cudaMallocAsync backend's pytorch_used_bytes (CUDAMallocAsyncAllocator.cpp): what
  // this process's PyTorch holds, with no reserved figure beside it (the driver's pool may keep more), so it is read apart
  // as asyncUsedMiB, not as the caching allocator's "allocated" (the card minus it minus free is no measure of others).
  ['asyncUsedMiB', new RegExp(String.raw`Currently allocated\s{0,24}:\s{0,3}${NUM}`, 'i')],
  ['triedAllocMiB', new RegExp(String.raw`Requested\s{0,24}:\s{0,3}${NUM}`, 'i')],
  ['totalCapacityMiB', new RegExp(String.raw`Device limit\s{0,24}:\s{0,3}${NUM}`, 'i')],
  ['freeMiB', new RegExp(String.raw`Free \(according to CUDA\)\s{0,3}:\s{0,3}${NUM}`, 'i')],
  ['triedAllocMiB', new RegExp(String.raw`Tried to allocate ${NUM}`, 'i')],
  // PyTorch's caching allocator names a request of 1 EiB or more only as "Tried to allocate more than 1EB memory":
  // a size no card holds (a garbage or overflowed size), read as its lower bound.
  ['triedAllocMiB', new RegExp(String.raw`Tried to allocate more than ${NUM}`, 'i')],
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
  // PaddlePaddle: "Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has been allocated and
  // available memory is only 0.000000B."
  ['triedAllocMiB', new RegExp(String.raw`Cannot allocate ${NUM} (?:CUDA managed )?memory on GPU`, 'i')],
  ['allocatedMiB', new RegExp(String.raw`${NUM} memory has been allocated`, 'i')],
  ['freeMiB', new RegExp(String.raw`available memory is only ${NUM}`, 'i')],
  // JAX / XLA at run time: "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes."
  ['triedAllocMiB', new RegExp(String.raw`Out of memory (?:while trying to allocate|allocating) ${NUM}`, 'i')],
  // PaddlePaddle 1.x: "Cannot malloc 49.0002 MB GPU memory."
  ['triedAllocMiB', new RegExp(String.raw`Cannot malloc ${NUM} GPU memory`, 'i')],
  // Apple MPS: "(MPS allocated: 11.14 GB, other allocations: 6.65 GB, max allowed: 18.13 GB)"
  ['allocatedMiB', new RegExp(String.raw`MPS allocated: ${NUM}`, 'i')],
  ['totalCapacityMiB', new RegExp(String.raw`max allowed: ${NUM}`, 'i')],
];
const OOM_LINE =
  /out of memory|OutOfMemoryError|OOM when allocating|Tried to allocate [\d.]{1,10} ?[KMGT]i?B \(GPU \d|Cannot malloc [\d.]{1,14} ?[KMG]i?B GPU memory|Free memory on device \(/i;
const GPU_INDEX = /\((?:GPU|device) (\d{1,3});|\bGPU (\d{1,3}) has a total capac(?:i)?ty|Out of memory error on GPU (\d{1,3})|device:GPU:(\d{1,3})/i;
// A CUDA context that could not be created, in each stack's fixed words: TensorFlow's "CUDA runtime implicit
// initialization on GPU:0 failed. Status: out of memory", (Lua) cutorch's init.c and THC's THCGeneral (its state set
// up at lazy init) failing with runtime error 2. Nothing of this job was on the card yet: it was full before the job began.
const CONTEXT_OOM =
  /CUDA runtime implicit initialization on GPU:\d{1,2} failed\. Status: out of memory|THCudaCheck FAIL file=[^\n]{0,160}?(?:cutorch[\\/]init\.c|THCGeneral\.c(?:pp|c)?) line=\d{1,6} error=2 : out of memory|cuda runtime error \(2\) : out of memory at [^\n]{0,160}?THCGeneral\.c(?:pp|c)?:\d/;
// CUDA's own out-of-memory (outside PyTorch's allocator): the modern text, the pre-1.0 runtime error 2, THC's check.
const RUNTIME_OOM = /CUDA error: out of memory|cuda runtime error \(2\)|THCudaCheck FAIL [^\n]{0,200}?error=2 : out of memory/i;
const OTHER_PROCESS = /Process (\d{1,10}) has (\d{1,9}(?:\.\d{1,4})?)\s?([KMGT]i?B) memory in use/gi;

/** The OOM message can be hard-wrapped over a few lines; join the lines until it looks complete. */
// A real OOM message is under 1 kB; reading at most this much keeps a hostile 10 MB "message" cheap.
const MAX_MESSAGE = 4096;

function oomMessage(log: LogText, line: number): string {
  let msg = clip(log.line(line));
  for (let next = line + 1; next < log.lineCount && next <= line + 6; next++) {
    // (The "would exceed allowed memory" form ends its first line with "(out of memory)" and puts its figures below.)
    if (/\)\s*$|PYTORCH_CUDA_ALLOC_CONF|Memory Management|\(\s*$/.test(msg) && /\)|CONF/.test(msg) && !/would exceed allowed memory/.test(msg)) break;
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

/**
 * PyTorch lists every process on the device, the failing one included ("Process 1791 has 75.52 GiB
 * memory in use. Including non-PyTorch memory, this process has 75.52 GiB"): drop the entry that is
 * this process, so `otherProcesses` holds only the others.
 */
function withoutThisProcess(all: OtherProcess[], f: Incident): OtherProcess[] {
  const mine = f.figures.thisProcessMiB;
  if (mine !== undefined) {
    const self = all.findIndex((p) => Math.abs(p.memoryMiB - mine) <= Math.max(2, 0.005 * mine));
    return self === -1 ? all : all.filter((_, i) => i !== self);
  }
  // The one process holding about what this allocator reserved (plus a CUDA context) is itself.
  const reserved =
    f.figures.reservedMiB ?? (f.figures.allocatedMiB !== undefined ? f.figures.allocatedMiB + (f.figures.reservedUnallocatedMiB ?? 0) : undefined);
  if (reserved === undefined) return all;
  const fits = (p: OtherProcess) => p.memoryMiB >= reserved && p.memoryMiB <= reserved + (all.length === 1 ? 2048 : 1024);
  const candidates = all.filter(fits);
  return candidates.length === 1 ? all.filter((p) => p !== candidates[0]) : all;
}

export function extractOomFacts(log: LogText, lines: number[]): Incident {
  const incident: Incident = newIncident();
  let lastOom: number | undefined;
  let bareIndex: number | undefined;
  // The last OOM message in the log is the one that ended the run.
  for (let i = lines.length - 1; i >= 0; i--) {
    // A pattern that starts at the end of a line ("(?:^|[^:\w])OutOfMemoryError" takes its newline) lands on the line above the message.
    const at = OOM_LINE.test(log.line(lines[i])) ? lines[i] : lines[i] + 1 < log.lineCount && OOM_LINE.test(log.line(lines[i] + 1)) ? lines[i] + 1 : -1;
    if (at === -1) continue;
    lastOom ??= at;
    const msg = oomMessage(log, at);
    for (const [key, re] of OOM_FIELDS) {
      if (incident.figures[key] !== undefined) continue;
      const m = re.exec(msg);
      const v = m && toMiB(m[1], m[2]);
      if (typeof v === 'number') (incident.figures as Record<string, number>)[key] = v;
    }
    // PyTorch 1.0-1.3 printed "X cached" as the allocator's idle cache (amount_cached - amount_allocated);
    // 1.4+ prints the total ("reserved in total"). The old figure is the newer "reserved but unallocated".
    if (
      incident.figures.cachedMiB !== undefined &&
      incident.figures.reservedMiB === undefined &&
      incident.figures.reservedUnallocatedMiB === undefined &&
      incident.figures.allocatedMiB !== undefined
    ) {
      incident.figures.reservedUnallocatedMiB = incident.figures.cachedMiB;
    }
    const g = GPU_INDEX.exec(msg);
    // A GPU index alone ("Out of memory error on GPU 0." repeated in prose after the full message) is no figure: the
    // message above it with the numbers is read instead, and this index kept only if none has any.
    const onlyIndex = g !== null && !hasAnyFact(incident);
    if (g) incident.figures.gpuIndex = Number(g[1] ?? g[2] ?? g[3] ?? g[4]);
    const others: OtherProcess[] = [];
    for (const m of msg.matchAll(OTHER_PROCESS)) {
      const mib = toMiB(m[2], m[3]);
      if (mib !== undefined) others.push({ pid: Number(m[1]), memoryMiB: mib });
    }
    const notSelf = withoutThisProcess(others, incident);
    if (notSelf.length) incident.processes.otherProcesses = notSelf;
    xlaHbmReport(log, at, incident);
    if (RUNTIME_OOM.test(msg) || CONTEXT_OOM.test(msg)) incident.figures.runtimeOom = true;
    // vLLM's start-up check: what was free before this process allocated anything, of the card.
    const startup = /Free memory on device \((\d{1,6}(?:\.\d{1,3})?)\/(\d{1,6}(?:\.\d{1,3})?) ?GiB\) on startup/.exec(msg);
    if (startup) {
      incident.figures.startupFreeMiB = Number(startup[1]) * 1024;
      incident.figures.totalCapacityMiB ??= Number(startup[2]) * 1024;
    }
    if (onlyIndex && Object.keys(incident.figures).length === 1 && !hasAnyFact({ ...incident, figures: {} })) {
      bareIndex ??= incident.figures.gpuIndex;
      delete incident.figures.gpuIndex;
      continue;
    }
    if (hasAnyFact(incident)) {
      const phase = CONTEXT_OOM.test(msg) ? 'context' : oomPhase(log, at);
      if (phase) incident.phase.oomPhase = phase;
      if (isGenerating(log, at)) incident.phase.generating = true;
      withPhase(incident, failurePhase(log, at));
      break;
    }
  }
  // A message without figures ("CUDA out of memory.") still has the frames that say what ran.
  if (!hasAnyFact(incident) && lastOom !== undefined) {
    if (bareIndex !== undefined) incident.figures.gpuIndex = bareIndex;
    const line = clip(log.line(lastOom));
    if (RUNTIME_OOM.test(line) || CONTEXT_OOM.test(line)) incident.figures.runtimeOom = true;
    const phase = CONTEXT_OOM.test(line) ? 'context' : oomPhase(log, lastOom);
    if (phase) incident.phase.oomPhase = phase;
    if (isGenerating(log, lastOom)) incident.phase.generating = true;
    withPhase(incident, failurePhase(log, lastOom));
  }
  // What the card held when the reporter looked (a pasted nvidia-smi or gpustat snapshot) or when TensorFlow started.
  if (lastOom !== undefined) {
    const cards = readSmiSnapshot(log);
    if (cards.length) incident.processes.smiCards = cards;
    const rows = readSmiProcesses(log);
    if (rows.length) incident.processes.smiProcesses = rows;
    const tf = readTfDeviceMemory(log);
    if (tf) incident.figures.tfDeviceMiB = tf.mib;
  }
  return incident;
}

// XLA's compile-time report (TPU, and GPU with XLA's allocator): "Ran out of memory in memory space hbm.
// Used 30.21G of 15.48G hbm." then "Total hbm usage >= 30.73G:" with "reserved / program / arguments"
// lines. Sizes carry a bare K/M/G suffix. Read from the message line and the dozen lines under it.
const XLA_USED = /Used (\d{1,7}(?:\.\d{1,3})?)([KMGT])i?B? of (\d{1,7}(?:\.\d{1,3})?)([KMGT])i?B? hbm/;
const XLA_PART = /^\s{0,12}(program|arguments)\s{1,20}(\d{1,7}(?:\.\d{1,3})?)([KMGT]?)i?B?\s*$/;
const SUFFIX_MIB: Record<string, number> = { '': 1 / 1048576, K: 1 / 1024, M: 1, G: 1024, T: 1048576 };

function xlaHbmReport(log: LogText, line: number, incident: Incident): void {
  const used = XLA_USED.exec(clip(log.line(line))) ?? XLA_USED.exec(clip(log.line(line + 1)));
  if (!used) return;
  incident.figures.xlaUsedMiB = Number(used[1]) * SUFFIX_MIB[used[2]];
  incident.figures.totalCapacityMiB ??= Number(used[3]) * SUFFIX_MIB[used[4]];
  for (let next = line + 1; next < log.lineCount && next <= line + 12; next++) {
    const m = XLA_PART.exec(log.line(next).slice(0, 200));
    if (!m) continue;
    const mib = Number(m[2]) * SUFFIX_MIB[m[3]];
    if (m[1] === 'arguments') incident.figures.xlaArgumentsMiB ??= mib;
    else incident.figures.xlaProgramMiB ??= mib;
  }
}
