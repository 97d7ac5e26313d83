// ssh_config resolution checked against OpenSSH's own on the same files: `ssh -G` for host, port, user
// and ProxyJump, and `ssh -v` (identity files are expanded only when ssh loads them, after -G prints)
// for IdentityFile with its % tokens. Include (relative to ~/.ssh, glob, absolute, conditional),
// Match host/user/originalhost, two-hop ProxyJump, and the service's jump chain built from it.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { SshConfig, SshConfigError } from '../../src/hosts/ssh-config.js';
import type { SshTarget } from '../../src/hosts/ssh-pool.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

const execFileP = promisify(execFile);
const SSH = ['/usr/bin/ssh', '/usr/local/bin/ssh'].find((p) => existsSync(p)) ?? null;
const CI = process.env.CI === 'true';

interface Seen {
  hostname: string;
  user: string;
  port: number;
  proxyjump: string | null;
}

/** `ssh -G` on the file: argv only, never a shell; aliases here are fixed test names. */
async function sshG(config: string, alias: string, opts: { user?: string; port?: number } = {}): Promise<Seen> {
  const argv = ['-G', '-F', config, ...(opts.user ? ['-l', opts.user] : []), ...(opts.port ? ['-p', String(opts.port)] : []), '--', alias];
  const { stdout } = await execFileP(SSH!, argv, { timeout: 10_000 });
  const get = (k: string) =>
    stdout
      .split('\n')
      .find((l) => l.startsWith(k + ' '))
      ?.slice(k.length + 1) ?? null;
  return { hostname: get('hostname')!, user: get('user')!, port: Number(get('port')), proxyjump: get('proxyjump') };
}

/** The identity files ssh itself would offer, from `ssh -v` (a ProxyCommand that exits: nothing is reached). */
async function sshIdentities(config: string, alias: string, opts: { user?: string; port?: number } = {}): Promise<string[]> {
  const argv = [
    '-v',
    '-F',
    config,
    '-o',
    'BatchMode=yes',
    '-o',
    'ProxyCommand=true',
    ...(opts.user ? ['-l', opts.user] : []),
    ...(opts.port ? ['-p', String(opts.port)] : []),
    '--',
    alias,
    'true',
  ];
  const r = await execFileP(SSH!, argv, { timeout: 10_000 }).then(
    (x) => x.stderr,
    (e: { stderr?: string }) => e.stderr ?? '',
  );
  return r
    .split(/\r?\n/)
    .filter((l) => l.startsWith('debug1: identity file '))
    .map((l) => l.slice('debug1: identity file '.length).replace(/ type -?\d+$/, ''))
    .filter((f) => !f.endsWith('-cert'));
}

(SSH || CI ? describe : describe.skip)('ssh_config resolution against ssh -G', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-sshcfg-'));
  // Relative Include paths resolve under ~/.ssh (ssh reads -F files as a user config): a directory of our own there.
  const sshDir = join(homedir(), '.ssh');
  const relName = `gpu-doctor-test-${process.pid}-${Date.now()}`;
  const relDir = join(sshDir, relName);
  const config = join(root, 'config');
  const local = userInfo().username;

  beforeAll(() => {
    if (!SSH) throw new Error('ssh (openssh-client) not found: CI must install it');
    mkdirSync(sshDir, { recursive: true, mode: 0o700 });
    mkdirSync(join(relDir, 'conf.d'), { recursive: true });
    mkdirSync(join(root, 'abs'), { recursive: true });
    writeFileSync(
      join(relDir, 'conf.d', '10-b.conf'),
      ['Host gpu-b', '  HostName b.internal', '  Port 2022', 'Host gpu-a', '  Port 2100', 'Host gpu-e', '  HostName e.internal', ''].join('\n'),
    );
    // Inside a Host block of its own: only gpu-c gets what the nested file says.
    writeFileSync(join(relDir, 'conf.d', '20-c.conf'), ['Host gpu-c', `  Include ${join(root, 'abs', 'nested.conf')}`, ''].join('\n'));
    writeFileSync(join(relDir, 'conf.d', 'ignored.txt'), 'Host *\n  Port 9\n');
    // Its Host * applies only when the include itself is reached from an active block (OpenSSH's NEVERMATCH).
    writeFileSync(join(root, 'abs', 'nested.conf'), ['User nested-user', 'HostName c.internal', 'Host *', '  Port 2777', ''].join('\n'));
    writeFileSync(
      config,
      [
        '# gpu-doctor test config',
        `Include ${relName}/conf.d/*.conf`,
        'Host gpu-a',
        '  HostName 10.9.8.7',
        '  ProxyJump jump1,carol@jump2:2202',
        '  IdentityFile ~/keys/%r@%h-%p',
        `  IdentityFile "${root}/ids/%u-%d-%n-%l-%L-%i-%%"`,
        'Port 2999',
        'Host gpu-f',
        '  User fuser',
        // User was set above for gpu-f: Match user sees it.
        'Match user fuser',
        '  Port 2555',
        // User is not yet set when this line is read: the local user is what Match user sees.
        'Match host 10.9.* user ml',
        '  Port 2222',
        'Match originalhost gpu-d user ml',
        '  HostName d.internal',
        '  Port 2444',
        'Match host *.internal !originalhost gpu-b',
        '  User internal-user',
        'Host gpu-*',
        '  User ml',
        'Host jump1',
        '  HostName j1.example',
        '  User hopper',
        '  Port 2201',
        '  ProxyJump jump0',
        'Host jump2',
        '  HostName j2.example',
        '  ProxyJump not-used-after-a-first-hop',
        'Host GPU-U',
        '  HostName Mixed.%h.Example',
        'Match host mixed.gpu-u.example',
        '  User mixed-user',
        'Host jump0',
        '  HostName=j0.example',
        'Host *',
        '  IdentityFile ~/.ssh/id_test_%h_%p',
        '',
      ].join('\n'),
    );
  });

  afterAll(() => {
    rmSync(relDir, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  });

  const cases: [string, { user?: string; port?: number }][] = [
    ['gpu-a', {}],
    ['gpu-b', {}],
    ['gpu-c', {}],
    ['gpu-d', {}],
    ['gpu-e', {}],
    ['gpu-f', {}],
    ['gpu-d', { user: 'ml' }],
    ['gpu-a', { user: 'ml', port: 2300 }],
    ['jump1', {}],
    ['jump2', { user: 'carol', port: 2202 }],
    ['other', {}],
    ['GPU-U', {}],
    ['gpu-u', {}],
  ];

  it.each(cases)('%s %j: host, port, user, ProxyJump and identity files as ssh resolves them', async (alias, opts) => {
    const ours = SshConfig.load(config).resolve(alias, opts);
    const [seen, ids] = await Promise.all([sshG(config, alias, opts), sshIdentities(config, alias, opts)]);
    expect({ hostname: ours.hostName, user: ours.user ?? local, port: ours.port ?? 22, proxyjump: ours.proxyJump ?? null }).toEqual(seen);
    expect(ours.identityFiles).toEqual(ids);
    expect(ids.length).toBeGreaterThan(0);
  });

  it('the files say what this test relies on (Include, Match and tokens all took effect)', async () => {
    expect(await sshG(config, 'gpu-b')).toMatchObject({ hostname: 'b.internal', port: 2022, user: 'ml' });
    expect(await sshG(config, 'gpu-c')).toMatchObject({ hostname: 'c.internal', user: 'nested-user', port: 2777 });
    expect((await sshG(config, 'other')).port).toBe(22);
    expect(await sshG(config, 'gpu-e')).toMatchObject({ hostname: 'e.internal', user: 'internal-user' });
    expect(await sshG(config, 'gpu-d', { user: 'ml' })).toMatchObject({ hostname: 'd.internal', port: 2444 });
    expect((await sshG(config, 'gpu-a')).port).toBe(2100);
    expect(await sshG(config, 'gpu-f')).toMatchObject({ user: 'fuser', port: 2555 });
    // Host matches the alias as typed; the host name is lowercased after; Match host ignores case.
    expect(await sshG(config, 'GPU-U')).toMatchObject({ hostname: 'mixed.gpu-u.example', user: 'mixed-user' });
    expect(await sshG(config, 'gpu-u')).toMatchObject({ hostname: 'gpu-u', user: 'ml' });
    const ids = await sshIdentities(config, 'gpu-a');
    expect(ids[0]).toBe(join(homedir(), 'keys', 'ml@10.9.8.7-2100'));
    expect(ids[1]).toContain(`${local}-${homedir()}-gpu-a-`);
    expect(ids[1]).toMatch(/-%$/);
  });

  it('the service chains both hops of ProxyJump a,b, each hop resolved as ssh resolves it', async () => {
    const svc = new SourcedHostsService(
      withSqliteRegistry({
        config: parseConfig({ data_dir: join(root, 'data'), ssh: { config_file: config }, hosts: [{ name: 'a', host: 'gpu-a' }] }),
        baseDir: root,
        agent: null,
      }),
    );
    try {
      const t = svc.ssh.target(svc.registry.get('a')!);
      const chain: SshTarget[] = [];
      for (let h: SshTarget | undefined = t; h; h = h.proxyJump) chain.push(h);
      // gpu-a through jump2 (carol, port 2202 from the ProxyJump spec), jump2 through jump1, jump1 through its own ProxyJump jump0.
      expect(chain.map((h) => `${h.user}@${h.host}:${h.port}`)).toEqual(
        await Promise.all([sshG(config, 'gpu-a'), sshG(config, 'jump2', { user: 'carol', port: 2202 }), sshG(config, 'jump1'), sshG(config, 'jump0')]).then(
          (xs) => xs.map((x) => `${x.user}@${x.hostname}:${x.port}`),
        ),
      );
      expect(chain.map((h) => h.host)).toEqual(['10.9.8.7', 'j2.example', 'j1.example', 'j0.example']);
      expect((await sshG(config, 'jump1')).proxyjump).toBe('jump0');
    } finally {
      await svc.close();
    }
  });

  it('refuses what it cannot follow, naming file and line, instead of connecting elsewhere', () => {
    const f = join(root, 'unsupported');
    writeFileSync(
      f,
      ['Match host gpu-x exec "true"', '  HostName elsewhere', 'Match host nomatch exec "true"', '  Port 1', 'Host gpu-y', '  ProxyCommand nc %h %p', ''].join(
        '\n',
      ),
    );
    const cfg = SshConfig.load(f);
    expect(() => cfg.resolve('gpu-x')).toThrow(SshConfigError);
    expect(() => cfg.resolve('gpu-x')).toThrow(`Match exec is not supported by gpu-doctor (${f}:1)`);
    // A Match already false never needs its exec: resolved like ssh would.
    expect(cfg.resolve('gpu-z')).toMatchObject({ hostName: 'gpu-z' });
    expect(() => cfg.resolve('gpu-y')).toThrow(`gpu-y uses ProxyCommand (${f}:6)`);
    const g = join(root, 'final');
    writeFileSync(g, ['Match final host gpu-x', '  Port 1', ''].join('\n'));
    expect(() => SshConfig.load(g).resolve('gpu-x')).toThrow(`Match final is not supported by gpu-doctor (${g}:1)`);
  });
});
