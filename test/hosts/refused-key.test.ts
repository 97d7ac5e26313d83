// Issue 22 (closing notes): one unusable key file (a passphrase-protected key without its passphrase or
// an agent) once stopped the whole bot from starting. That host is refused with one line and the bot
// starts with the others. The real bot (`bin/gpu-doctor bot`, console chat on stdin/stdout) over two real
// sshd hosts: `/gpu status` answers the good one and says in one line why the other is not asked.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';

const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');

describeWithSshd('a host whose key cannot be used is refused; the bot starts with the others', 'test/hosts/refused-key.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gd-refused-key-'));
  let good: SshdInstance;
  let locked: SshdInstance;
  let bot: ChildProcess | null = null;
  let out = '';
  let err = '';
  let encKey: string;

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    encKey = join(root, 'client', 'enc_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'a passphrase nobody gives the bot', '-f', encKey, '-C', 'gd-test-enc']);
    good = await startSshd(join(root, 'good'), key.pub, { skipShellRc: true, data: 'h100' });
    locked = await startSshd(join(root, 'locked'), readFileSync(encKey + '.pub', 'utf8'), { skipShellRc: true, data: 'h100' });
  }, 60_000);

  afterAll(async () => {
    if (bot && bot.exitCode === null) {
      bot.kill('SIGKILL');
      await new Promise((r) => bot!.once('exit', r));
    }
    await good?.stop();
    await locked?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('starts, answers /gpu status for the good host, and one line for the refused one', async () => {
    const key = join(root, 'client', 'client_key');
    const config = join(root, 'config.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        '  connect_timeout_ms: 10000',
        '  exec_timeout_ms: 20000',
        'hosts:',
        `  - { name: gpu-good, host: 127.0.0.1, port: ${good.port}, host_key: "${good.fingerprint}" }`,
        `  - { name: gpu-locked, host: 127.0.0.1, port: ${locked.port}, host_key: "${locked.fingerprint}", identity_file: ${encKey} }`,
        '',
      ].join('\n'),
    );
    bot = spawn(process.execPath, [BIN, 'bot', '--config', config], {
      env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', SSH_AUTH_SOCK: '', LANG: 'C', LC_ALL: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    bot.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    bot.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((r) => bot!.once('exit', (code) => r(code)));
    bot.stdin!.write('/gpu status\n');
    const answered = new Promise<void>((res) => {
      const check = () => (/GPU status: \d\/2 host/.test(out) && /gpu-locked/.test(out.slice(out.indexOf('GPU status'))) ? res() : setTimeout(check, 100));
      check();
    });
    const deadline = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 90_000).unref());
    const first = await Promise.race([answered.then(() => 'answered' as const), exited.then((code) => `exited ${code}` as const), deadline]);
    expect(first, `stdout:\n${out}\nstderr:\n${err}`).toBe('answered');
    const status = out.slice(out.indexOf('GPU status'));
    expect(status).toContain('GPU status: 1/2 hosts answered');
    expect(status).toMatch(/gpu-good/);
    const problem = `hosts.gpu-locked.identity_file: identity file ${encKey} is passphrase-protected and no ssh agent is set (SSH_AUTH_SOCK)`;
    expect(status).toContain(`gpu-locked: not asked: ${problem}`);
    // Named once at start, never the key's contents.
    expect(err).toContain(`hosts: not asked: ${problem}`);
    expect(out + err).not.toContain(readFileSync(encKey, 'utf8').split('\n')[1]);
    // The locked host's sshd was never asked: nothing ran there.
    expect(readFileSync(locked.auditLog, 'utf8')).toBe('');
  }, 150_000);
});
