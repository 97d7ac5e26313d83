// The feedback store on real SQLite files, and the redaction of kept logs.
import Database from '../../src/storage/sqlite-driver.js';
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';
import { MAX_KEPT_BYTES, redactLog } from '../../src/feedback/redact.js';
import { SECRET_LINES, SECRETS } from './secrets.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'gd-feedback-'));

describe('redaction of kept logs', () => {
  it('replaces tokens, keys, passwords, home paths, e-mails and IPs with placeholders, and keeps the error', () => {
    const out = redactLog([...SECRET_LINES, 'RuntimeError: CUDA out of memory. Tried to allocate 16.00 MiB (GPU 0; 7.79 GiB total capacity)'].join('\n'));
    for (const s of SECRETS) expect(out, s).not.toContain(s);
    expect(out).toContain('RuntimeError: CUDA out of memory. Tried to allocate 16.00 MiB');
    expect(out).toContain('/home/<user>/runs/exp1/last.pt');
    expect(out).toContain('C:\\Users\\<user>\\data');
    expect(out).toContain('<email>');
    expect(out).toContain('<ip>');
    expect(out).toContain('<slack token>');
    expect(out).toContain('<hf token>');
    // Training settings that merely mention tokens are not secrets.
    expect(redactLog('max_new_tokens=512 tokenizer=bert-base tokens: 2048')).toBe('max_new_tokens=512 tokenizer=bert-base tokens: 2048');
    expect(redactLog('{"password": "s3cr3t!", "SECRET_KEY": "abc"}')).toBe('{"password": "<redacted>", "SECRET_KEY": "<redacted>"}');
  });

  it('keeps only the last 256 KiB, from a line start, and stays fast on hostile input (re2)', () => {
    const big = 'x'.repeat(100) + '\n' + 'a@'.repeat(400_000) + '\n' + '/home/'.repeat(200_000) + '\nRuntimeError: the end\n';
    const t0 = performance.now();
    const out = redactLog(big);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(MAX_KEPT_BYTES + 200);
    expect(out).toMatch(/^\[\.\.\. earlier lines not kept/);
    expect(out).toContain('RuntimeError: the end');
  });
});

describe('feedback store', () => {
  it('stores votes with the rule id, one per user per diagnosis (a second vote replaces it), and no log text by default', () => {
    const dir = tempDir();
    const store = FeedbackStore.inDataDir(dir);
    // A user id long enough that the random id or the hash never holds it by chance ('U1' did, 1 run in ~90).
    const id = store.record({
      platform: 'slack',
      userId: 'U0ALICE0001',
      channelId: 'C1',
      rule: 'cuda-oom',
      category: 'cuda_oom',
      log: SECRET_LINES.join('\n'),
    });
    expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(store.vote({ id, platform: 'slack', userId: 'U2', vote: 'down' })).toMatchObject({
      ok: true,
      vote: 'down',
      previous: null,
      rule: 'cuda-oom',
      keptLog: null,
    });
    expect(store.vote({ id, platform: 'slack', userId: 'U2', vote: 'up' })).toMatchObject({ ok: true, vote: 'up', previous: 'down' });
    expect(store.vote({ id, platform: 'slack', userId: 'U3', vote: 'down' })).toMatchObject({ ok: true });
    store.close();
    const db = new Database(join(dir, 'feedback.sqlite'), { readonly: true });
    const votes = db.prepare('SELECT v.vote, d.rule FROM votes v JOIN diagnoses d ON d.id = v.diagnosis_id ORDER BY v.vote').all();
    expect(votes).toEqual([
      { vote: -1, rule: 'cuda-oom' },
      { vote: 1, rule: 'cuda-oom' },
    ]);
    // Nobody is named: the user column is a keyed hash, and nothing of the log is stored.
    const row = db.prepare('SELECT * FROM diagnoses').get() as Record<string, unknown>;
    expect(JSON.stringify(row)).not.toContain('U0ALICE0001');
    expect(row.log_text).toBeNull();
    expect(row.log_file).toBeNull();
    db.close();
    expect(existsSync(join(dir, 'feedback-logs'))).toBe(false);
  });

  it('answers an unknown, malformed or other-platform id as unknown and stores nothing', () => {
    const dir = tempDir();
    const store = FeedbackStore.inDataDir(dir);
    const id = store.record({ platform: 'discord', userId: '1', rule: 'cuda-oom', category: 'cuda_oom', log: 'x' });
    for (const bad of ['AAAAAAAAAAAAAAAA', "x' OR 1=1 --", '', id + 'x'])
      expect(store.vote({ id: bad, platform: 'discord', userId: '1', vote: 'up' })).toEqual({ ok: false, reason: 'unknown' });
    expect(store.vote({ id, platform: 'slack', userId: '1', vote: 'up' })).toEqual({ ok: false, reason: 'unknown' });
    expect(store.vote({ platform: 'console', userId: 'nobody', vote: 'up' })).toEqual({ ok: false, reason: 'none' });
    expect(store.report(7).rules).toEqual([{ rule: 'cuda-oom', category: 'cuda_oom', diagnoses: 1, up: 0, down: 0 }]);
    store.close();
  });

  it('with keep_logs: an unmatched log is kept at once, a matched one on its first 👎, redacted, 0600 in a 0700 folder', () => {
    const dir = tempDir();
    const store = FeedbackStore.inDataDir(dir, { keepLogs: true });
    const log = [...SECRET_LINES, 'RuntimeError: CUDA out of memory.'].join('\n');
    const unmatched = store.record({ platform: 'console', userId: 'alice', rule: null, category: null, log });
    const matched = store.record({ platform: 'console', userId: 'alice', rule: 'cuda-oom', category: 'cuda_oom', log });
    const liked = store.record({ platform: 'console', userId: 'alice', rule: 'nccl-timeout', category: 'nccl_or_distributed', log });
    expect(readdirSync(join(dir, 'feedback-logs'))).toHaveLength(1);
    const down = store.vote({ id: matched, platform: 'console', userId: 'bob', vote: 'down' });
    expect(down.ok && down.keptLog).toMatch(/feedback-logs\/\d{8}-cuda-oom-[\w-]{16}\.log$/);
    store.vote({ id: liked, platform: 'console', userId: 'bob', vote: 'up' });
    const files = readdirSync(join(dir, 'feedback-logs'));
    expect(files).toHaveLength(2);
    expect((statSync(join(dir, 'feedback-logs')).mode & 0o777).toString(8)).toBe('700');
    for (const f of files) {
      const path = join(dir, 'feedback-logs', f);
      expect((statSync(path).mode & 0o777).toString(8)).toBe('600');
      const text = readFileSync(path, 'utf8');
      for (const s of SECRETS) expect(text, `${f}: ${s}`).not.toContain(s);
      expect(text).toContain('/home/<user>/runs');
      expect(text).toContain('RuntimeError: CUDA out of memory.');
    }
    const report = store.report(7);
    expect(report.items.map((i) => i.id).sort()).toEqual([unmatched, matched].sort());
    expect(report.items.every((i) => i.logFile && existsSync(i.logFile))).toBe(true);
    expect(report.rules.find((r) => r.rule === 'nccl-timeout')).toMatchObject({ up: 1, down: 0 });
    expect(report.rules.find((r) => r.rule === null)).toMatchObject({ diagnoses: 1 });
    // The text of a 👍'd log waits in the database only until retention ends; nothing else is on disk.
    for (const f of ['feedback.sqlite', 'feedback.sqlite-wal'])
      if (existsSync(join(dir, f))) expect(readFileSync(join(dir, f)).includes('hunter2')).toBe(false);
    store.close();
    expect((statSync(join(dir, 'feedback.sqlite')).mode & 0o777).toString(8)).toBe('600');
  });

  it('the week: a report covers the last N days; retention deletes old rows, votes and kept logs', () => {
    const dir = tempDir();
    const now = Date.UTC(2026, 10, 25, 12);
    const store = FeedbackStore.inDataDir(dir, { keepLogs: true, retentionDays: 30 });
    const old = store.record({ platform: 'slack', userId: 'U1', rule: null, category: null, log: 'Traceback\nValueError: x' }, now - 10 * 86_400_000);
    store.record({ platform: 'slack', userId: 'U1', rule: null, category: null, log: 'Traceback\nValueError: y' }, now - 86_400_000);
    expect(store.report(7, now).items).toHaveLength(1);
    expect(store.report(14, now).items.map((i) => i.id)).toContain(old);
    const oldFile = store.report(14, now).items.find((i) => i.id === old)!.logFile!;
    expect(store.prune(now + 21 * 86_400_000)).toBe(1);
    expect(existsSync(oldFile)).toBe(false);
    expect(store.report(60, now + 21 * 86_400_000).items).toHaveLength(1);
    store.close();
  });
  it('retention deletes only kept logs: a row whose log_file names a file elsewhere loses its row, never that file', () => {
    const dir = tempDir();
    const now = Date.UTC(2026, 10, 25, 12);
    const store = FeedbackStore.inDataDir(dir, { keepLogs: true, retentionDays: 30 });
    const id = store.record({ platform: 'slack', userId: 'U1', rule: null, category: null, log: 'Traceback\nValueError: x' }, now - 40 * 86_400_000);
    const kept = store.report(60, now).items.find((i) => i.id === id)!.logFile!;
    store.close();
    // Rows as another writer of the database could leave them: outside files, a traversal, a kept-looking
    // name in another folder.
    const victims = [join(dir, 'precious.txt'), join(dir, 'feedback-logs', '..', 'precious2.txt'), join(tempDir(), '20261020-unmatched-AAAAAAAAAAAAAAAA.log')];
    for (const v of victims) writeFileSync(v, 'keep me');
    const db = new Database(join(dir, 'feedback.sqlite'));
    const ins = db.prepare(
      'INSERT INTO diagnoses (id, ts, platform, channel, user_hash, rule, category, matched, log_text, log_file) SELECT ?, ts, platform, channel, user_hash, rule, category, matched, log_text, ? FROM diagnoses WHERE id = ?',
    );
    victims.forEach((v, n) => ins.run(`BBBBBBBBBBBBBBB${n}`, v, id));
    db.close();
    const again = FeedbackStore.inDataDir(dir, { keepLogs: true, retentionDays: 30 });
    again.prune(now); // (opening the store may already have pruned)
    expect(again.report(60, now - 50 * 86_400_000).items).toHaveLength(0);
    for (const v of victims) expect(readFileSync(v, 'utf8')).toBe('keep me');
    expect(existsSync(kept)).toBe(false);
    again.close();
  });
});
