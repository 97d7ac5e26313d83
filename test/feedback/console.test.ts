// 👍 / 👎 in the console chat: `/feedback down` after a pasted log stores the vote (real SQLite), the
// opt-in keeps the log redacted, the default keeps none, and `/gpu feedback` is for admins only.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import Database from '../../src/storage/sqlite-driver.js';
import { describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { runConsoleChat } from '../../src/adapters/console/console-chat.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';
import { SECRET_LINES, SECRETS } from './secrets.js';

const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
/** A log no rule matches (a plain exception), carrying secrets and a home path. */
const UNMATCHED = [
  'Traceback (most recent call last):',
  '  File "/home/alice/proj/train.py", line 10, in <module>',
  ...SECRET_LINES.map((l) => `    # ${l}`),
  'ValueError: the config has no field "lr_sched"',
].join('\n');
const rules = await loadRuleBase();

async function chat(input: string, store: FeedbackStore, o: { isAdmin?: boolean; userId?: string } = {}): Promise<string> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const done = runConsoleChat({
    input: stdin,
    output: stdout,
    registry: new CommandRegistry(allCommands()),
    context: { platform: 'console', userId: o.userId ?? 'alice', isAdmin: o.isAdmin ?? true, services: { rules, feedback: store } },
    interactive: false,
  });
  stdin.end(input);
  await done;
  return out;
}

const votes = (dir: string) => {
  const db = new Database(join(dir, 'feedback.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT d.rule, v.vote FROM votes v JOIN diagnoses d ON d.id = v.diagnosis_id').all();
  } finally {
    db.close();
  }
};

describe('feedback in the console chat', () => {
  it('a diagnosis asks for 👍 / 👎, and `/feedback down` right after a pasted log stores the vote with its rule', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-fb-console-'));
    const store = FeedbackStore.inDataDir(dir);
    const out = await chat(`${OOM}\n/feedback down\n`, store);
    store.close();
    expect(out).toContain('CUDA out of memory [cuda_oom]');
    expect(out).toContain('/feedback up or /feedback down');
    expect(out).toContain('Thanks for the feedback');
    expect(out).toContain('Recorded 👎 for rule cuda-oom');
    expect(votes(dir)).toEqual([{ rule: 'cuda-oom', vote: -1 }]);
    // keep_logs is off by default: no log anywhere.
    expect(existsSync(join(dir, 'feedback-logs'))).toBe(false);
  });

  it('a second vote changes the first; an id that is not one of ours is answered and stores nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-fb-console-'));
    const store = FeedbackStore.inDataDir(dir);
    const out = await chat(`${OOM}\n.\n/feedback down\n/feedback up\n/feedback up AAAAAAAAAAAAAAAA\n`, store);
    store.close();
    expect(out).toContain('changed from 👎');
    expect(out).toContain('Unknown diagnosis');
    expect(votes(dir)).toEqual([{ rule: 'cuda-oom', vote: 1 }]);
  });

  it('with keep_logs, an unmatched log and a 👎 log are kept with secrets and /home/alice redacted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-fb-console-'));
    const store = FeedbackStore.inDataDir(dir, { keepLogs: true });
    const out = await chat(`${UNMATCHED}\n.\n${SECRET_LINES.join('\n')}\n${OOM}\n.\n/feedback down\n/gpu feedback\n`, store);
    store.close();
    expect(out).toContain('Not a memory problem (ValueError)');
    expect(out).toContain('The log was kept (redacted)');
    const files = readdirSync(join(dir, 'feedback-logs'));
    expect(files).toHaveLength(2);
    for (const f of files) {
      const text = readFileSync(join(dir, 'feedback-logs', f), 'utf8');
      for (const s of SECRETS) expect(text, `${f}: ${s}`).not.toContain(s);
      expect(text).not.toContain('/home/alice');
    }
    expect(files.some((f) => readFileSync(join(dir, 'feedback-logs', f), 'utf8').includes('File "/home/<user>/proj/train.py"'))).toBe(true);
    // The admin's list names both, with their files.
    expect(out).toContain('Feedback, last 7 days');
    for (const f of files) expect(out).toContain(f);
  });

  it('the weekly list refuses non-admins, and lists votes per rule for admins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-fb-console-'));
    const store = FeedbackStore.inDataDir(dir);
    const refused = await chat(`${OOM}\n.\n/feedback down\n/gpu feedback\n/gpu feedback list --days 30\n`, store, { isAdmin: false, userId: 'bob' });
    expect(refused).toContain('That needs an admin');
    expect(refused).not.toContain('Votes per rule');
    const listed = await chat('/gpu feedback list --days 7\n', store, { isAdmin: true });
    store.close();
    expect(listed).toContain('Votes per rule');
    expect(listed).toMatch(/cuda-oom\s+1\s+0\s+1/);
    expect(listed).toContain('logs are not kept'.replace('logs', 'Logs'));
  });
});

describe('feedback through `gpu-doctor bot` (createApp wiring, the config opt-in)', () => {
  it('keeps the 👎 log redacted under data_dir when feedback.keep_logs is true', async () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-bot-'));
    const data = join(root, 'data');
    const config = join(root, 'gpu-doctor.yaml');
    writeFileSync(config, `data_dir: ${data}\nfeedback:\n  keep_logs: true\n`);
    const child = execFile(resolve(import.meta.dirname, '../../bin/gpu-doctor'), ['bot', '--config', config], {
      env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '' },
      timeout: 60_000,
    });
    child.stdin!.end(`${SECRET_LINES.join('\n')}\n${OOM}\n.\n/feedback down\n`);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    await new Promise((r) => child.once('close', r));
    expect(out).toContain('Recorded 👎 for rule cuda-oom');
    const files = readdirSync(join(data, 'feedback-logs'));
    expect(files).toHaveLength(1);
    const text = readFileSync(join(data, 'feedback-logs', files[0]), 'utf8');
    for (const s of SECRETS) expect(text).not.toContain(s);
    expect(text).toContain('CUDA out of memory');
    expect(votes(data)).toEqual([{ rule: 'cuda-oom', vote: -1 }]);
  }, 90_000);
});
