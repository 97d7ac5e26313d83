// `nvidia-smi -q -x`: GPUs in document order (that is nvidia-smi's index order; the XML has no
// index element), framebuffer memory, utilization, temperature, MIG devices and processes.
import type { GpuReading, ProcessReading } from './types.js';
import { errorMarker, worstErrorMarker, isMissing, parseIntCell, parseMiBCell, parseNumberCell } from './cells.js';
import { MAX_GPUS, MAX_PROCESSES } from './limits.js';
import { attr, child, childrenNamed, parseXml, textAt, type XmlElement } from './xml-tree.js';
import { gpuRow, gpuViolation, migViolation, outOfRangeNote, processRow, processViolation } from './ranges.js';
import type { ReadingNote } from './notes.js';

export interface SmiXmlResult {
  gpus: GpuReading[];
  processes: ProcessReading[];
  /** GPUs, MIG devices and processes left out for a value out of range, one line each. */
  notes: ReadingNote[];
}

export function parseSmiXml(xml: string): SmiXmlResult {
  const result: SmiXmlResult = { gpus: [], processes: [], notes: [] };
  if (xml.indexOf('<nvidia_smi_log') === -1) return result;
  const log = findElement(parseXml(xml), 'nvidia_smi_log');
  childrenNamed(log, 'gpu')
    .slice(0, MAX_GPUS)
    .forEach((el, index) => {
      const gpu = readGpu(el, index, result.notes);
      const bad = gpuViolation(gpu);
      // Its processes go with it: they would be joined to a GPU that is not there.
      if (bad) return void result.notes.push(outOfRangeNote('nvidia-smi', gpuRow(gpu), bad));
      result.gpus.push(gpu);
      for (const p of childrenNamed(child(el, 'processes'), 'process_info')) {
        const proc = readProcess(p, gpu);
        const badProc = proc && processViolation(proc);
        if (badProc) result.notes.push(outOfRangeNote('nvidia-smi', processRow(proc), badProc));
        else if (proc && result.processes.length < MAX_PROCESSES) result.processes.push(proc);
      }
    });
  return result;
}

function findElement(root: XmlElement, name: string): XmlElement | undefined {
  const queue = [root];
  for (let i = 0; i < queue.length; i++) {
    if (queue[i].name === name) return queue[i];
    for (const c of queue[i].children) queue.push(c);
  }
  return undefined;
}

const value = (s: string | undefined): string | null => (s === undefined || isMissing(s) ? null : s);

function readGpu(el: XmlElement, index: number, notes: ReadingNote[]): GpuReading {
  const used = textAt(el, 'fb_memory_usage', 'used');
  const util = textAt(el, 'utilization', 'gpu_util');
  const temp = textAt(el, 'temperature', 'gpu_temp');
  const name = textAt(el, 'product_name');
  const fields: [string, string | undefined][] = [
    ['name', name],
    ['memory', used],
    ['utilization', util],
    ['temperature', temp],
  ];
  const errorFields = fields.filter(([, v]) => errorMarker(v) !== null).map(([f]) => f);
  const gpu: GpuReading = {
    index,
    name: value(name),
    uuid: value(textAt(el, 'uuid')),
    busId: value(textAt(el, 'pci', 'pci_bus_id')) ?? attr(el, 'id') ?? null,
    memoryUsedMiB: parseMiBCell(used),
    memoryTotalMiB: parseMiBCell(textAt(el, 'fb_memory_usage', 'total')),
    utilizationPct: parseNumberCell(util),
    temperatureC: parseNumberCell(temp),
    error: worstErrorMarker(fields.map(([, v]) => v)),
    memoryFreeMiB: parseMiBCell(textAt(el, 'fb_memory_usage', 'free')),
  };
  const reserved = textAt(el, 'fb_memory_usage', 'reserved');
  if (reserved !== undefined) gpu.memoryReservedMiB = parseMiBCell(reserved);
  if (errorFields.length) gpu.errorFields = errorFields;
  const mig = childrenNamed(child(el, 'mig_devices'), 'mig_device').map((m) => ({
    gi: parseIntCell(textAt(m, 'gpu_instance_id')),
    ci: parseIntCell(textAt(m, 'compute_instance_id')),
    migIndex: parseIntCell(textAt(m, 'index')),
    memoryUsedMiB: parseMiBCell(textAt(m, 'fb_memory_usage', 'used')),
    memoryTotalMiB: parseMiBCell(textAt(m, 'fb_memory_usage', 'total')),
  }));
  const migKept = mig.filter((m) => {
    const bad = migViolation(m);
    if (bad) notes.push(outOfRangeNote('nvidia-smi', `${gpuRow(gpu)} MIG ${m.migIndex ?? '?'}`, bad));
    return !bad;
  });
  if (migKept.length) gpu.mig = migKept;
  return gpu;
}

function readProcess(el: XmlElement, gpu: GpuReading): ProcessReading | null {
  const pid = parseIntCell(textAt(el, 'pid'));
  if (pid === null) return null;
  const proc: ProcessReading = {
    gpuIndex: gpu.index,
    gpuUuid: gpu.uuid,
    pid,
    name: value(textAt(el, 'process_name')),
    memoryMiB: parseMiBCell(textAt(el, 'used_memory')),
    type: value(textAt(el, 'type')),
  };
  const gi = textAt(el, 'gpu_instance_id');
  if (gi !== undefined) proc.gi = parseIntCell(gi);
  const ci = textAt(el, 'compute_instance_id');
  if (ci !== undefined) proc.ci = parseIntCell(ci);
  return proc;
}
