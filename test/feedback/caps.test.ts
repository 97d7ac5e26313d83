// Kept logs are capped (issue 22 item 17: 100 pasted 40 KB logs by one user in 7 s were all kept): per person
// per 24 h, per log (its last KiB), and all kept logs together. Through the console chat of `gpu-doctor bot`
// (the binary, a config file, real SQLite): a flood of pasted logs no rule matches, from one user.
import Database from '../../src/storage/sqlite-driver.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';

/** A log no rule matches, about `kib` KiB, its error line last (what is kept of a long one). */
function unmatchedLog(i: number, kib: number): string {
  const filler = Array.from({ length: Math.ceil((kib * 1024) / 40) }, (_, k) => `step ${i}.${k}: loss=0.${(k * 7919) % 1000}`.padEnd(39, ' .'));
  return ['Traceback (most recent call last):', ...filler, `ValueError: the config has no field "f${i}"`].join('\n');
}

/** Runs the bot's console chat over `input` and returns its stderr (the bot's log). */
async function bot(root: string, feedback: string, input: string): Promise<{ data: string; stderr: string }> {
  const data = join(root, 'data');
  const config = join(root, 'gpu-doctor.yaml');
  writeFileSync(config, `data_dir: ${data}\nfeedback:\n  keep_logs: true\n${feedback}`);
  const child = execFile(resolve(import.meta.dirname, '../../bin/gpu-doctor'), ['bot', '--config', config], {
    env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '' },
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  child.stdout!.resume();
  child.stdin!.end(input);
  await new Promise((r) => child.once('close', r));
  return { data, stderr };
}

const rows = (data: string) => {
  const db = new Database(join(data, 'feedback.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM diagnoses').get() as { n: number }).n;
  } finally {
    db.close();
  }
};
const keptFiles = (data: string) => {
  const dir = join(data, 'feedback-logs');
  return readdirSync(dir).map((f) => ({ name: f, bytes: statSync(join(dir, f)).size, text: readFileSync(join(dir, f), 'utf8') }));
};

describe('caps on kept logs, through the console chat', () => {
  it('one user: at most max_logs_per_user_per_day logs kept, each its last max_log_kib; every paste still diagnosed and recorded', async () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-caps-user-'));
    const pastes = Array.from({ length: 8 }, (_, i) => `${unmatchedLog(i, 10)}\n.\n`).join('');
    const { data, stderr } = await bot(root, '  max_logs_per_user_per_day: 3\n  max_log_kib: 4\n', pastes);
    expect(rows(data)).toBe(8);
    const files = keptFiles(data);
    expect(files).toHaveLength(3);
    for (const f of files) {
      // The last 4 KiB from a line start, under the note that earlier lines were cut: the error line is there.
      expect(f.bytes).toBeLessThanOrEqual(4 * 1024 + 100);
      expect(f.text).toMatch(/^\[\.\.\. earlier lines not kept; the last 4 KiB follow\]\n/);
      expect(f.text).toMatch(/ValueError: the config has no field "f[0-2]"\n?$/);
    }
    expect(stderr.match(/a console user's log was not kept: 3 of theirs already kept in the last 24 h/g)).toHaveLength(5);
  }, 120_000);

  it('all together: kept logs stop at max_kept_mib; the rest are refused (not kept), noted', async () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-caps-total-'));
    // 7 logs of 200 KiB: about 1.4 MiB together, over the 1 MiB cap.
    const pastes = Array.from({ length: 7 }, (_, i) => `${unmatchedLog(i, 200)}\n.\n`).join('');
    const { data, stderr } = await bot(root, '  max_logs_per_user_per_day: 1000\n  max_kept_mib: 1\n', pastes);
    expect(rows(data)).toBe(7);
    const files = keptFiles(data);
    const total = files.reduce((n, f) => n + f.bytes, 0);
    expect(total).toBeLessThanOrEqual(1024 * 1024);
    expect(files.length).toBeGreaterThan(0);
    expect(files.length).toBeLessThan(7);
    expect(stderr.match(/a log was not kept: the kept logs hold 1 MiB already/g)).toHaveLength(7 - files.length);
  }, 120_000);

  it('the config: sane defaults, and out-of-range caps are refused by name', () => {
    expect(parseConfig({}).feedback).toMatchObject({ max_logs_per_user_per_day: 20, max_log_kib: 256, max_kept_mib: 512 });
    expect(parseConfig({ feedback: { keep_logs: true } }).feedback).toMatchObject({ max_logs_per_user_per_day: 20, max_log_kib: 256, max_kept_mib: 512 });
    expect(() => parseConfig({ feedback: { max_logs_per_user_per_day: 0 } })).toThrow(
      /feedback\.max_logs_per_user_per_day: logs kept per user per day: 1-10000/,
    );
    expect(() => parseConfig({ feedback: { max_log_kib: 1.5 } })).toThrow(/feedback\.max_log_kib: a whole number of KiB/);
    expect(() => parseConfig({ feedback: { max_kept_mib: 2_000_000 } })).toThrow(/feedback\.max_kept_mib: MiB of kept logs in all: 1-1048576/);
  });
});
