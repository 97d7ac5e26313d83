// AMD GPUs: what `rocm-smi` (ROCm 5 and later) prints for memory and utilisation, and its KFD process table.
//   --json:  {"card0": {"GPU use (%)": "0", "VRAM Total Memory (B)": "21458059264", "VRAM Total Used Memory (B)": "27856896", "Card Series": "..."}}
//   text:    GPU[0]          : VRAM Total Memory (B): 4278190080
//   --showpids: PID  PROCESS NAME  GPU(s)  VRAM USED  SDMA USED  CU OCCUPANCY  (tab- or space-separated rows)
// `GPU(s)` is how many GPUs a process uses, not which (ROCm/rocm_smi_lib#166). Real outputs: test/fixtures/rocm-smi.
// Pure and linear: JSON.parse on a size-capped text, anchored bounded matches per line, lines capped.
import { MAX_GPUS, MAX_GPU_INDEX, MAX_GPU_MEMORY_MIB, MAX_PID, MAX_PROCESSES, MAX_ROW_CHARS } from './limits.js';
import type { GpuReading, ProcessReading } from './types.js';

/** A rocm-smi answer larger than this is not one (8 GPUs' --json is about 4 KiB). */
const MAX_ROCM_CHARS = 1 << 20;
const MIB = 2 ** 20;

const KEY_USE = 'GPU use (%)';
const KEY_TOTAL = 'VRAM Total Memory (B)';
const KEY_USED = 'VRAM Total Used Memory (B)';
const KEY_TEMPS = ['Temperature (Sensor edge) (C)', 'Temperature (Sensor junction) (C)'];
const KEY_NAMES = ['Card Series', 'Device Name', 'Card series'];

const bytesToMiB = (v: unknown): number | null => {
  const n = typeof v === 'string' && /^\d{1,20}$/.test(v.trim()) ? Number(v.trim()) : NaN;
  const mib = Math.round(n / MIB);
  return Number.isFinite(mib) && mib <= MAX_GPU_MEMORY_MIB ? mib : null;
};
const numberIn = (v: unknown, lo: number, hi: number): number | null => {
  const n = typeof v === 'string' && /^-?\d{1,6}(\.\d{1,6})?$/.test(v.trim()) ? Number(v.trim()) : NaN;
  return Number.isFinite(n) && n >= lo && n <= hi ? n : null;
};
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' && v.trim() !== 'N/A' ? v.trim().slice(0, 120) : null);

function gpuOf(index: number, fields: Record<string, unknown>): GpuReading {
  const temp = KEY_TEMPS.map((k) => numberIn(fields[k], -50, 200)).find((t) => t !== null) ?? null;
  return {
    index,
    name: KEY_NAMES.map((k) => text(fields[k])).find((n) => n !== null) ?? null,
    uuid: null,
    busId: null,
    memoryUsedMiB: bytesToMiB(fields[KEY_USED]),
    memoryTotalMiB: bytesToMiB(fields[KEY_TOTAL]),
    utilizationPct: numberIn(fields[KEY_USE], 0, 100),
    temperatureC: temp,
    error: null,
  };
}

/** GPUs from `rocm-smi ... --json` or its text form; [] when the text is neither. */
export function parseRocmSmiGpus(out: string): GpuReading[] {
  if (out.length > MAX_ROCM_CHARS) return [];
  const start = out.indexOf('{');
  if (start >= 0 && out.slice(0, start).trim() === '') {
    let doc: unknown;
    try {
      doc = JSON.parse(out.slice(start));
    } catch {
      return [];
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return [];
    const gpus: GpuReading[] = [];
    for (const [key, fields] of Object.entries(doc as Record<string, unknown>)) {
      const m = /^card(\d{1,4})$/.exec(key);
      if (!m || !fields || typeof fields !== 'object' || Number(m[1]) > MAX_GPU_INDEX || gpus.length >= MAX_GPUS) continue;
      gpus.push(gpuOf(Number(m[1]), fields as Record<string, unknown>));
    }
    return gpus.sort((a, b) => a.index - b.index);
  }
  // Text: "GPU[0]          : VRAM Total Memory (B): 4278190080"
  const byGpu = new Map<number, Record<string, string>>();
  for (const line of out.split('\n', 65536)) {
    if (line.length > MAX_ROW_CHARS) continue;
    const m = /^GPU\[(\d{1,4})\]\s{0,40}: ([A-Za-z][^:]{0,80}): (.{0,200})$/.exec(line.trimEnd());
    if (!m || Number(m[1]) > MAX_GPU_INDEX) continue;
    const fields = byGpu.get(Number(m[1])) ?? {};
    fields[m[2].trim()] = m[3];
    if (byGpu.size < MAX_GPUS || byGpu.has(Number(m[1]))) byGpu.set(Number(m[1]), fields);
  }
  return [...byGpu].sort(([a], [b]) => a - b).map(([i, f]) => gpuOf(i, f));
}

/**
 * Processes from `rocm-smi --showpids`: pid, name and VRAM used (null for UNKNOWN). `gpuCount` places them:
 * on GPU 0 where the host has one GPU, else on no GPU (the table does not say which).
 */
export function parseRocmSmiPids(out: string, gpuCount: number): ProcessReading[] {
  if (out.length > MAX_ROCM_CHARS) return [];
  const processes: ProcessReading[] = [];
  let inTable = false;
  for (const raw of out.split('\n', 65536)) {
    if (raw.length > MAX_ROW_CHARS) continue;
    const line = raw.trimEnd();
    if (/^PID\s+PROCESS NAME\s+GPU\(s\)\s+VRAM USED\b/.test(line)) {
      inTable = true;
      continue;
    }
    if (!inTable) continue;
    if (line === '' || line.startsWith('=')) {
      inTable = false;
      continue;
    }
    const cells = line.includes('\t')
      ? line.split('\t').map((c) => c.trim())
      : (() => {
          const t = line.split(/\s+/);
          // The name may hold spaces: pid first, the four counts last.
          return t.length >= 6 ? [t[0], t.slice(1, -4).join(' '), ...t.slice(-4)] : t;
        })();
    if (cells.length < 6 || !/^\d{1,10}$/.test(cells[0])) continue;
    const pid = Number(cells[0]);
    if (pid <= 0 || pid > MAX_PID || processes.length >= MAX_PROCESSES) continue;
    processes.push({
      gpuIndex: gpuCount === 1 ? 0 : null,
      gpuUuid: null,
      pid,
      name: cells[1] || null,
      memoryMiB: bytesToMiB(cells[3]),
      type: 'C',
    });
  }
  return processes;
}
