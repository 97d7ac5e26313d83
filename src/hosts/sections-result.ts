// Status and mem answers from the fixed commands' output sections: the same for an SSH host (one exec
// prints them all) and for localhost (each command run here).
import type { HostMemResult, HostStatusResult } from '../core/services.js';
import { attachPs, hidesPids, migMemory, parseCgroups, parseMemSection, parsePs, parseStatusSections, type PsRow, type Sections } from './parse.js';
import { errorText, type Text } from '../core/message.js';
import { hostFailure, hostWarnings } from './source.js';

export interface StatusReads {
  /** The status command's sections. */
  sections(): Promise<Sections>;
  /** ps output for these pids (the status sections may carry it already). */
  ps(sections: Sections, pids: number[]): Promise<string>;
  /** The cgroup and proc sections, when not read with the status command (localhost reads /proc). */
  containers?(pids: number[]): Promise<Pick<Sections, 'cgroup' | 'proc'>>;
}

export async function statusFromSections(name: string, reads: StatusReads): Promise<HostStatusResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const sections = await reads.sections();
    const parsed = parseStatusSections(sections);
    if ('error' in parsed) return hostFailure(name, parsed.error, ms());
    const pids = [...new Set(parsed.processes.map((p) => p.pid))].slice(0, 512);
    let ps = new Map<number, PsRow>();
    let warnings: Text[] = parsed.problems ?? (parsed.warning ? [parsed.warning] : []);
    if (pids.length) {
      try {
        ps = parsePs(await reads.ps(sections, pids));
      } catch (e) {
        warnings = [`process owners unavailable: ${(e as Error).message}`];
      }
    }
    const host = reads.containers && pids.length ? await reads.containers(pids) : sections;
    const memory = parseMemSection(sections.free);
    return {
      name,
      ok: true,
      elapsedMs: ms(),
      gpus: parsed.gpus,
      processes: attachPs(parsed.processes, ps, Date.now(), { containers: parseCgroups(host.cgroup?.out ?? ''), hidepid: hidesPids(host.proc) }),
      ...('error' in memory ? {} : { memory }),
      ...hostWarnings(warnings),
    };
  } catch (e) {
    return hostFailure(name, errorText(e, 300), ms());
  }
}

export async function memFromSections(name: string, sections: () => Promise<Sections>): Promise<HostMemResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const read = await sections();
    const memory = parseMemSection(read.free);
    if ('error' in memory) return hostFailure(name, memory.error, ms());
    const mig = migMemory(read);
    return { name, ok: true, elapsedMs: ms(), memory, ...(mig.length ? { mig } : {}) };
  } catch (e) {
    return hostFailure(name, errorText(e, 300), ms());
  }
}
