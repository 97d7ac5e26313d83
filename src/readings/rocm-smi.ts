// AMD GPUs: what `rocm-smi` (ROCm 5 and later) prints for memory and utilisation, and its KFD process table.
//   --json:  {"card0": {"GPU use (%)": "0", "VRAM Total Memory (B)": "21458059264", "VRAM Total Used Memory (B)": "27856896", "Card Series": "..."}}
//   text:    GPU[0]          : VRAM Total Memory (B): 4278190080
//   --showpids: PID  PROCESS NAME  GPU(s)  VRAM USED  SDMA USED  CU OCCUPANCY  (tab- or space-separated rows)
//   default (no arguments), the concise table, in each generation's layout:
//     GPU  Temp   AvgPwr  SCLK ... PwrCap  VRAM%  GPU%            (ROCm 3 to 5: 24.0c, 3.0W)
//     Device  Node  IDs  Temp  Power  Partitions ... PwrCap  VRAM%  GPU%   (ROCm 6: 39.0°C, a second header line)
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

/** What the concise table (`rocm-smi` with no arguments) says of one device. */
export interface RocmConciseRow {
  index: number;
  /** The table's one temperature: edge, or junction where the card has no edge sensor (MI300). */
  temperatureC: number | null;
  /** Average (older) or socket (ROCm 6) power, and the power cap, W. */
  powerDrawW: number | null;
  powerCapW: number | null;
  utilizationPct: number | null;
}

const CONCISE_TEMP = /^(-?\d{1,3}(?:\.\d{1,2})?)(?:c|°C)$/;
const CONCISE_WATTS = /^(\d{1,5}(?:\.\d{1,3})?)W$/;
const CONCISE_PCT = /^(\d{1,3})%$/;
const CONCISE_CLOCK = /^\d{1,6}Mhz$/i;

/**
 * The concise table's rows by device. Read by token shape, not column position (the ROCm 6 layout has cells with
 * spaces, "0x744c,   12345", "N/A, N/A, 0"): the first temperature-shaped cell, the power before the clocks and the cap
 * after them, and GPU% as the last cell where the header has that column. A row whose cell is N/A has null there.
 */
export function parseRocmSmiConcise(out: string): RocmConciseRow[] {
  if (out.length > MAX_ROCM_CHARS) return [];
  const rows: RocmConciseRow[] = [];
  let header: string | null = null;
  for (const raw of out.split('\n', 65536)) {
    if (raw.length > MAX_ROW_CHARS) continue;
    const line = raw.trim();
    if (!header) {
      if (/^(GPU|Device)\s/.test(line) && /\sTemp\b/.test(line) && /\s(AvgPwr|Power)\b/.test(line)) header = line;
      continue;
    }
    if (line.includes('End of ROCm SMI Log')) break;
    const cells = line.split(/\s+/);
    if (cells.length < 6 || !/^\d{1,4}$/.test(cells[0]) || Number(cells[0]) > MAX_GPU_INDEX || rows.length >= MAX_GPUS) continue;
    const rest = cells.slice(1);
    const temp = rest.map((c) => CONCISE_TEMP.exec(c)).find((m) => m);
    const clocks = rest.flatMap((c, i) => (CONCISE_CLOCK.test(c) ? [i] : []));
    const watts = rest.flatMap((c, i) => (CONCISE_WATTS.test(c) ? [i] : []));
    const wattsAt = (i: number | undefined) => (i === undefined ? null : Number(CONCISE_WATTS.exec(rest[i])![1]));
    // With clocks to tell them apart: a power cell before the first clock is the draw, after the last the cap. Without: two are draw and cap.
    const draw = clocks.length ? watts.find((i) => i < clocks[0]) : watts.length === 2 ? watts[0] : undefined;
    const cap = clocks.length ? watts.find((i) => i > clocks[clocks.length - 1]) : watts.length === 2 ? watts[1] : undefined;
    const gpuPct = /\sGPU%$/.test(header) ? CONCISE_PCT.exec(rest[rest.length - 1]) : null;
    const tempC = temp ? Number(temp[1]) : NaN;
    rows.push({
      index: Number(cells[0]),
      temperatureC: Number.isFinite(tempC) && tempC >= -50 && tempC <= 200 ? tempC : null,
      powerDrawW: wattsAt(draw),
      powerCapW: wattsAt(cap),
      utilizationPct: gpuPct && Number(gpuPct[1]) <= 100 ? Number(gpuPct[1]) : null,
    });
  }
  return rows;
}
