// Turns what the fixed remote commands printed into the status / mem result shapes, with the
// readings parsers. Failures become one plain line.
import { english, message, type Text } from '../core/message.js';
import type { GpuProcessStatus, GpuStatus, HostMemory, HostMigMemory, MigInstanceStatus } from '../core/services.js';
import { parseFree } from '../readings/free.js';
import type { ReadingNote } from '../readings/notes.js';
import { joinProcessesToGpus, parseSmiCsvWithFields, SMI_APPS_QUERY_FIELDS, SMI_GPU_QUERY_FIELDS } from '../readings/nvidia-smi-csv.js';
import { findSmiErrors } from '../readings/nvidia-smi-errors.js';
import { parseSmiHealth, type GpuHealth } from '../readings/nvidia-smi-health.js';
import { parseSmiList } from '../readings/nvidia-smi-list.js';
import { parseSmiTable } from '../readings/nvidia-smi-table.js';
import { parseRocmSmiConcise, parseRocmSmiGpus, parseRocmSmiPids } from '../readings/rocm-smi.js';
import type { PsRow } from '../readings/ps.js';
import type { GpuReading } from '../readings/types.js';
import { SECTION_MARK } from './remote-commands.js';

export interface Section {
  out: string;
  code: number | null;
}
export type Sections = Partial<
  Record<'gpu' | 'miglist' | 'mig' | 'health' | 'apps' | 'rocm' | 'rocmtable' | 'rocmpids' | 'free' | 'ps' | 'cgroup' | 'proc', Section>
>;

const MARK_LINE = new RegExp(`^${SECTION_MARK} (gpu|miglist|mig|health|apps|rocm|rocmtable|rocmpids|free|ps|cgroup|proc) (\\d+)$`);

/** Splits the combined STATUS_COMMAND / MEM_COMMAND output at its marker lines. */
export function splitSections(output: string): Sections {
  const sections: Sections = {};
  let buf: string[] = [];
  for (const line of output.split('\n')) {
    const m = MARK_LINE.exec(line.trimEnd());
    if (m) {
      sections[m[1] as 'gpu'] = { out: buf.join('\n'), code: Number(m[2]) };
      buf = [];
    } else buf.push(line);
  }
  return sections;
}

/** The one-line reason an nvidia-smi section failed, or null when it worked. */
export function smiFailure(s: Section | undefined): Text | null {
  if (!s) return message('reason.parse.noSmiOutput');
  if (s.code === 0) return null;
  const text = s.out;
  if (s.code === 127 || (/command not found|No such file or directory|not found/i.test(text) && !/No devices were found/.test(text))) {
    if (s.code === 127 || /nvidia-smi/.test(text)) return message('reason.parse.noSmi');
  }
  if (s.code === 124 || s.code === 137) return message('reason.parse.smiTimeout');
  const errors = findSmiErrors(text);
  if (errors.length) {
    const e = errors[0];
    if (/couldn't communicate with the NVIDIA driver|Failed to initialize NVML|version mismatch|NVML library version/i.test(e))
      return message('reason.parse.driver', { error: short(e) });
    return short(e);
  }
  const first = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return `nvidia-smi failed (exit ${s.code})${first ? `: ${short(first)}` : ''}`;
}

function short(s: string, n = 160): string {
  const clean = s.replace(/[\x00-\x1f\x7f]/g, ' ').trim();
  return clean.length > n ? clean.slice(0, n - 1) + '…' : clean;
}

export interface MigReading {
  /** Each MIG GPU's instances, by GPU index. */
  byGpu: Map<number, MigInstanceStatus[]>;
  /** The GPU and compute instance of each process the table lists. */
  byPid: Map<number, { gi: number | null; ci: number | null }>;
}

/**
 * The MIG sections: `nvidia-smi -L` (profiles) and the default table (instances' ids and memory, processes'
 * GI / CI). Null where no GPU has MIG on, or where either command failed.
 */
export function parseMigSections(sections: Sections): MigReading | null {
  if (sections.miglist?.code !== 0 || sections.mig?.code !== 0) return null;
  const profiles = parseSmiList(sections.miglist.out);
  const table = parseSmiTable(sections.mig.out);
  const byGpu = new Map<number, MigInstanceStatus[]>();
  for (const g of table.gpus) {
    if (!g.mig?.length) continue;
    byGpu.set(
      g.index,
      g.mig.map((m) => ({
        gi: m.gi,
        ci: m.ci,
        device: m.migIndex,
        profile: m.migIndex === null ? null : (profiles.get(g.index)?.get(m.migIndex) ?? null),
        memoryUsedMiB: m.memoryUsedMiB,
        memoryTotalMiB: m.memoryTotalMiB,
      })),
    );
  }
  const byPid = new Map<number, { gi: number | null; ci: number | null }>();
  for (const p of table.processes) if (p.gi !== undefined || p.ci !== undefined) byPid.set(p.pid, { gi: p.gi ?? null, ci: p.ci ?? null });
  return byGpu.size ? { byGpu, byPid } : null;
}

/** `mem`'s MIG part: each MIG GPU's instances, in GPU order. */
export function migMemory(sections: Sections): HostMigMemory[] {
  const mig = parseMigSections(sections);
  return mig ? [...mig.byGpu].sort(([a], [b]) => a - b).map(([gpuIndex, instances]) => ({ gpuIndex, instances })) : [];
}

export interface ParsedStatus {
  gpus: GpuStatus[];
  processes: (GpuProcessStatus & { processName: string | null })[];
  warning?: string;
  /** The warnings for the reply (catalogue messages, a tool's own words); `warning` is them in English. */
  problems?: Text[];
}

/** The fields every GPU reading gives status, whichever tool read it (nvidia-smi's CSV, rocm-smi). */
const statusGpu = (g: GpuReading): GpuStatus => ({
  index: g.index,
  uuid: g.uuid,
  name: g.name,
  memoryUsedMiB: g.memoryUsedMiB,
  memoryTotalMiB: g.memoryTotalMiB,
  utilizationPct: g.utilizationPct,
  temperatureC: g.temperatureC,
  error: g.error,
});

/** An AMD host's reading (rocm-smi's sections, where nvidia-smi is absent), or null where rocm-smi gave none. */
function parseRocmSections(sections: Sections): ParsedStatus | null {
  if (sections.rocm?.code !== 0) return null;
  const gpus = parseRocmSmiGpus(sections.rocm.out);
  if (!gpus.length) return null;
  const pids = sections.rocmpids;
  const processes = pids?.code === 0 ? parseRocmSmiPids(pids.out, gpus.length) : [];
  // The concise table's temperature, power and cap by device index (the JSON's own figures win where it has them).
  const table = new Map(sections.rocmtable?.code === 0 ? parseRocmSmiConcise(sections.rocmtable.out).map((r) => [r.index, r]) : []);
  return {
    gpus: gpus.map((g) => {
      const row = table.get(g.index);
      const power = row && (row.powerDrawW !== null || row.powerCapW !== null);
      return {
        ...statusGpu(g),
        temperatureC: g.temperatureC ?? row?.temperatureC ?? null,
        utilizationPct: g.utilizationPct ?? row?.utilizationPct ?? null,
        ...(power
          ? {
              health: {
                powerDrawW: row.powerDrawW,
                powerLimitW: row.powerCapW,
                eccUncorrectedVolatile: null,
                retiredPagesPending: null,
                remappedRowsPending: null,
                remappedRowsFailure: null,
                clockReasons: null,
              },
            }
          : {}),
      };
    }),
    processes: processes.map((p) => ({ gpuIndex: p.gpuIndex, pid: p.pid, user: null, memoryMiB: p.memoryMiB, command: null, processName: p.name })),
    ...(pids?.code === 0 ? {} : { warning: `processes unavailable: rocm-smi --showpids failed (exit ${pids?.code ?? '?'})` }),
  };
}

export function parseStatusSections(sections: Sections): ParsedStatus | { error: Text } {
  const failure = smiFailure(sections.gpu);
  if (failure) return parseRocmSections(sections) ?? { error: failure };
  const { gpus, notes } = parseSmiCsvWithFields(sections.gpu!.out, SMI_GPU_QUERY_FIELDS, 'gpu');
  const mig = parseMigSections(sections);
  const warnings: Text[] = [];
  let processes: ParsedStatus['processes'] = [];
  const appsFailure = smiFailure(sections.apps);
  if (appsFailure) warnings.push(`processes unavailable: ${english(appsFailure)}`);
  else {
    const parsed = parseSmiCsvWithFields(sections.apps!.out, SMI_APPS_QUERY_FIELDS, 'apps');
    notes.push(...parsed.notes);
    processes = joinProcessesToGpus(parsed.processes, gpus).map((p) => ({
      gpuIndex: p.gpuIndex,
      pid: p.pid,
      user: null,
      memoryMiB: p.memoryMiB,
      command: null,
      processName: p.name,
      // The compute-apps query has no GI / CI columns: the table's process rows give them.
      ...(mig?.byPid.has(p.pid) ? mig.byPid.get(p.pid) : {}),
    }));
  }
  // Rows left out for an impossible value (memory.used 99999999999) are named, at most three of them.
  warnings.push(...notes.slice(0, 3));
  if (notes.length > 3) warnings.push(`(+${notes.length - 3})`);
  // Power, ECC, remaps and clock reasons where the host's driver answered the health query (any failure: none).
  const health = sections.health?.code === 0 ? parseSmiHealth(sections.health.out) : new Map<number, GpuHealth>();
  return {
    gpus: gpus.map((g) => ({
      ...statusGpu(g),
      ...(health.has(g.index) ? { health: health.get(g.index) } : {}),
      ...(mig?.byGpu.has(g.index) ? { mig: mig.byGpu.get(g.index) } : {}),
    })),
    processes,
    ...(warnings.length ? { warning: warnings.map(english).join('; '), problems: warnings } : {}),
  };
}

export { parsePs, type PsRow } from '../readings/ps.js';

/**
 * What every view says of a process nvidia-smi lists and the host's `ps` does not know: its pid lives
 * in another pid namespace (a container's, or the host's while the bot's account is inside one), so
 * there is no /proc entry to read its user, command or container from. `status` and `/gpu watch` both
 * show this text.
 */
export const HIDDEN_PID_TEXT = 'in a container (pid not visible on the host)';

/** The same where /proc is mounted with hidepid: then it is anyone's process, hidden from the bot's account. */
export const HIDEPID_TEXT = "not visible to the bot's account (/proc hidepid)";

/** The command cell of such a process: the text above, with nvidia-smi's process name when it had one. */
export function hiddenProcessText(processName: string | null | undefined, hidepid = false): string {
  const name = processName?.trim();
  const why = hidepid ? HIDEPID_TEXT : HIDDEN_PID_TEXT;
  return name && name !== '[Not Found]' ? `${why}: ${name}` : why;
}

/** A container a visible process runs in, read from its /proc/PID/cgroup line. */
export interface ContainerRef {
  /** docker, containerd, cri-o, podman, kubernetes, or null when the path names no runtime. */
  runtime: string | null;
  /** The 64-hex container id. */
  id: string;
  /** The Kubernetes pod's UID where the path is a kubelet's (kubepods): `kubectl get pods -A -o wide` names it. */
  podUid?: string;
}

/**
 * The pod UID in a kubelet's cgroup path: `kubepods-burstable-pod<uid, _ for ->.slice` (systemd driver) or
 * `/kubepods/burstable/pod<uid>/` (cgroupfs driver); a static pod's UID is 32 hex digits without dashes.
 */
const POD_UID = /[/-]pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32})(?:\.slice)?(?:\/|$)/;

const RUNTIMES: [RegExp, string][] = [
  [/(?:^|[/:-])docker[-/]/, 'docker'],
  [/libpod-/, 'podman'],
  [/crio-/, 'cri-o'],
  [/cri-containerd-|containerd[-/]/, 'containerd'],
];

/** The STATUS_COMMAND's cgroup section: `PID <cgroup line>` for each listed pid in a container. */
export function parseCgroups(text: string): Map<number, ContainerRef> {
  const out = new Map<number, ContainerRef>();
  for (const line of text.split('\n').slice(0, 4096)) {
    const m = /^(\d{1,10}) (.{1,300})$/.exec(line.trimEnd());
    if (!m) continue;
    const path = m[2];
    const id = /(?:^|[^0-9a-f])([0-9a-f]{64})(?![0-9a-f])/.exec(path)?.[1];
    if (!id) continue;
    const runtime = RUNTIMES.find(([re]) => re.test(path))?.[1] ?? (/kubepods/.test(path) ? 'kubernetes' : null);
    const pod = /kubepods/.test(path) ? POD_UID.exec(path)?.[1].replace(/_/g, '-') : undefined;
    out.set(Number(m[1]), { runtime, id, ...(pod ? { podUid: pod } : {}) });
  }
  return out;
}

/** Whether the proc section says /proc hides other users' processes (hidepid=2/invisible/4/ptraceable). */
export function hidesPids(s: Section | undefined): boolean {
  return !!s && /hidepid=(2|invisible|4|ptraceable)\b/.test(s.out);
}

/** How a process's container reads in front of its command: `[docker 3f2a9c1b2d4e]`, `[cri-o 5eed91756358 · pod a5c1f8d5]`. */
export const containerLabel = (c: ContainerRef) =>
  `[${c.runtime ? `${c.runtime} ` : 'container '}${c.id.slice(0, 12)}${c.podUid ? ` · pod ${c.podUid.slice(0, 8)}` : ''}]`;

/**
 * Fills owner, command line and start time from ps; a pid ps does not show stays with user null. With the
 * status command's cgroup and proc sections: the container a process runs in goes in front of its
 * command, and a hidden pid is said to be hidden by hidepid rather than by a container.
 */
export function attachPs(
  processes: ParsedStatus['processes'],
  ps: Map<number, PsRow>,
  now = Date.now(),
  host: { containers?: Map<number, ContainerRef>; hidepid?: boolean } = {},
): GpuProcessStatus[] {
  return processes.map(({ processName, ...p }) => {
    const row = ps.get(p.pid);
    if (!row) return { ...p, user: null, command: hiddenProcessText(processName, host.hidepid) };
    const container = host.containers?.get(p.pid);
    const command = row.args || processName;
    return {
      ...p,
      user: row.user,
      command: container ? `${containerLabel(container)} ${command ?? ''}`.trimEnd() : command,
      elapsedSeconds: row.elapsedSeconds,
      cpuPct: row.cpuPct,
      rssBytes: row.rssBytes,
      startedAt: row.elapsedSeconds === null ? null : new Date(now - row.elapsedSeconds * 1000).toISOString(),
    };
  });
}

export function parseMemSection(s: Section | undefined): HostMemory | { error: Text } {
  if (!s) return { error: message('reason.parse.noFreeOutput') };
  if (s.code === 127) return { error: message('reason.parse.noFree') };
  const notes: ReadingNote[] = [];
  const r = parseFree(s.out, { unitBytes: 1 }, notes);
  if (!r && notes.length) return { error: notes[0] };
  if (!r) return { error: s.code ? message('reason.parse.badFreeExit', { code: s.code }) : message('reason.parse.badFree') };
  return {
    totalBytes: r.totalBytes,
    usedBytes: r.usedBytes,
    availableBytes: r.availableBytes,
    swapTotalBytes: r.swapTotalBytes,
    swapUsedBytes: r.swapUsedBytes,
  };
}
