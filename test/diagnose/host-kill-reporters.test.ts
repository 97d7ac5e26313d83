// The kill of a process for host memory as each reporter words it, from their fixed formats: other shells' reports of a
// SIGKILLed job (zsh "zsh: killed  CMD", fish "terminated by signal SIGKILL", bash on macOS "Killed: 9"), Kubernetes'
// kubelet eviction for the node's memory, systemd-oomd's kill under memory pressure, Slurm's job memory accounting, VS
// Code's notice for a vanished notebook kernel. All synthetic, written from the formats (no blind8 case carries them);
// near misses beside them. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste } from './corpus-case.js';

describe("host-memory kills in their reporters' words", () => {
  it.each([
    ['zsh', 'zsh: killed     python generate.py --ckpt_dir ./Wan2.1-T2V-14B'],
    ['fish', "fish: Job 1, 'python train.py' terminated by signal SIGKILL (Forced quit)"],
    ['macOS bash', 'Loading checkpoint shards:  50%|█████     | 1/2\nKilled: 9'],
    [
      'kubelet eviction',
      'Reason:         Evicted\nMessage:        The node was low on resource: memory. Threshold quantity: 100Mi, available: 85Mi. Container trainer was using 61Gi, request is 32Gi, has larger consumption of memory.',
    ],
    [
      'systemd-oomd',
      'systemd-oomd[812]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/app-python.scope due to memory pressure for /user.slice/user-1000.slice being 82.35% > 50.00% for > 20s with reclaim activity',
    ],
    ['slurm job', 'slurmstepd: error: Exceeded job memory limit'],
    ['slurm step', 'slurmstepd: error: Exceeded step memory limit at some point.'],
    [
      'VS Code notebook',
      'The Kernel crashed while executing code in the current cell or a previous cell. Please review the code in the cell(s) to identify a possible cause of the failure.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });

  // synthetic near misses: an eviction for disk, a shell's kill by another signal
  it.each([
    ['disk eviction', 'Message: The node was low on resource: ephemeral-storage.'],
    ['zsh segfault', 'zsh: segmentation fault  python train.py'],
  ])('synthetic near miss: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category ?? 'none').not.toBe('host_oom_killed');
  });
});
