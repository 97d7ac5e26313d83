// `/gpu feedback list` reads each kept log's path back from the database: a row changed by hand (or by
// anyone who can write the database) that names another file shows that its path was refused, never the
// path, in English and Chinese; a path that is a kept log in the bot's kept-logs folder is still shown.
// SQLite through the console chat, Postgres (a real server) through the command registry.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { runConsoleChat } from '../../src/adapters/console/console-chat.js';
import { renderText } from '../../src/adapters/console/render.js';
import type { Locale } from '../../src/core/i18n.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';
import Database from '../../src/storage/sqlite-driver.js';
import { openPool, type Pool } from '../../src/storage/postgres/connect.js';
import { PgFeedbackStore } from '../../src/storage/postgres/feedback.js';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { startPostgres, type PgInstance } from '../storage/pg-harness.js';
import { describeWithPostgres } from '../storage/pg-suite.js';

const en = JSON.parse(readFileSync(new URL('../../locales/en.json', import.meta.url), 'utf8')) as Record<string, string>;
const zh = JSON.parse(readFileSync(new URL('../../locales/zh.json', import.meta.url), 'utf8')) as Record<string, string>;
/** Paths a changed row could name: none is a kept log in the bot's folder. */
const HOSTILE = ['/etc/passwd', '/root/.ssh/id_ed25519'];

async function consoleChat(input: string, store: FeedbackStore, locale?: Locale): Promise<string> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const done = runConsoleChat({
    input: stdin,
    output: stdout,
    registry: new CommandRegistry(allCommands()),
    context: { platform: 'console', userId: 'admin', isAdmin: true, locale, services: { feedback: store } as unknown as Services },
    interactive: false,
  });
  stdin.end(input);
  await done;
  return out;
}

describe('/gpu feedback list with a changed log_file row (SQLite)', () => {
  it('shows a refusal instead of a path that is not a kept log, in en and zh; a real kept log is still listed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-fb-refused-'));
    try {
      const store = FeedbackStore.inDataDir(dir, { keepLogs: true });
      // Three logs no rule matches: each is kept as a file.
      const ids = ['alpha', 'beta', 'gamma'].map((w) =>
        store.record({ platform: 'console', userId: 'alice', rule: null, category: null, log: `ValueError: no field ${w}\n` }),
      );
      const db = new Database(join(dir, 'feedback.sqlite'));
      const keptPath = (db.prepare('SELECT log_file FROM diagnoses WHERE id = ?').get(ids[2]) as { log_file: string }).log_file;
      HOSTILE.forEach((p, i) => db.prepare('UPDATE diagnoses SET log_file = ? WHERE id = ?').run(p, ids[i]));
      db.close();

      for (const [locale, cat] of [
        [undefined, en],
        ['zh', zh],
      ] as const) {
        const out = await consoleChat('/gpu feedback list\n', store, locale);
        for (const p of HOSTILE) expect(out).not.toContain(p);
        expect(out.split(cat['feedback.report.refused']).length - 1).toBe(HOSTILE.length);
        expect(out).toContain(keptPath);
      }
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeWithPostgres('/gpu feedback list with a changed log_file row (Postgres)', 'test/feedback/list-refused.test.ts', () => {
  let server: PgInstance;
  let pool: Pool;
  let dir: string;

  beforeAll(async () => {
    server = await startPostgres();
    pool = openPool({ url: await server.createDatabase('feedback_refused') });
    await migrate(pool);
    dir = mkdtempSync(join(tmpdir(), 'gd-pgfb-refused-'));
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows a refusal instead of the path; a kept log in the folder is still listed', async () => {
    const store = new PgFeedbackStore(pool, { keepLogs: true, logsDir: join(dir, 'feedback-logs') });
    const ids: string[] = [];
    for (const w of ['alpha', 'beta', 'gamma'])
      ids.push(await store.record({ platform: 'slack', userId: 'UALICE', rule: null, category: null, log: `ValueError: no field ${w}\n` }));
    const kept = (await pool.query<{ log_file: string }>('SELECT log_file FROM feedback_diagnoses WHERE id = $1', [ids[2]])).rows[0].log_file;
    for (const [i, p] of HOSTILE.entries()) await pool.query('UPDATE feedback_diagnoses SET log_file = $1 WHERE id = $2', [p, ids[i]]);

    const registry = new CommandRegistry(allCommands());
    for (const [locale, cat] of [
      [undefined, en],
      ['zh', zh],
    ] as const) {
      const { reply } = await registry.dispatch('/gpu feedback list', {
        platform: 'slack',
        userId: 'UADMIN',
        isAdmin: true,
        locale,
        services: { feedback: store } as unknown as Services,
      });
      const out = renderText(reply);
      for (const p of HOSTILE) expect(out).not.toContain(p);
      expect(out.split(cat['feedback.report.refused']).length - 1).toBe(HOSTILE.length);
      expect(out).toContain(kept);
    }
  });
});
