// The "Processes:" table of a pasted nvidia-smi: who held each GPU when the reporter looked. nvidia-smi's fixed row
// layouts across driver versions:
//   up to ~440   "|    0     32317      C   python                                      7773MiB |"   (GPU PID Type name usage)
//   450 and on   "|    0   N/A  N/A      3240      C   uwsgi                            3233MiB |"   (GPU GI CI PID Type name usage)
// Type is C (compute), G (graphics), C+G or M (MPS); Windows under WDDM prints "N/A" for the usage (not read: no figure).
// Two readings use it (holder.ts): a failure with no figure of its own beside GiBs held on its GPU by listed processes
// (others hold the card), and several workers of one pre-fork server on one GPU (each worker loads its own copy of the
// model: the service itself fills the card, nothing foreign to stop). Bounded per line, linear.
import type { LogText } from './normalize.js';
import type { SmiProcess } from './incident/processes.js';

const MAX_LINES = 5000;
const MAX_LINE = 300;
const PROCESS_ROW =
  /^\|\s{1,8}(\d{1,2})\s{1,8}(?:(?:N\/A|\d{1,3})\s{1,8}(?:N\/A|\d{1,3})\s{1,8})?(\d{1,10})\s{1,8}(?:C\+G|C|G|M\+C|M)\s{1,8}(\S[^|\n]{0,160}?)\s{1,80}(\d{1,7})\s?MiB\s{0,8}\|/;

// `nvidia-smi --query-compute-apps=... --format=csv`: a header of nvidia-smi's own field names ("pid, process_name,
// used_gpu_memory [MiB]", optionally gpu_uuid / gpu_bus_id / gpu_name / timestamp), then one row a process
// ("3858903, VLLM::EngineCore, 6265 MiB"; "27220, ollama.exe, 12497" with nounits). The query lists every GPU's processes
// and names no index: its rows count for a GPU only when they are of one device (one gpu_uuid / gpu_bus_id value), or
// the command shown above the header picked the device (nvidia-smi -i N / --id=N); then that index, else the run's GPU.
const CSV_FIELD = /^(?:timestamp|gpu_name|gpu_bus_id|gpu_uuid|gpu_serial|pid|process_name|name|used_gpu_memory|used_memory)(?: \[MiB\])?$/;
const CSV_DEVICE_PICKED = /nvidia-smi\s{1,3}(?:-i\s{0,2}|--id=)(\d{1,2})\b[^\n]{0,80}--query-compute-apps/;

/** The rows of one compute-apps CSV whose header starts at line `l`; `gpu` -1 where the device cannot be told. */
function readComputeAppsCsv(log: LogText, l: number, header: string[]): SmiProcess[] {
  const col = (...names: string[]) => header.findIndex((h) => names.includes(h.replace(/ \[MiB\]$/, '')));
  const [pid, name, mem, dev] = [col('pid'), col('process_name', 'name'), col('used_gpu_memory', 'used_memory'), col('gpu_uuid', 'gpu_bus_id')];
  if (pid === -1 || mem === -1) return [];
  const picked = l > 0 ? CSV_DEVICE_PICKED.exec(log.line(l - 1).slice(0, MAX_LINE)) : null;
  const rows: { row: SmiProcess; device?: string }[] = [];
  for (let r = l + 1; r < log.lineCount && r <= l + 64; r++) {
    const cells = log.line(r).slice(0, MAX_LINE).split(', ');
    if (cells.length !== header.length) break;
    const used = /^(\d{1,7})(?: MiB)?$/.exec(cells[mem].trim());
    if (!/^\d{1,10}$/.test(cells[pid].trim()) || !used) break;
    const proc = name === -1 ? '?' : cells[name].trim();
    rows.push({
      row: { gpu: -1, pid: Number(cells[pid]), name: proc.slice(proc.search(/[^\\/]*$/)), usedMiB: Number(used[1]) },
      device: dev === -1 ? undefined : cells[dev].trim(),
    });
  }
  const oneDevice = dev !== -1 && rows.length > 0 && new Set(rows.map((x) => x.device)).size === 1;
  const gpu = picked ? Number(picked[1]) : oneDevice ? -2 : -1;
  return rows.map((x) => ({ ...x.row, gpu }));
}

/** Every row of the pasted process tables that states its memory (the first table's rows; a pid seen again is skipped). */
export function readSmiProcesses(log: LogText): SmiProcess[] {
  const rows: SmiProcess[] = [];
  const seen = new Set<string>();
  const stop = Math.min(log.lineCount, MAX_LINES);
  for (let l = 0; l < stop && rows.length < 64; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (line.startsWith('pid, ') || line.startsWith('gpu_') || line.startsWith('timestamp, ')) {
      const header = line.trim().split(', ');
      if (header.length <= 8 && header.every((h) => CSV_FIELD.test(h))) {
        for (const row of readComputeAppsCsv(log, l, header)) if (rows.length < 64) rows.push(row);
        continue;
      }
    }
    if (!line.startsWith('|') || !line.includes('MiB')) continue;
    const m = PROCESS_ROW.exec(line);
    if (!m) continue;
    const key = `${m[1]}:${m[2]}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const name = m[3].trim();
    rows.push({ gpu: Number(m[1]), pid: Number(m[2]), name: name.slice(name.search(/[^\\/]*$/)), usedMiB: Number(m[4]) });
  }
  return rows;
}

// Pre-fork servers whose workers are separate processes, each importing the app (and its model) on its own.
const SERVER_WORKER = /^(?:uwsgi|gunicorn|celery|uvicorn|hypercorn|daphne)\b/i;

/** Two or more workers of one pre-fork server on the GPU, holding most of what the table lists there. */
/** The row is on GPU `g`: its own index, or a CSV row of one unnamed device (-2), taken as the run's GPU. */
const onGpu = (r: SmiProcess, g: number | undefined) => r.gpu === -2 || (r.gpu >= 0 && r.gpu === (g ?? r.gpu));

export function serverWorkersOnGpu(rows: readonly SmiProcess[], gpu: number | undefined): { name: string; rows: SmiProcess[] } | undefined {
  const here = rows.filter((r) => onGpu(r, gpu));
  const byName = new Map<string, SmiProcess[]>();
  for (const r of here) {
    const m = SERVER_WORKER.exec(r.name);
    if (m) byName.set(m[0].toLowerCase(), [...(byName.get(m[0].toLowerCase()) ?? []), r]);
  }
  const total = here.reduce((s, r) => s + r.usedMiB, 0);
  for (const [name, workers] of byName) {
    const held = workers.reduce((s, r) => s + r.usedMiB, 0);
    if (workers.length >= 2 && held >= 0.8 * total && new Set(workers.map((w) => w.gpu)).size === 1) return { name, rows: workers };
  }
  return undefined;
}

/** What the listed processes hold on the run's GPU (the error's index, else GPU 0), with the rows. */
export function heldOnGpu(rows: readonly SmiProcess[], gpu: number | undefined): { gpu: number; mib: number; rows: SmiProcess[] } {
  const g = gpu ?? 0;
  const here = rows.filter((r) => onGpu(r, g));
  return { gpu: g, mib: here.reduce((s, r) => s + r.usedMiB, 0), rows: here };
}
