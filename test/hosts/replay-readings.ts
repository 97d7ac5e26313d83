// Readings that change over time for the fake nvidia-smi / ps of sshd-harness.ts: the real 8x H200
// reading (fixtures 13 + 37, as fixtureData builds it), then the same host after some of its processes
// ended. An ended process loses its compute-apps row and its ps line, and its GPU's memory.used drops by
// the memory the real table (fixture 13) lists for that process, which leaves what the table shows the
// GPU holding besides it (10 MiB). Nothing else is made up.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostStatusResult } from '../../src/core/services.js';
import { english } from '../../src/core/message.js';
import { attachPs, parsePs, parseStatusSections } from '../../src/hosts/parse.js';
import { parseSmiTable } from '../../src/readings/nvidia-smi-table.js';
import { fixtureData, fixturesDir } from './sshd-harness.js';

export interface Reading {
  gpuCsv: string;
  appsCsv: string;
  psTxt: string;
}

/** The 8x H200 host after the processes on `gpus` ended (none: the reading as captured). */
export function h200After(gpus: number[] = []): Reading {
  const base = fixtureData('h200');
  const table = parseSmiTable(readFileSync(join(fixturesDir, 'nvidia-smi/13-8x-h200-8procs-570.txt'), 'utf8'));
  const gone = new Set(gpus);
  const uuidOf = new Map<string, number>();
  const gpuLines = base.gpuCsv
    .trim()
    .split('\n')
    .map((line) => {
      const cells = line.split(', ');
      const index = Number(cells[0]);
      uuidOf.set(cells[1], index);
      if (gone.has(index)) {
        const proc = table.processes.find((p) => p.gpuIndex === index)!;
        cells[3] = String(Number(cells[3]) - proc.memoryMiB!);
      }
      return cells.join(', ');
    });
  const endedPids = new Set<string>();
  const appsLines = base.appsCsv
    .trim()
    .split('\n')
    .filter((line) => {
      const [uuid, pid] = line.split(', ');
      if (gone.has(uuidOf.get(uuid)!)) {
        endedPids.add(pid);
        return false;
      }
      return true;
    });
  const psLines = base.psTxt
    .trim()
    .split('\n')
    .filter((line) => !endedPids.has(line.trim().split(/\s+/)[0]));
  const text = (lines: string[]) => (lines.length ? lines.join('\n') + '\n' : '');
  return { gpuCsv: text(gpuLines), appsCsv: text(appsLines), psTxt: text(psLines) };
}

/** Replaces what the host's fake nvidia-smi and ps answer from now on (each file swapped whole). */
export function replay(hostDir: string, r: Reading): void {
  for (const [file, body] of [
    ['gpu.csv', r.gpuCsv],
    ['apps.csv', r.appsCsv],
    ['ps.txt', r.psTxt],
  ] as const) {
    writeFileSync(join(hostDir, `${file}.next`), body);
    renameSync(join(hostDir, `${file}.next`), join(hostDir, file));
  }
}

/** A reading as the hosts service reports it (the same parsers, no SSH): for tests of what consumes it. */
export function statusOf(name: string, r: Reading, now = Date.now()): HostStatusResult {
  const parsed = parseStatusSections({ gpu: { out: r.gpuCsv, code: 0 }, apps: { out: r.appsCsv, code: 0 } });
  if ('error' in parsed) return { name, ok: false, error: english(parsed.error) };
  return { name, ok: true, elapsedMs: 0, gpus: parsed.gpus, processes: attachPs(parsed.processes, parsePs(r.psTxt), now) };
}
