// A process nvidia-smi lists whose pid the host's ps does not know (the 8x H200 reading's GPU 7: a
// container's pid namespace) reads the same in `/gpu status` and `/gpu watch`, and both views name the
// people the config maps: the bot as createApp builds it over a real sshd host, one leak-watch round.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { createApp, type App } from '../../src/app.js';
import type { CommandContext } from '../../src/core/command.js';
import { HIDDEN_PID_TEXT } from '../../src/hosts/parse.js';
import { STATUS_COMMAND } from '../../src/hosts/remote-commands.js';
import type { WatchRuntime } from '../../src/watch/runtime.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';

describeWithSshd('status and watch agree on a process ps does not know', 'test/owners/container-agree.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-hidden-'));
  let host: SshdInstance;
  let app: App;
  const ctx = (): CommandContext => ({ platform: 'slack', userId: 'UPLAIN001', isAdmin: false, services: app.services });
  const run = async (line: string) => renderText((await app.registry.dispatch(line, ctx())).reply);

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    host = await startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' });
    writeFileSync(
      join(root, 'config.yaml'),
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        '  connect_timeout_ms: 5000',
        '  exec_timeout_ms: 5000',
        'hosts:',
        `  - { name: gpu-a, host: 127.0.0.1, port: ${host.port}, host_key: "${host.fingerprint}" }`,
        'owners:',
        '  alice@gpu-a: { name: Alice Liddell, slack: UALICE001 }',
        'watch:',
        '  enabled: true',
        '  sample_interval_s: 3600',
        '',
      ].join('\n'),
    );
    app = await createApp(join(root, 'config.yaml'));
  });

  afterAll(async () => {
    await app?.close();
    await host?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('both say "in a container (pid not visible on the host)" for pid 1758887 on GPU 7, and name alice', async () => {
    const sampler = (app.services.watch as WatchRuntime).sampler!;
    const t0 = Date.now();
    while (!(await sampler.tick())) {
      if (Date.now() - t0 > 30_000) throw new Error('the sampler never became free for a round');
      await new Promise((r) => setTimeout(r, 50));
    }
    const status = await run('/gpu status gpu-a');
    const watch = await run('/gpu watch gpu-a');
    // Run time, CPU and host RSS come from ps, which does not know the pid: n/a.
    expect(status).toMatch(new RegExp(`7 +— +1758887 +\\d+ MiB +n/a +n/a +n/a +${HIDDEN_PID_TEXT.replace(/[()]/g, '\\$&')}`));
    expect(watch).toContain(`GPU 7 · pid 1758887 · ${HIDDEN_PID_TEXT}`);
    expect(watch).not.toContain('GPU 7 (no processes)');
    expect(status).not.toContain('container?');
    // The same people in both: alice (mapped for this host) by name, bob (unmapped) by unix user.
    expect(status).toMatch(/0 +Alice Liddell \(alice\) +1328667/);
    expect(watch).toContain('GPU 0 · pid 1328667 · Alice Liddell (alice) ·');
    expect(watch).toMatch(/GPU 1 · pid \d+ · bob ·/);
    // Nothing but the fixed, audited command ran on the host.
    const audit = readFileSync(host.auditLog, 'utf8').trim().split('\n');
    expect(new Set(audit)).toEqual(new Set([STATUS_COMMAND]));
  });
});
