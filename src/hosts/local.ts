// The built-in `localhost` (no hosts configured): the same fixed commands, run here with execFile,
// no shell, one command each.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { message, MessageError } from '../core/message.js';
import type { HostMemResult, HostStatusResult } from '../core/services.js';
import type { Section, Sections } from './parse.js';
import type { HostEntry } from './registry.js';
import { memFromSections, statusFromSections } from './sections-result.js';
import { hostInfo, type HostSource } from './source.js';
import {
  CGROUP_CONTAINER_ID,
  FREE_ARGS,
  MAX_PS_PIDS,
  pidList,
  PS_FORMAT_ARGS,
  REMOTE_SMI_TIMEOUT_S,
  ROCM_GPU_ARGS,
  ROCM_PIDS_ARGS,
  ROCM_TABLE_ARGS,
  SMI_APPS_ARGS,
  SMI_GPU_ARGS,
  SMI_HEALTH_FIELD_LISTS,
  SMI_HEALTH_FORMAT,
  SMI_MIG_LINE_TEXT,
  SMI_UNKNOWN_FIELD_TEXT,
} from './remote-commands.js';

function run(file: string, args: readonly string[], timeoutMs: number): Promise<Section> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, killSignal: 'SIGKILL', env: { ...process.env, LC_ALL: 'C' }, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      const out = String(stdout) + String(stderr);
      if (!err) return resolve({ out, code: 0 });
      const e = err as NodeJS.ErrnoException & { code?: string | number; killed?: boolean };
      if (e.code === 'ENOENT') return resolve({ out: `${file}: command not found`, code: 127 });
      if (e.killed) return resolve({ out, code: 124 });
      resolve({ out, code: typeof e.code === 'number' ? e.code : 1 });
    });
  });
}

/** The MIG sections as the status script reads them: `nvidia-smi -L`, and the default table only where it lists a MIG device. */
async function localMig(t: number): Promise<Pick<Sections, 'miglist' | 'mig'>> {
  const list = await run('nvidia-smi', ['-L'], t);
  if (!list.out.includes(SMI_MIG_LINE_TEXT)) return { mig: { out: '', code: list.code } };
  return { miglist: list, mig: await run('nvidia-smi', [], t) };
}

/**
 * Power, ECC, pending retirements / remaps and clock reasons, as the status script's health loop reads them: the
 * field lists newest first, the next only where the driver refused a field by name; the section's first line
 * names the list that answered.
 */
async function localHealth(t: number): Promise<Section> {
  let last: Section = { out: '', code: 1 };
  for (const fields of SMI_HEALTH_FIELD_LISTS) {
    last = await run('nvidia-smi', [`--query-gpu=${fields}`, SMI_HEALTH_FORMAT], t);
    if (last.code === 0) return { out: `${fields}\n${last.out}`, code: 0 };
    if (!last.out.includes(SMI_UNKNOWN_FIELD_TEXT)) break;
  }
  return last;
}

export async function localStatus(timeoutMs: number): Promise<Sections> {
  const t = Math.min(timeoutMs, REMOTE_SMI_TIMEOUT_S * 1000);
  const [gpu, apps, free] = await Promise.all([run('nvidia-smi', SMI_GPU_ARGS, t), run('nvidia-smi', SMI_APPS_ARGS, t), run('free', FREE_ARGS, t)]);
  // AMD: rocm-smi where nvidia-smi is not installed, as on an SSH host.
  if (gpu.code === 127) {
    const [rocm, rocmtable, rocmpids] = await Promise.all([
      run('rocm-smi', ROCM_GPU_ARGS, t),
      run('rocm-smi', ROCM_TABLE_ARGS, t),
      run('rocm-smi', ROCM_PIDS_ARGS, t),
    ]);
    return { gpu, apps, free, rocm, rocmtable, rocmpids };
  }
  // Health and MIG only where the memory query worked, as on an SSH host.
  if (gpu.code !== 0) return { gpu, apps, free };
  const [health, mig] = await Promise.all([localHealth(t), localMig(t)]);
  return { gpu, apps, free, health, ...mig };
}

export async function localMem(timeoutMs: number): Promise<Sections> {
  const t = Math.min(timeoutMs, REMOTE_SMI_TIMEOUT_S * 1000);
  const [free, mig] = await Promise.all([run('free', FREE_ARGS, timeoutMs), localMig(t)]);
  return { free, ...mig };
}

export async function localPs(pids: number[], timeoutMs: number): Promise<Section> {
  return run('ps', [...PS_FORMAT_ARGS, '-p', pidList(pids)], timeoutMs);
}

/**
 * What the status command's cgroup and proc sections read on a remote host, read here from /proc with
 * no process started: the first cgroup line of each pid naming a 64-hex container id, and hidepid.
 */
export async function localContainerSections(pids: readonly number[]): Promise<Pick<Sections, 'cgroup' | 'proc'>> {
  const id = new RegExp(CGROUP_CONTAINER_ID);
  const lines = await Promise.all(
    pids
      .slice(0, MAX_PS_PIDS)
      .filter((p) => Number.isSafeInteger(p) && p > 0)
      .map(async (pid) => {
        const text = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '');
        const line = text.split('\n').find((l) => id.test(l));
        return line ? `${pid} ${line.slice(0, 300)}` : null;
      }),
  );
  const mounts = await readFile('/proc/mounts', 'utf8').catch(() => '');
  const hidepid = mounts
    .split('\n')
    .filter((l) => /^\S+ \/proc proc /.test(l))
    .map((l) => /hidepid=[a-z0-9]+/.exec(l)?.[0])
    .find(Boolean);
  return { cgroup: { out: lines.filter(Boolean).join('\n'), code: 0 }, proc: { out: hidepid ?? '', code: 0 } };
}

/** The built-in `localhost`, listed when no host is configured. */
export const LOCAL_HOST: HostEntry = { name: 'localhost', host: 'localhost', origin: 'local' };

/** localhost as a host source: the fixed commands run here, each bounded by the exec timeout. */
export class LocalHostSource implements HostSource {
  readonly label = 'localhost';
  constructor(private readonly execTimeoutMs: number) {}

  status(entry: HostEntry): Promise<HostStatusResult> {
    return statusFromSections(entry.name, {
      sections: () => localStatus(this.execTimeoutMs),
      ps: async (sections, pids) => sections.ps?.out ?? (await localPs(pids, this.execTimeoutMs)).out,
      containers: (pids) => localContainerSections(pids),
    });
  }

  mem(entry: HostEntry): Promise<HostMemResult> {
    return memFromSections(entry.name, () => localMem(this.execTimeoutMs));
  }

  info(entry: HostEntry) {
    return hostInfo(entry, 'local');
  }

  trust(): Promise<never> {
    return Promise.reject(new MessageError(message('reason.hosts.localTrust')));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
