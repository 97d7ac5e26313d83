// Attack 1 of issue 11: identity files ssh2 cannot use (passphrase-protected, not a key at all) once
// made ssh2's connect throw inside a promise callback, and the unhandled rejection ended the bot.
// Against real sshd and a real ssh-agent, through the CLI and the real CommandRegistry.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
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
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');
const PASSPHRASE = 'correct horse battery staple';
const SECRET = 'xoxb-not-a-key-but-a-secret-1234567890';

describeWithSshd('identity files ssh2 cannot use (issue 11, attack 1)', 'test/hosts/keys.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-keys-'));
  let inst: SshdInstance;
  let key: { keyFile: string; pub: string };
  let encKey: string;
  let notAKey: string;
  let agent: ChildProcess;
  let agentSock: string;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  const env = (extra: Record<string, string> = {}) => ({ ...process.env, SSH_AUTH_SOCK: '', ...extra });
  const writeConfig = (name: string, hosts: string[], ssh: string[] = [`  identity_file: ${key.keyFile}`]) => {
    const file = join(root, `${name}.yaml`);
    writeFileSync(
      file,
      [`data_dir: ${join(root, `data-${name}`)}`, 'ssh:', ...ssh, '  connect_timeout_ms: 6000', hosts.length ? 'hosts:' : 'hosts: []', ...hosts, ''].join('\n'),
    );
    return file;
  };

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    key = makeClientKey(join(root, 'client'));
    encKey = join(root, 'client', 'enc_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-f', encKey, '-C', 'gpu-doctor-test-enc']);
    notAKey = join(root, 'not-a-key');
    writeFileSync(notAKey, `${SECRET}\n`);
    inst = await startSshd(join(root, 'a'), key.pub + readFileSync(encKey + '.pub', 'utf8'), { skipShellRc: true, data: 'h100' });
    agentSock = join(root, 'agent.sock');
    agent = spawn('ssh-agent', ['-D', '-a', agentSock], { stdio: 'ignore' });
    const deadline = Date.now() + 5000;
    while (!existsSync(agentSock) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(agentSock)).toBe(true);
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    agent?.kill();
    await inst?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a passphrase-protected key in the config without an agent: start-up names the file and the fix, never the contents', async () => {
    const config = writeConfig('enc', [`  - { name: enc, host: 127.0.0.1, port: ${inst.port}, host_key: "${inst.fingerprint}", identity_file: ${encKey} }`]);
    const r = await run(BIN, ['status', '--config', config], { env: env() }).catch((e) => e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`hosts.enc.identity_file: identity file ${encKey} is passphrase-protected and no ssh agent is set (SSH_AUTH_SOCK)`);
    const key = readFileSync(encKey, 'utf8');
    expect(r.stderr + r.stdout).not.toContain(key.split('\n')[1]);
  }, 60_000);

  it('`hosts add --key` with a file that is not a key (or a public key) is refused, naming the problem, never the contents', async () => {
    const config = writeConfig('add', []);
    const bad = await run(BIN, ['hosts', 'add', 'gpu-x', `root@127.0.0.1:${inst.port}`, '--key', notAKey, '--config', config], { env: env() }).catch((e) => e);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`not added: identity file ${notAKey} is not a private key`);
    expect(bad.stderr + bad.stdout).not.toContain(SECRET);
    const pub = await run(BIN, ['hosts', 'add', 'gpu-x', `root@127.0.0.1:${inst.port}`, '--key', key.keyFile + '.pub', '--config', config], {
      env: env(),
    }).catch((e) => e);
    expect(pub.stderr).toContain('holds a public key; give the private key file (without .pub)');
    const list = await run(BIN, ['hosts', 'list', '--json', '--config', config], { env: env() });
    expect(JSON.parse(list.stdout).hosts.map((h: { name: string }) => h.name)).not.toContain('gpu-x');
  }, 60_000);

  it('a host whose key ssh2 cannot use answers with an auth error line; the bot goes on answering', async () => {
    const config = parseConfig({
      data_dir: join(root, 'data-bot'),
      ssh: { identity_file: key.keyFile, known_hosts: join(root, 'known_hosts'), connect_timeout_ms: 6000, exec_timeout_ms: 8000 },
      hosts: [{ name: 'gpu-a', host: '127.0.0.1', port: inst.port, host_key: inst.fingerprint }],
    });
    const svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
    try {
      // Hosts in the database from before the check (or whose key file changed since): nothing stops
      // them at start, so each request must cope.
      svc.registry.add({ name: 'enc', host: '127.0.0.1', port: inst.port, user: 'root', identityFile: encKey, hostKey: inst.fingerprint });
      svc.registry.add({ name: 'junk', host: '127.0.0.1', port: inst.port, user: 'root', identityFile: notAKey, hostKey: inst.fingerprint });
      const registry = new CommandRegistry(allCommands());
      const ctx: CommandContext = { platform: 'discord', userId: '123456789012345678', isAdmin: false, services: { hosts: svc } as unknown as Services };
      for (let round = 0; round < 2; round++) {
        const out = await registry.dispatch('/gpu status', ctx);
        const text = renderText(out.reply);
        expect(out.outcome).toBe('ok');
        expect(text).toContain('GPU status: 1/3 hosts answered');
        expect(text).toContain(`enc: auth failed (root@127.0.0.1:${inst.port}): identity file ${encKey} is passphrase-protected and no ssh agent is set`);
        expect(text).toContain(`junk: auth failed (root@127.0.0.1:${inst.port}): identity file ${notAKey} is not a private key`);
        expect(text).not.toContain(SECRET);
      }
      expect(unhandled).toEqual([]);
    } finally {
      await svc.close();
    }
  }, 60_000);

  it('a passphrase-protected key works through an ssh-agent holding it (and says so when the agent does not)', async () => {
    const hosts = [`  - { name: enc, host: 127.0.0.1, port: ${inst.port}, host_key: "${inst.fingerprint}", identity_file: ${encKey} }`];
    const config = writeConfig('agent', hosts, []);
    // The agent is empty: the key file is skipped (no passphrase prompt) and the error says why.
    const empty = await run(BIN, ['status', 'enc', '--json', '--config', config], { env: env({ SSH_AUTH_SOCK: agentSock, HOME: root }) }).catch((e) => e);
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.stdout).hosts[0].error).toBe(
      `auth failed (root@127.0.0.1:${inst.port}): key not accepted (identity file ${encKey} is passphrase-protected: only the ssh agent's keys were offered)`,
    );
    // ssh-add reads the passphrase from an askpass program (no terminal here).
    const askpass = join(root, 'askpass.sh');
    writeFileSync(askpass, `#!/bin/sh\necho '${PASSPHRASE}'\n`);
    chmodSync(askpass, 0o700);
    execFileSync('ssh-add', [encKey], {
      env: env({ SSH_AUTH_SOCK: agentSock, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const ok = await run(BIN, ['status', 'enc', '--json', '--config', config], { env: env({ SSH_AUTH_SOCK: agentSock, HOME: root }) });
    const [r] = JSON.parse(ok.stdout).hosts;
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(r.gpus[0].name).toBe('NVIDIA H100 80GB HBM3');
  }, 60_000);
});
