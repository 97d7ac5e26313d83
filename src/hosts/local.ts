// The built-in `localhost` (no hosts configured): the same fixed commands, run here with execFile,
// no shell, one command each.
import { execFile } from 'node:child_process';
import type { Section, Sections } from './parse.js';
import { FREE_ARGS, pidList, PS_FORMAT_ARGS, REMOTE_SMI_TIMEOUT_S, SMI_APPS_ARGS, SMI_GPU_ARGS } from './remote-commands.js';

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

export async function localStatus(timeoutMs: number): Promise<Sections> {
  const t = Math.min(timeoutMs, REMOTE_SMI_TIMEOUT_S * 1000);
  const [gpu, apps, free] = await Promise.all([run('nvidia-smi', SMI_GPU_ARGS, t), run('nvidia-smi', SMI_APPS_ARGS, t), run('free', FREE_ARGS, t)]);
  return { gpu, apps, free };
}

export async function localMem(timeoutMs: number): Promise<Sections> {
  return { free: await run('free', FREE_ARGS, timeoutMs) };
}

export async function localPs(pids: number[], timeoutMs: number): Promise<Section> {
  return run('ps', [...PS_FORMAT_ARGS, '-p', pidList(pids)], timeoutMs);
}
