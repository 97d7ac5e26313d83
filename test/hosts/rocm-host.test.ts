// AMD GPUs (issue 25 §2): a host with rocm-smi and no nvidia-smi answers `/gpu status` over a real sshd, through
// the bot as `createApp` builds it. Its rocm-smi answers the bot's two fixed calls with real outputs
// (test/fixtures/rocm-smi/README.md); ps is the harness's (synthetic columns, labelled there).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { createApp, type App } from '../../src/app.js';
import type { CommandContext } from '../../src/core/command.js';
import { FIXED_COMMAND_PATTERNS } from '../../src/hosts/remote-commands.js';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';

describeWithSshd('a ROCm host answers status over real sshd', 'test/hosts/rocm-host.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-rocm-'));
  const inst: Record<string, SshdInstance> = {};
  let app: App;
  const run = async (line: string, locale: 'en' | 'zh' = 'en') => {
    const ctx: CommandContext = { platform: 'slack', userId: 'U1AMD', isAdmin: false, services: app.services, locale };
    const out = await app.registry.dispatch(line, ctx);
    return { reply: out.reply, text: renderText(out.reply) };
  };

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    [inst.amd, inst.none] = await Promise.all([
      startSshd(join(root, 'amd'), key.pub, { skipShellRc: true, data: 'rocm' }),
      startSshd(join(root, 'none'), key.pub, { skipShellRc: true, mode: 'missing' }),
    ]);
    writeFileSync(
      join(root, 'config.yaml'),
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        '  connect_timeout_ms: 6000',
        '  exec_timeout_ms: 8000',
        'hosts:',
        ...Object.entries(inst).map(([name, i]) => `  - { name: ${name}, host: 127.0.0.1, port: ${i.port}, host_key: "${i.fingerprint}" }`),
        '',
      ].join('\n'),
    );
    app = await createApp(join(root, 'config.yaml'));
  });

  afterAll(async () => {
    await app?.close();
    await Promise.all(Object.values(inst).map((i) => i.stop()));
    rmSync(root, { recursive: true, force: true });
  });

  it('shows the AMD card (name, memory, utilisation) and its KFD processes with their owners', async () => {
    const { reply, text } = await run('/gpu status amd');
    expect(reply.severity, text).toBe('ok');
    const gpus = reply.sections[0].table!;
    expect(gpus.rows).toHaveLength(1);
    expect(gpus.rows[0].slice(0, 2)).toEqual(['0', 'Radeon RX 7900 XT']);
    expect(gpus.rows[0][2]).toMatch(/ 27\/20464 MiB$/);
    expect(gpus.rows[0][3]).toBe('0%');
    // Temperature and power (draw / cap) from the default concise table's device 0 (its columns follow the error-free health ones).
    expect(gpus.columns.slice(4, 6)).toEqual(['Temp', 'Power']);
    expect(gpus.rows[0].slice(4, 6)).toEqual(['28°C', '79/303 W']);
    const procs = reply.sections[1].table!;
    // One card: every process is on it; VRAM USED is UNKNOWN on that host, so no GPU memory figure.
    expect(procs.rows.map((r) => r.slice(0, 4))).toEqual([
      ['0', 'erin', '55573', 'n/a'],
      ['0', 'erin', '55571', 'n/a'],
      ['0', 'erin', '55574', 'n/a'],
      ['0', 'erin', '55572', 'n/a'],
    ]);
    expect(text).toContain('gmx_mpi -deffnm md');
    expect(text).not.toContain('GPUs that need attention');
    const sent = readFileSync(inst.amd.auditLog, 'utf8').trim().split('\n');
    for (const c of sent)
      expect(
        FIXED_COMMAND_PATTERNS.some((p) => p.test(c)),
        c,
      ).toBe(true);
  });

  it('a host with neither nvidia-smi nor rocm-smi still says nvidia-smi is not found', async () => {
    const { text } = await run('/gpu status none');
    expect(text).toContain('nvidia-smi not found');
  });
});
