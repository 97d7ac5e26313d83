// How `npm start` / `gpu-doctor bot` starts on a fresh clone (issue 25 §3): a config npm swallowed, a stray
// argument, and a container with no chat token each end with one line saying what to do, exit non-zero;
// the right form (`npm start -- --config FILE`) and piped console input still run. Through the real CLI and npm.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/gpu-doctor');
// No chat token, and no npm setting inherited from a test run started by npm.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && !/_TOKEN$/.test(k)));
const opts = (more: SpawnSyncOptions = {}): SpawnSyncOptions => ({
  cwd: ROOT,
  encoding: 'utf8',
  timeout: 90_000,
  env: { ...env, LANG: 'C', LC_ALL: '' },
  ...more,
});
const bot = (args: string[], more: SpawnSyncOptions = {}) => spawnSync(process.execPath, [BIN, 'bot', ...args], opts(more));
const npmStart = (args: string[], more: SpawnSyncOptions = {}) => spawnSync('npm', ['start', '--silent', ...args], opts(more));

function config(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gd-bot-start-'));
  const file = join(dir, 'gpu-doctor.yaml');
  writeFileSync(file, `data_dir: ${join(dir, 'data')}\n`);
  return file;
}

function oneLine(r: ReturnType<typeof bot>, status: number, message: RegExp): void {
  expect(r.status, String(r.stderr)).toBe(status);
  expect(String(r.stdout)).toBe('');
  const lines = String(r.stderr).trim().split('\n');
  expect(lines, String(r.stderr)).toHaveLength(1);
  expect(lines[0]).toMatch(message);
}

describe('gpu-doctor bot refuses what it would otherwise ignore', () => {
  it('a stray argument (what `npm start --config FILE` hands the bot) names the right form, exit 2', () => {
    oneLine(
      bot(['gpu-doctor.yaml'], { input: '' }),
      2,
      /^gpu-doctor: bot takes no argument "gpu-doctor\.yaml": give the config as `npm start -- --config FILE`/,
    );
  });

  it('npm start --config FILE and --config=FILE, through npm itself: one line, exit non-zero, nothing run', () => {
    const file = config();
    for (const args of [['--config', file], [`--config=${file}`]]) {
      const r = npmStart(args, { input: '/gpu help\n' });
      expect(r.status, args.join(' ')).not.toBe(0);
      expect(String(r.stdout), args.join(' ')).not.toMatch(/\/gpu/);
      expect(String(r.stderr), args.join(' ')).toMatch(/^gpu-doctor: .*`npm start -- --config FILE`/m);
      expect(
        String(r.stderr)
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('gpu-doctor:')),
        args.join(' '),
      ).toHaveLength(1);
    }
  });

  it('npm start -- --config FILE reaches the bot: the console answers on piped input', () => {
    const r = npmStart(['--', '--config', config()], { input: '/gpu help\n' });
    expect(r.status, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toMatch(/\/gpu status/);
  });

  it('no chat token and no terminal or piped input (a container started detached): one line naming the tokens, exit 1', () => {
    oneLine(bot(['--config', config()], { stdio: ['ignore', 'pipe', 'pipe'] }), 1, /^gpu-doctor: no chat token set: set SLACK_BOT_TOKEN .*DISCORD_TOKEN/);
  });

  it('no chat token with piped input is still the console chat', () => {
    const r = bot(['--config', config()], { input: '/gpu help\n' });
    expect(r.status, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toMatch(/\/gpu status/);
  });
});
