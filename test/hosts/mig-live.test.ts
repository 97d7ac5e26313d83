// MIG instances in live status (issue 25 §2), not only in parsed pastes: `/gpu status` and `/gpu mem` through
// the bot as `createApp` builds it, over a real sshd host that answers with the real H200 MIG capture
// (nvidia_gpu_exporter's collect.sh under load: five MIG devices, three processes on GI 2 / CI 1; see
// test/fixtures/readings-peers/README.md). The ps columns are synthetic (sshd-harness.ts says which).
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

describeWithSshd('MIG instances in live status and mem over a real sshd host', 'test/hosts/mig-live.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-mig-'));
  const inst: Record<string, SshdInstance> = {};
  let app: App;
  const run = async (line: string, locale: 'en' | 'zh' = 'en') => {
    const ctx: CommandContext = { platform: 'slack', userId: 'U1MIG', isAdmin: false, services: app.services, locale };
    const out = await app.registry.dispatch(line, ctx);
    return { reply: out.reply, text: renderText(out.reply) };
  };

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    [inst.mig, inst.plain] = await Promise.all([
      startSshd(join(root, 'mig'), key.pub, { skipShellRc: true, data: 'h200-mig' }),
      startSshd(join(root, 'plain'), key.pub, { skipShellRc: true, data: 'h100' }),
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

  it('status lists each MIG instance: GI, CI, device, profile from nvidia-smi -L, memory, and the processes on it', async () => {
    const { reply, text } = await run('/gpu status mig');
    const mig = reply.sections.find((s) => s.heading === 'MIG instances')?.table;
    expect(mig, text).toBeDefined();
    expect(mig!.columns).toEqual(['GPU', 'GI', 'CI', 'MIG dev', 'Profile', 'Memory', 'Processes']);
    // The capture's five devices, in its table's order; the profiles are -L's, the memory the table's.
    expect(mig!.rows.map((r) => r.slice(0, 5))).toEqual([
      ['0', '2', '0', '0', '1c.3g.71gb'],
      ['0', '2', '1', '1', '2c.3g.71gb'],
      ['0', '3', '0', '2', '2g.35gb'],
      ['0', '9', '0', '3', '1g.18gb'],
      ['0', '10', '0', '4', '1g.18gb'],
    ]);
    expect(mig!.rows[0][5]).toMatch(/16925\/71424 MiB$/);
    expect(mig!.rows[2][5]).toMatch(/17\/33280 MiB$/);
    // memhog x2 and gpu_burn run on GI 2 / CI 1 (the table's process rows); the other instances hold none.
    expect(mig!.rows[1][6]).toBe('12249 (dave), 12250 (dave), 12267 (dave)');
    expect(mig!.rows.filter((_, i) => i !== 1).map((r) => r[6])).toEqual(['—', '—', '—', '—']);
    // The whole GPU's row is still there, with the compute-apps query's processes.
    expect(text).toContain('NVIDIA H200');
    expect(text).toContain('12267');
  });

  it('mem lists each MIG instance of a MIG host beside host RAM; a host without MIG shows none', async () => {
    const { reply, text } = await run('/gpu mem mig plain');
    expect(reply.sections[0].table!.rows.map((r) => r[0])).toEqual(['mig', 'plain']);
    const mig = reply.sections.find((s) => s.heading === 'MIG instances of mig')?.table;
    expect(mig, text).toBeDefined();
    expect(mig!.rows.map((r) => [r[4], r[5].replace(/^\S+ /, '')])).toEqual([
      ['1c.3g.71gb', '16925/71424 MiB'],
      ['2c.3g.71gb', '16925/71424 MiB'],
      ['2g.35gb', '17/33280 MiB'],
      ['1g.18gb', '9/16384 MiB'],
      ['1g.18gb', '9/16384 MiB'],
    ]);
    expect(text).not.toContain('MIG instances of plain');
    const plain = await run('/gpu status plain');
    expect(plain.reply.sections.some((s) => s.heading === 'MIG instances')).toBe(false);
  });

  it('in Chinese, and every command sent was one of the fixed ones', async () => {
    const { text } = await run('/gpu status mig', 'zh');
    expect(text).toContain('MIG 实例');
    expect(text).toContain('配置');
    const sent = readFileSync(inst.mig.auditLog, 'utf8').trim().split('\n');
    expect(sent.length).toBeGreaterThan(0);
    for (const c of sent)
      expect(
        FIXED_COMMAND_PATTERNS.some((p) => p.test(c)),
        c,
      ).toBe(true);
  });
});
