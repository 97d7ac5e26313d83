// The weekly feedback list reads kept logs' paths back from the database: a row changed by hand (or by anyone
// with access to the database) must not put a path outside the kept-logs folder, or a shell command, into
// the line admins are told to paste, nor have a file outside the folder (or behind a link) quoted. Through
// the bot as `gpu-doctor bot` runs it (config file, fake Slack Web API), the week missed while it was down.
// Also: a kept log from before the current rule set (an unredacted redis:// password, a key block cut before
// its END line) is never quoted as it is.
import Database from '../../src/storage/sqlite-driver.js';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import { FEEDBACK_WEEKLY_NAME } from '../../src/core/config.js';
import { keptLogPath } from '../../src/feedback/storage.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { FakeSlack } from '../adapters/fake-slack.js';
import { fake } from './secret-shapes.js';

const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });
const DAY = 86_400_000;
const HOSTILE = ['../../etc/passwd', 'x; rm -rf ~', '$(id)', '/etc/passwd', '`id`.log'];

describe('the weekly list with rows read back from the database', () => {
  let bots: RunningBots | null = null;
  let app: App | null = null;
  let slack: FakeSlack | null = null;
  afterEach(async () => {
    await bots?.stop();
    await app?.close();
    await slack?.close();
    bots = app = slack = null;
  });

  it('a hostile log_file is skipped and named; a path with spaces and quotes is shell-quoted; a link or an old unredacted log is never quoted', async () => {
    // A data_dir whose name needs quoting in a shell.
    const root = mkdtempSync(join(tmpdir(), "gd-fb weekly 'q' $HOME-"));
    const data = join(root, 'data');
    const logs = join(data, 'feedback-logs');
    const now = Date.now();
    const store = FeedbackStore.inDataDir(data, { keepLogs: true });
    const log = (i: number) => `step ${i}\nValueError: the config has no field "f${i}"`;
    const good = store.record({ platform: 'slack', userId: 'U1', channelId: 'C1', rule: null, category: null, log: log(0) }, now - DAY);
    const hostile = HOSTILE.map((_, i) =>
      store.record({ platform: 'slack', userId: 'U1', channelId: 'C1', rule: null, category: null, log: log(i + 1) }, now - DAY),
    );
    const linked = store.record({ platform: 'slack', userId: 'U1', channelId: 'C1', rule: null, category: null, log: log(9) }, now - DAY);
    const old = store.record({ platform: 'slack', userId: 'U1', channelId: 'C1', rule: null, category: null, log: log(10) }, now - 2 * DAY);
    store.close();

    // Rows changed behind the bot's back: paths outside the folder, shell syntax; a kept log replaced by a
    // link to /etc/passwd; one kept before the current rules (as the audit found it, secrets in the clear).
    const db = new Database(join(data, 'feedback.sqlite'));
    HOSTILE.forEach((p, i) => db.prepare('UPDATE diagnoses SET log_file = ? WHERE id = ?').run(i === 0 ? join(logs, p) : p, hostile[i]));
    const linkPath = keptLogPath(logs, linked, null, now - DAY);
    db.prepare('UPDATE diagnoses SET log_file = ? WHERE id = ?').run(linkPath, linked);
    const oldPath = (db.prepare('SELECT log_file FROM diagnoses WHERE id = ?').get(old) as { log_file: string }).log_file;
    db.close();
    rmSync(linkPath);
    mkdirSync(join(root, 'elsewhere'));
    writeFileSync(join(root, 'elsewhere', 'passwd'), 'root:x:0:0:root:/root:/bin/bash\nRuntimeError: linked-file-line\n');
    symlinkSync(join(root, 'elsewhere', 'passwd'), linkPath);
    const password = fake(16, 200);
    const keyLine = fake(64, 201, 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/');
    writeFileSync(oldPath, `-----BEGIN RSA PRIVATE KEY-----\n${keyLine}\nredis.exceptions.ConnectionError: redis://:${password}@cache:6379 refused\n`);

    const w = WatchStore.inDataDir(data);
    w.setLastRun(FEEDBACK_WEEKLY_NAME, now - 8 * DAY);
    w.close();
    const config = join(root, 'gpu-doctor.yaml');
    writeFileSync(config, `data_dir: "${data}"\nfeedback:\n  keep_logs: true\n  weekly: { platform: slack, channel: CADMIN, cron: "0 9 * * 1" }\n`);
    slack = await new FakeSlack().start();
    app = await createApp(config);
    bots = await startChatAdapters(
      app,
      { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_SIGNING_SECRET: 'test-signing-secret-0123456789', SLACK_API_URL: `${slack.base}/api/`, PORT: '0' },
      silent,
    );
    const [call] = await slack.waitFor('chat.postMessage');
    const text = unescapeSlack(JSON.stringify(call.body.blocks));

    // The good row: listed, its path shell-quoted (the folder has spaces, a quote and a $).
    const goodPath = keptLogPath(logs, good, null, now - DAY);
    expect(text).toContain(good);
    expect(text).toContain(JSON.stringify(`gpu-doctor knowledge new RULE-ID --from '${goodPath.replace(/'/g, `'\\''`)}'`).slice(1, -1));
    // The hostile rows: named as skipped, their paths nowhere.
    expect(text).toContain(`${HOSTILE.length} kept logs not listed`);
    for (const id of hostile) expect(text).toContain(id);
    for (const p of ['etc/passwd', 'rm -rf', '$(id)', '`id`']) expect(text).not.toContain(p);
    // The link: listed (its name is a kept log's) but nothing read through it.
    expect(text).not.toContain('root:x:0');
    expect(text).not.toContain('linked-file-line');
    // The old log: its line is quoted redacted, the key body and the password nowhere.
    expect(text).toContain('redis.exceptions.ConnectionError: redis://<credentials>@cache:6379 refused');
    expect(text).not.toContain(password);
    expect(text).not.toContain(keyLine.slice(0, 16));
  }, 60_000);
});
