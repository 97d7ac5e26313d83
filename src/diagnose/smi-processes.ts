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

/** Every row of the pasted process tables that states its memory (the first table's rows; a pid seen again is skipped). */
export function readSmiProcesses(log: LogText): SmiProcess[] {
  const rows: SmiProcess[] = [];
  const seen = new Set<string>();
  const stop = Math.min(log.lineCount, MAX_LINES);
  for (let l = 0; l < stop && rows.length < 64; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
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
export function serverWorkersOnGpu(rows: readonly SmiProcess[], gpu: number | undefined): { name: string; rows: SmiProcess[] } | undefined {
  const here = rows.filter((r) => r.gpu === (gpu ?? r.gpu));
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
  const here = rows.filter((r) => r.gpu === g);
  return { gpu: g, mib: here.reduce((s, r) => s + r.usedMiB, 0), rows: here };
}
