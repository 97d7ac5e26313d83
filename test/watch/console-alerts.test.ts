// Threshold alerts and `/gpu silence` in the console chat: the real bot (`bin/gpu-doctor bot`, no chat token,
// so the person at the terminal is the admin and the watch's posts print to stdout) over two real sshd hosts
// whose fake nvidia-smi replays the real 8x H200 reading with GPU 0 holding its memory at 0% utilisation
// (test/hosts/replay-readings.ts). The idle-held rule is shortened to 1 minute and the watch samples every
// 10 s through the config. gpu-b is silenced from stdin; then both GPUs go idle (before, they read as
// captured, 1%): gpu-a's alert prints once, gpu-b's not while the silence lasts, and once the silence is
// cancelled, gpu-b's episode (still going) prints once.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { h200After, replay, type Reading } from '../hosts/replay-readings.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';

const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');

/** The captured H200 reading with GPU 0's utilisation at 0% (its process keeps its 82 GiB); the other GPUs as captured (1%). */
function gpu0Idle(): Reading {
  const base = h200After();
  const lines = base.gpuCsv.trim().split('\n');
  const cells = lines[0].split(', ');
  cells[5] = '0'; // utilization.gpu (SMI_GPU_QUERY_FIELDS: index, uuid, name, memory.used, memory.total, utilization.gpu, temperature.gpu)
  lines[0] = cells.join(', ');
  return { ...base, gpuCsv: lines.join('\n') + '\n' };
}

async function until(ok: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

describeWithSshd('threshold alerts and /gpu silence in the console chat', 'test/watch/console-alerts.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gd-console-alerts-'));
  let a: SshdInstance;
  let b: SshdInstance;
  let bot: ChildProcess | null = null;
  let out = '';
  let err = '';

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    a = await startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' });
    b = await startSshd(join(root, 'b'), key.pub, { skipShellRc: true, data: 'h200' });
    const config = join(root, 'config.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        '  connect_timeout_ms: 10000',
        '  exec_timeout_ms: 20000',
        'hosts:',
        `  - { name: gpu-a, host: 127.0.0.1, port: ${a.port}, host_key: "${a.fingerprint}" }`,
        `  - { name: gpu-b, host: 127.0.0.1, port: ${b.port}, host_key: "${b.fingerprint}" }`,
        'watch:',
        '  enabled: true',
        '  sample_interval_s: 10',
        '  alerts:',
        '    idle_held: { minutes: 1 }',
        '  digests:',
        '    - { name: ops, platform: console, channel: ops, cron: "0 9 * * *" }',
        '',
      ].join('\n'),
    );
    bot = spawn(process.execPath, [BIN, 'bot', '--config', config], {
      env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', SSH_AUTH_SOCK: '', LANG: 'C', LC_ALL: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    bot.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    bot.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
  }, 60_000);

  afterAll(async () => {
    if (bot && bot.exitCode === null && bot.signalCode === null) {
      const exited = new Promise((r) => bot!.once('exit', r));
      bot.kill('SIGKILL');
      await exited;
    }
    await a?.stop();
    await b?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const IDLE_A = 'Idle GPU memory: gpu-a GPU 0';
  const IDLE_B = 'Idle GPU memory: gpu-b GPU 0';
  const show = () => `stdout:\n${out}\nstderr:\n${err}`;
  /** Sends a line and waits for stdout after it to contain `want`. */
  const ask = async (line: string, want: string | RegExp): Promise<string> => {
    const mark = out.length;
    bot!.stdin!.write(line + '\n');
    const seen = () => (typeof want === 'string' ? out.slice(mark).includes(want) : want.test(out.slice(mark)));
    await until(seen, 120_000, () => `no ${String(want)} after ${line}\n${show()}`);
    return out.slice(mark);
  };
  /** The sampler's polls of a host so far (each round runs nvidia-smi there once through sshd). */
  const polls = (host: SshdInstance) =>
    readFileSync(host.auditLog, 'utf8')
      .split('\n')
      .filter((l) => l.includes('nvidia-smi')).length;
  /** Waits for `rounds` more sampling rounds on both hosts, so the alerts of the rounds before have been posted. */
  const moreRounds = async (rounds: number) => {
    const [pa, pb] = [polls(a), polls(b)];
    await until(
      () => polls(a) >= pa + rounds && polls(b) >= pb + rounds,
      120_000,
      () => `no ${rounds} more rounds\n${show()}`,
    );
  };

  it('prints the idle-held alert once for the unsilenced host, none for the silenced one until its silence is cancelled', async () => {
    // Silenced while nothing is idle yet (the console's user is the admin), so no episode can be due first.
    const added = await ask('/gpu silence gpu-b 2h', /Silence #1: gpu-b \(every GPU\) until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(added).not.toContain('Usage');
    const list = await ask('/gpu silence list', '1 silence in force');
    expect(list).toContain('gpu-b (every GPU)');
    expect(list).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    // Both GPUs 0 go idle now (gpu-b first).
    replay(b.dir, gpu0Idle());
    replay(a.dir, gpu0Idle());

    await until(
      () => out.includes(IDLE_A),
      240_000,
      () => `no idle alert for gpu-a\n${show()}`,
    );
    // Both hosts are sampled in the same rounds, and their episodes started at most a round apart (a round
    // polling while the readings were swapped): two more rounds give a second post for gpu-a, or one for
    // gpu-b, every chance to appear.
    await moreRounds(2);
    expect(count(out, IDLE_A), show()).toBe(1);
    expect(count(out, IDLE_B), show()).toBe(0);
    const alert = out.slice(out.lastIndexOf('[digest threshold alert to ops]', out.indexOf(IDLE_A)));
    expect(alert).toMatch(/^\[digest threshold alert to ops\]\n/);
    expect(alert).toContain('/gpu silence gpu-a 0 2h');

    // Cancelled: gpu-b's episode, still going, is printed after the next round, once.
    await ask('/gpu silence cancel 1', 'Silence #1 cancelled: gpu-b (every GPU)');
    await until(
      () => out.includes(IDLE_B),
      120_000,
      () => `no idle alert for gpu-b after the cancel\n${show()}`,
    );
    await moreRounds(2);
    expect(count(out, IDLE_B), show()).toBe(1);
    expect(count(out, IDLE_A), show()).toBe(1);
    expect(await ask('/gpu silence list', 'No silences in force')).not.toContain('gpu-b');
  }, 600_000);
});
