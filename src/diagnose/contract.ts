// The JSON shape `gpu-doctor diagnose --json` prints (see README): best diagnosis first.
import type { DiagnoseResult } from './diagnose.js';
import { english } from '../core/message.js';
import type { LogInput } from './input.js';
import { flatView } from './incident/index.js';

export function toJsonContract(result: DiagnoseResult, input?: LogInput) {
  const r = result.readings;
  return {
    diagnoses: result.diagnoses.map((d) => ({
      rule: d.rule,
      category: d.category,
      title: d.title,
      evidence: d.evidence,
      facts: flatView(d.incident),
      fixes: d.fixes.map((f) => ({
        summary: f.summary,
        changes: f.changes,
        ...(f.env ? { env: f.env } : {}),
        ...(f.command ? { command: f.command } : {}),
        ...(f.code ? { code: f.code } : {}),
      })),
      source: d.source,
    })),
    readings: {
      gpus: r.gpus.map((g) => ({
        index: g.index,
        name: g.name,
        memoryUsedMiB: g.memoryUsedMiB,
        memoryTotalMiB: g.memoryTotalMiB,
        utilizationPct: g.utilizationPct,
      })),
      processes: r.processes.map((p) => ({ gpuIndex: p.gpuIndex, pid: p.pid, name: p.name, memoryMiB: p.memoryMiB })),
      hostMemory: r.hostMemory
        ? {
            totalBytes: r.hostMemory.totalBytes,
            availableBytes: r.hostMemory.availableBytes,
            usedBytes: r.hostMemory.usedBytes,
            swapTotalBytes: r.hostMemory.swapTotalBytes,
          }
        : null,
      // Notes in English: the JSON is read by scripts and operators (the README's contract).
      ...(r.notes?.length ? { notes: r.notes.map(english) } : {}),
    },
    ...(result.notMemory ? { notMemory: { exception: result.notMemory.type, message: result.notMemory.message } } : {}),
    ...(input ? { input: { bytesTotal: input.bytesTotal, bytesRead: input.bytesRead, notes: input.notes.map(english) } } : {}),
  };
}
