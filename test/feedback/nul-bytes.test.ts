// A NUL byte (or a lone UTF-16 surrogate) in what users send must not lose a row: PostgreSQL's text refuses
// U+0000 ("invalid byte sequence for encoding UTF8: 0x00"), so a command with one lost its audit row and a
// pasted log with one lost its feedback record (issue 22 item 13). Through the real Bolt app (signed Slack
// requests against the fake Slack Web API), with the audit trail and the feedback store in a real PostgreSQL
// (started by the test) and in SQLite: the rows are there, NUL shown as U+2400.
import Database from '../../src/storage/sqlite-driver.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';
import { AuditStore } from '../../src/storage/sqlite/audit.js';
import { PgAuditStore } from '../../src/storage/postgres/audit.js';
import { openPool, type Pool } from '../../src/storage/postgres/connect.js';
import { PgFeedbackStore } from '../../src/storage/postgres/feedback.js';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { FakeSlack, postSignedSlack } from '../adapters/fake-slack.js';
import { testDeps } from '../adapters/helpers.js';
import { startPostgres, type PgInstance } from '../storage/pg-harness.js';
import { describeWithPostgres } from '../storage/pg-suite.js';

const SECRET = 'test-signing-secret-nul-0123456789';
const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
const escapeSlack = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** A command line with a NUL byte and a lone surrogate in its arguments. */
const COMMAND = 'help status\u0000; echo \uD800x';
/**
 * A pasted log with NUL bytes (a binary file's bytes in a traceback) that still reads as a CUDA OOM. They come
 * after the first 64 KB, where the log reader no longer looks for binary data (so they reach the store).
 */
const FILLER = Array.from({ length: 3600 }, (_, i) => `step ${i}: loss=0.${(i * 7919) % 1000}`).join('\n');
const PASTE = `${FILLER}\nreading shard: b'PK\u0003\u0004\u0000\u0000\u0008'\n${OOM}`;

describeWithPostgres('NUL bytes and lone surrogates from users, in both stores', 'test/feedback/nul-bytes.test.ts', () => {
  let server: PgInstance;
  let pool: Pool;
  let fake: FakeSlack;
  const stop: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    server = await startPostgres();
    pool = openPool({ url: await server.createDatabase('nul_bytes') });
    await migrate(pool);
    fake = await new FakeSlack().start();
  }, 90_000);
  afterAll(async () => {
    for (const s of stop.reverse()) await s();
    await fake?.close();
    await pool?.end();
    await server?.stop();
  });

  /** A Slack adapter whose audit and feedback go to the given stores; returns its events URL. */
  async function slackWith(stores: (dataDir: string) => { audit: Pick<PgAuditStore, 'record'>; feedback: FeedbackStore | PgFeedbackStore }) {
    const deps = await testDeps({ channels: { slack: ['C1'] } });
    const { audit, feedback } = stores(deps.dataDir);
    deps.services.feedback = feedback;
    const adapter: SlackAdapter = createSlackAdapter({
      ...deps,
      audit,
      env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${fake.base}/api/`, port: 0 },
      pacer: new ChannelPacer(0),
    });
    await adapter.start();
    stop.push(
      () => adapter.stop(),
      () => deps.audit.close(),
    );
    return { url: `http://127.0.0.1:${adapter.port()}/slack/events`, dataDir: deps.dataDir };
  }

  async function post(url: string, body: string, type: string) {
    const res = await postSignedSlack(url, SECRET, body, type);
    expect(res.status).toBe(200);
  }
  const slash = (url: string, text: string) =>
    post(
      url,
      new URLSearchParams({
        token: 'x',
        team_id: 'T1',
        channel_id: 'C1',
        user_id: 'UNUL1',
        user_name: 'u',
        command: '/gpu',
        text,
        response_url: `${fake.base}/response/nul`,
        trigger_id: '1',
      }).toString(),
      'application/x-www-form-urlencoded',
    );
  const paste = (url: string, text: string, eventId: string) =>
    post(
      url,
      JSON.stringify({
        token: 'x',
        team_id: 'T1',
        api_app_id: 'A1',
        type: 'event_callback',
        event_id: eventId,
        event_time: Math.floor(Date.now() / 1000),
        event: { type: 'message', channel: 'C1', channel_type: 'channel', user: 'UNUL1', text: escapeSlack(text), ts: `1700000002.${eventId.length}00100` },
      }),
      'application/json',
    );

  async function until<T>(read: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
    for (let i = 0; i < 200; i++) {
      const v = await read();
      if (v !== undefined) return v;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('Postgres: the command with NUL keeps its audit row; the pasted log with NUL keeps its feedback record and kept text', async () => {
    const errors: unknown[] = [];
    const { url } = await slackWith((dataDir) => ({
      audit: new PgAuditStore(pool, 'replica-nul', (e) => errors.push(e)),
      feedback: new PgFeedbackStore(pool, { keepLogs: true, logsDir: join(dataDir, 'feedback-logs') }),
    }));
    await slash(url, COMMAND);
    const audit = await until(
      async () => (await pool.query<{ command: string }>("SELECT command FROM audit WHERE username = 'UNUL1'")).rows[0],
      'the audit row',
    );
    expect(audit.command).toBe('help status\u2400; echo \uFFFDx');
    expect(errors).toEqual([]);

    await paste(url, PASTE, 'EvNulPg1');
    const row = await until(
      async () => (await pool.query<{ rule: string; log_text: string }>("SELECT rule, log_text FROM feedback_diagnoses WHERE channel = 'C1'")).rows[0],
      'the feedback record',
    );
    expect(row.rule).toBe('cuda-oom');
    expect(row.log_text).toContain("b'PK\u0003\u0004\u2400\u2400\u0008'");
    expect(row.log_text).not.toContain('\u0000');
  }, 60_000);

  it('SQLite: the same rows, NUL shown the same way', async () => {
    const { url, dataDir } = await slackWith((dir) => ({ audit: testAudit(dir), feedback: FeedbackStore.inDataDir(dir, { keepLogs: true }) }));
    await slash(url, COMMAND);
    await paste(url, PASTE, 'EvNulSqlite1');
    const read = <T>(file: string, sql: string) => {
      const db = new Database(join(dataDir, file), { readonly: true });
      try {
        return db.prepare(sql).get() as T | undefined;
      } finally {
        db.close();
      }
    };
    const audit = await until(
      () => read<{ command: string }>('audit-nul.sqlite', "SELECT command FROM audit WHERE user = 'UNUL1' AND command LIKE 'help%'"),
      'the audit row',
    );
    expect(audit.command).toBe('help status\u2400; echo \uFFFDx');
    const row = await until(() => read<{ log_text: string }>('feedback.sqlite', "SELECT log_text FROM diagnoses WHERE channel = 'C1'"), 'the feedback record');
    expect(row.log_text).toContain("b'PK\u0003\u0004\u2400\u2400\u0008'");
  }, 60_000);
});

/** The SQLite audit store in its own file of the data dir (testDeps' own one is not this test's). */
function testAudit(dir: string): AuditStore {
  return new AuditStore(join(dir, 'audit-nul.sqlite'));
}
