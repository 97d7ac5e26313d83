// Attack 6 of issue 11: `hosts trust` against real sshd, through the real CommandRegistry (as an
// admin) and the CLI. Trust takes the fingerprint the admin read and refuses a key swapped in between;
// a pin in the config file wins over a trust made in chat; @revoked in known_hosts is honoured
// wherever its line stands; the reply says when known_hosts disagrees.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import type { CommandContext } from '../../src/core/command.js';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { startDelayProxy, type DelayProxy } from './delay-proxy.js';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');

describeWithSshd('hosts trust (issue 11, attack 6)', 'test/hosts/trust.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-trust-'));
  const inst = {} as Record<'a' | 'b' | 'c', SshdInstance>;
  let proxy: DelayProxy;
  let svc: SourcedHostsService;
  let key: { keyFile: string; pub: string };
  const registry = new CommandRegistry(allCommands());
  const admin: CommandContext = { platform: 'slack', userId: 'U0ADMIN01', isAdmin: true, services: {} as Services };
  const say = async (line: string) => {
    const out = await registry.dispatch(line, admin);
    return { outcome: out.outcome, title: out.reply.title, text: renderText(out.reply) };
  };
  const statusError = async (name: string) => {
    const [r] = await svc.status([name]);
    return r.ok ? 'ok' : r.error;
  };
  const knownLine = (i: SshdInstance, port = i.port) => `[127.0.0.1]:${port} ${i.publicKeyLine.split(/\s+/).slice(0, 2).join(' ')}`;

  beforeAll(async () => {
    key = makeClientKey(join(root, 'client'));
    [inst.a, inst.b, inst.c] = await Promise.all(['a', 'b', 'c'].map((n) => startSshd(join(root, n), key.pub, { skipShellRc: true, data: 'h100' })));
    // `swap` is reached through a proxy whose upstream can change: another machine answering the address.
    proxy = await startDelayProxy(inst.a.port, 0);
    const knownHosts = join(root, 'known_hosts');
    writeFileSync(
      knownHosts,
      [
        // a: a plain line first, then @revoked for the same key (the revocation comes later in the file).
        knownLine(inst.a),
        `@revoked ${knownLine(inst.a)}`,
        // c: @revoked first, then the plain line.
        `@revoked ${knownLine(inst.c)}`,
        knownLine(inst.c),
        // The proxy's address: a stale line with c's key (known_hosts disagrees with what gets trusted).
        knownLine(inst.c, proxy.port),
        '',
      ].join('\n'),
    );
    const config = parseConfig({
      data_dir: join(root, 'data'),
      ssh: { identity_file: key.keyFile, known_hosts: knownHosts, connect_timeout_ms: 6000, exec_timeout_ms: 8000 },
      hosts: [
        { name: 'swap', host: '127.0.0.1', port: proxy.port },
        // Pinned in the config file to a's key, while b answers: a changed key.
        { name: 'pinned', host: '127.0.0.1', port: inst.b.port, host_key: inst.a.fingerprint },
        { name: 'rev-after', host: '127.0.0.1', port: inst.a.port },
        { name: 'rev-before', host: '127.0.0.1', port: inst.c.port },
        { name: 'rev-pinned', host: '127.0.0.1', port: inst.a.port, host_key: inst.a.fingerprint },
      ],
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
    (admin.services as { hosts: unknown }).hosts = svc;
  });

  afterAll(async () => {
    await svc?.close();
    await proxy?.close();
    await Promise.all(Object.values(inst).map((i) => i?.stop()));
    rmSync(root, { recursive: true, force: true });
  });

  it('`hosts trust NAME` only shows the presented key and how to confirm it; nothing is trusted', async () => {
    const r = await say('/gpu hosts trust swap');
    expect(r.title).toBe('Not trusted yet: swap');
    expect(r.text).toContain(`swap presents host key ${inst.a.fingerprint}. Nothing was trusted`);
    expect(r.text).toContain(`hosts trust swap ${inst.a.fingerprint}`);
    expect(svc.registry.get('swap')!.hostKey).toBeUndefined();
    expect(await statusError('swap')).toMatch(/^HOST KEY CHANGED for swap .*known_hosts has a different key/);
  });

  it('a key swapped between reading and trusting is refused; the key read is then trusted, and the reply says known_hosts disagrees', async () => {
    proxy.retarget(inst.b.port); // another machine now answers the address
    const refused = await say(`/gpu hosts trust swap ${inst.a.fingerprint}`);
    expect(refused.outcome).toBe('error');
    expect(refused.text).toContain(`refused: swap now presents ${inst.b.fingerprint}, not ${inst.a.fingerprint}`);
    expect(svc.registry.get('swap')!.hostKey).toBeUndefined();
    expect(await statusError('swap')).not.toBe('ok');

    proxy.retarget(inst.a.port);
    const ok = await say(`/gpu hosts trust swap ${inst.a.fingerprint}`);
    expect(ok.title).toBe('Trusted swap');
    expect(ok.text).toContain(`trusted the host key of swap: ${inst.a.fingerprint}`);
    expect(ok.text).toContain(`known_hosts disagrees: it lists ${inst.c.fingerprint} for [127.0.0.1]:${proxy.port}`);
    expect(await statusError('swap')).toBe('ok');
    // A fingerprint that is not one is refused before anything is fetched.
    expect((await say('/gpu hosts trust swap SHA256:short')).text).toContain('the fingerprint must look like SHA256:');
  });

  it('a pin in the config file wins over a trust made in chat', async () => {
    expect(await statusError('pinned')).toMatch(/^HOST KEY CHANGED for pinned .*expected .* got /);
    const r = await say(`/gpu hosts trust pinned ${inst.b.fingerprint}`);
    expect(r.outcome).toBe('error');
    expect(r.text).toContain(`pinned's host key is pinned in the config file (host_key ${inst.a.fingerprint})`);
    expect(await statusError('pinned')).toMatch(/^HOST KEY CHANGED for pinned/);
    // Even a trust already in the database (written by an older version) does not override the pin.
    svc.registry.trust('pinned', inst.b.fingerprint);
    expect(svc.registry.get('pinned')).toMatchObject({ hostKey: inst.a.fingerprint, pinnedBy: 'config' });
    expect(await statusError('pinned')).toMatch(/^HOST KEY CHANGED for pinned/);
  });

  it('@revoked in known_hosts is honoured after or before a plain line for the same key, and over a pin', async () => {
    expect(await statusError('rev-after')).toContain(`host key revoked for rev-after (127.0.0.1:${inst.a.port}): ${inst.a.fingerprint} is marked @revoked`);
    expect(await statusError('rev-before')).toContain(`host key revoked for rev-before (127.0.0.1:${inst.c.port}): ${inst.c.fingerprint} is marked @revoked`);
    expect(await statusError('rev-pinned')).toContain('host key revoked for rev-pinned');
    const r = await say(`/gpu hosts trust rev-after ${inst.a.fingerprint}`);
    expect(r.outcome).toBe('error');
    expect(r.text).toContain(`refused: ${inst.a.fingerprint} is marked @revoked in known_hosts`);
    expect(await statusError('rev-after')).toContain('host key revoked');
  });

  it('the CLI: `hosts trust NAME` exits 1 trusting nothing; with the fingerprint it trusts and exits 0', async () => {
    const dir = join(root, 'cli');
    const config = join(root, 'cli.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${dir}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'none')}`,
        'hosts:',
        `  - { name: fresh, host: 127.0.0.1, port: ${inst.b.port} }`,
        '',
      ].join('\n'),
    );
    const env = { ...process.env, SSH_AUTH_SOCK: '' };
    const shown = await run(BIN, ['hosts', 'trust', 'fresh', '--config', config], { env }).catch((e) => e);
    expect(shown.code).toBe(1);
    expect(shown.stdout).toContain(`fresh presents host key ${inst.b.fingerprint}. Nothing was trusted`);
    const listed = await run(BIN, ['hosts', 'list', '--json', '--config', config], { env });
    expect(JSON.parse(listed.stdout).hosts[0].hostKey).toBeNull();
    const trusted = await run(BIN, ['hosts', 'trust', 'fresh', inst.b.fingerprint, '--config', config], { env });
    expect(trusted.stdout).toContain(`trusted the host key of fresh: ${inst.b.fingerprint}`);
    const status = await run(BIN, ['status', 'fresh', '--json', '--config', config], { env });
    expect(JSON.parse(status.stdout).hosts[0].ok).toBe(true);
  }, 60_000);
});
