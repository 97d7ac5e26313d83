// 👍 / 👎 votes, `/gpu whoami` claims and the weekly feedback list's slot in a real PostgreSQL (Debian's
// postgresql package, started by the test), each seen by two replicas: two pools and two stores on one
// database, as two bot processes have them. Commands go through the real command registry.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { feedbackWeeklyPost, FeedbackWeeklySchedule } from '../../src/feedback/weekly.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { PgClaimStore } from '../../src/storage/postgres/claims.js';
import { openPool, type Pool } from '../../src/storage/postgres/connect.js';
import { PgFeedbackStore } from '../../src/storage/postgres/feedback.js';
import { migrate, MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { PgWatchState } from '../../src/storage/postgres/watch.js';
import type { Reply } from '../../src/core/reply.js';
import { startPostgres, type PgInstance } from './pg-harness.js';
import { describeWithPostgres } from './pg-suite.js';

describeWithPostgres('Postgres feedback and whoami claims, two replicas', 'test/storage/pg-feedback-claims.test.ts', () => {
  let server: PgInstance;
  let a: Pool;
  let b: Pool;
  let dir: string;
  const registry = new CommandRegistry(allCommands());
  const ask = async (services: Partial<Services>, line: string, userId: string, isAdmin = false) =>
    (await registry.dispatch(line, { platform: 'slack', userId, isAdmin, services: services as Services })).reply;

  beforeAll(async () => {
    server = await startPostgres();
    const url = await server.createDatabase('two_replicas');
    a = openPool({ url, applicationName: 'replica-a' });
    b = openPool({ url, applicationName: 'replica-b' });
    await Promise.all([migrate(a), migrate(b)]);
    dir = mkdtempSync(join(tmpdir(), 'gd-pgfb-'));
  }, 60_000);

  afterAll(async () => {
    await a?.end();
    await b?.end();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('migrations: a database at version 1 gets the feedback and claims tables once; running again applies nothing', async () => {
    const url = await server.createDatabase('upgrade');
    const [p, q] = [openPool({ url }), openPool({ url })];
    try {
      expect(await migrate(p, MIGRATIONS.slice(0, 1))).toEqual([1]);
      const [rp, rq] = await Promise.all([migrate(p), migrate(q)]);
      expect([...rp, ...rq]).toEqual(MIGRATIONS.slice(1).map((m) => m.version));
      expect(await migrate(q)).toEqual([]);
      const tables = await p.query<{ n: number }>(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_name IN ('feedback_meta', 'feedback_diagnoses', 'feedback_votes', 'owner_claims')",
      );
      expect(tables.rows[0].n).toBe(4);
    } finally {
      await p.end();
      await q.end();
    }
  });

  it('feedback: a diagnosis recorded on one replica is voted on through the other; both reports count the votes', async () => {
    const logsA = join(dir, 'a-logs');
    const logsB = join(dir, 'b-logs');
    const fa = new PgFeedbackStore(a, { keepLogs: true, logsDir: logsA });
    const fb = new PgFeedbackStore(b, { keepLogs: true, logsDir: logsB });
    const log = 'RuntimeError: CUDA out of memory. token=xoxb-123456789012-abcdefabcdef\n';
    const id = await fa.record({ platform: 'slack', userId: 'UALICE', channelId: 'C1', rule: 'cuda-oom', category: 'oom', log });
    // Recorded through A, voted through B (the button click reached the other replica): known there.
    const down = await fb.vote({ id, platform: 'slack', userId: 'UBOB', vote: 'down' });
    expect(down).toMatchObject({ ok: true, id, vote: 'down', previous: null, rule: 'cuda-oom' });
    const kept = (down as { keptLog: string }).keptLog;
    expect(kept.startsWith(logsB)).toBe(true);
    expect(readFileSync(kept, 'utf8')).toContain('CUDA out of memory');
    expect(readFileSync(kept, 'utf8')).not.toContain('xoxb-123456789012');
    // Alice's last diagnosis, found through B although A recorded it (the user hash key is the database's).
    expect(await fb.vote({ platform: 'slack', userId: 'UALICE', vote: 'up' })).toMatchObject({ ok: true, id, previous: null });
    expect(await fa.vote({ id, platform: 'slack', userId: 'UALICE', vote: 'down' })).toMatchObject({ ok: true, previous: 'up', keptLog: kept });
    expect(await fa.vote({ id, platform: 'discord', userId: 'UALICE', vote: 'up' })).toEqual({ ok: false, reason: 'unknown' });
    expect(await fa.vote({ id: 'AAAAAAAAAAAAAAAA', platform: 'slack', userId: 'UALICE', vote: 'up' })).toEqual({ ok: false, reason: 'unknown' });
    expect(await fb.vote({ platform: 'slack', userId: 'UNOBODY', vote: 'up' })).toEqual({ ok: false, reason: 'none' });
    const unmatched = await fb.record({ platform: 'slack', userId: 'UCAROL', rule: null, category: null, log: 'Segmentation fault (core dumped)\n' });
    expect(readdirSync(logsB).some((f) => f.includes(unmatched))).toBe(true);
    // B kept both files in its folder; A, whose kept-logs folder is another, refuses those paths (issue 22).
    for (const [r, shown] of [
      [await fa.report(7), false],
      [await fb.report(7), true],
    ] as const) {
      expect(r.rules).toEqual([
        { rule: 'cuda-oom', category: 'oom', diagnoses: 1, up: 0, down: 2 },
        { rule: null, category: null, diagnoses: 1, up: 0, down: 0 },
      ]);
      expect(r.items.map((i) => [i.id, i.up, i.down, i.logFile !== null, i.logRefused === true])).toEqual([
        [unmatched, 0, 0, shown, !shown],
        [id, 0, 2, shown, !shown],
      ]);
    }
    // The same vote through the chat command on the other replica.
    const id2 = await fa.record({ platform: 'slack', userId: 'UALICE', rule: 'nccl-timeout', category: 'nccl', log: 'NCCL timeout\n' });
    const reply = await ask({ feedback: fb }, `/gpu feedback up ${id2}`, 'UDAVE');
    expect(reply.title).toBe('Thanks for the feedback');
    expect((await ask({ feedback: fa }, '/gpu feedback list', 'UADMIN', true)).sections.flatMap((s) => s.table?.rows ?? [])).toContainEqual([
      'nccl-timeout',
      '1',
      '1',
      '0',
    ]);
  });

  it('feedback: retention deletes old rows everywhere and this replica’s old kept files', async () => {
    const logsDir = join(dir, 'prune-logs');
    const f = new PgFeedbackStore(a, { keepLogs: true, retentionDays: 30, logsDir });
    const old = Date.UTC(2020, 0, 5);
    const id = await f.record({ platform: 'discord', userId: '42', rule: null, category: null, log: 'old crash\n' }, old);
    const file = readdirSync(logsDir).find((x) => x.includes(id))!;
    expect(file.startsWith('20200105-')).toBe(true);
    expect(await f.prune()).toBeGreaterThanOrEqual(1);
    expect(existsSync(join(logsDir, file))).toBe(false);
    expect(await new PgFeedbackStore(b, { logsDir }).vote({ id, platform: 'discord', userId: '42', vote: 'up' })).toEqual({ ok: false, reason: 'unknown' });
  });

  it('claims: made on one replica, approved on the other; both owner maps name the person', async () => {
    const da = new OwnerDirectory({}, new PgClaimStore(a));
    const db = new OwnerDirectory({}, new PgClaimStore(b));
    expect(da.lookup('gpu1', 'alice')).toBeNull();
    const made = await ask({ owners: da }, '/gpu whoami alice Alice Liddell', 'UALICE');
    expect(made.title).toMatch(/^Claim #\d+: alice is me \(Alice Liddell\)$/);
    const [pending] = await db.pending();
    expect(pending).toMatchObject({ unixUser: 'alice', host: null, platform: 'slack', userId: 'UALICE', name: 'Alice Liddell', state: 'pending' });
    // The same claim asked through the other replica is the one claim.
    expect(await db.claim('slack', 'UALICE', 'alice')).toMatchObject({ ok: true, existed: true, claim: { id: pending.id } });
    const approved = await ask({ owners: db }, `/gpu whoami approve ${pending.id}`, 'UADMIN', true);
    expect(approved.title).toBe(`Claim #${pending.id} approved: alice`);
    expect(db.lookup('gpu1', 'alice')).toEqual({ unixUser: 'alice', host: null, name: 'Alice Liddell', slack: 'UALICE' });
    // A's map read the claims before the approval; the next command (registry) reads them again.
    expect(da.lookup('gpu1', 'alice')).toBeNull();
    const mine = await ask({ owners: da }, '/gpu whoami', 'UALICE');
    expect(mine.sections[0].table?.rows).toEqual([['alice', 'every host', `approved (#${pending.id})`]]);
    expect(da.lookup('gpu1', 'alice')).toEqual({ unixUser: 'alice', host: null, name: 'Alice Liddell', slack: 'UALICE' });
    expect(await da.approve(pending.id, 'slack:UADMIN')).toBeNull();
  });

  it('claims: two admins approving at once on two replicas leave one active mapping', async () => {
    const sa = new PgClaimStore(a);
    const sb = new PgClaimStore(b);
    const one = (await sa.addPending({ unixUser: 'bob', host: 'gpu2', platform: 'discord', userId: '111' })).claim;
    const two = (await sb.addPending({ unixUser: 'bob', host: 'gpu2', platform: 'discord', userId: '222' })).claim;
    // The same claim approved on both replicas: approved once.
    const same = await Promise.all([sa.approve(one.id, 'a'), sb.approve(one.id, 'b')]);
    expect(same.filter((r) => r !== null)).toHaveLength(1);
    // Two claims for the same unix user approved at once: both decided, one active (the later replaces the earlier).
    const three = (await sa.addPending({ unixUser: 'bob', host: 'gpu2', platform: 'discord', userId: '333' })).claim;
    const both = await Promise.all([sa.approve(two.id, 'a'), sb.approve(three.id, 'b')]);
    expect(both.every((r) => r !== null)).toBe(true);
    const active = (await sa.active()).filter((c) => c.unixUser === 'bob');
    expect(active).toHaveLength(1);
    expect([two.id, three.id]).toContain(active[0].id);
    expect(await sb.reject(active[0].id, 'b')).toMatchObject({ state: 'rejected' });
    expect((await sa.active()).filter((c) => c.unixUser === 'bob')).toEqual([]);
  });

  it('the weekly list with the watch off: two replicas claim each slot in digest_runs and post it once', async () => {
    const posted: string[] = [];
    const errors: unknown[] = [];
    const store = new PgFeedbackStore(a, { logsDir: join(dir, 'weekly') });
    // Every second: several slots while both run.
    const post = { ...feedbackWeeklyPost(store, { platform: 'console', channel: 'admins', cron: '* * * * * *', timezone: 'UTC' }), cron: '* * * * * *' };
    const replicas = ['a', 'b'].map(
      (name, i) => new FeedbackWeeklySchedule(new PgWatchState(i ? b : a, { replica: name, leaseMs: 3000 }), post, (e) => errors.push(e)),
    );
    await Promise.all(
      replicas.map((r, i) =>
        r.setPoster((_target, reply: Reply) => {
          posted.push(`${i}:${reply.title}`);
          return Promise.resolve();
        }),
      ),
    );
    await new Promise((r) => setTimeout(r, 3500));
    for (const r of replicas) r.stop();
    await new Promise((r) => setTimeout(r, 300));
    const runs = await a.query<{ state: string; n: number }>("SELECT state, count(*) AS n FROM digest_runs WHERE schedule = 'feedback-weekly' GROUP BY state");
    const byState = Object.fromEntries(runs.rows.map((r) => [r.state, r.n]));
    expect(errors).toEqual([]);
    expect(posted.length).toBeGreaterThanOrEqual(2);
    expect(byState.posted).toBe(posted.length);
    expect(byState.claimed ?? 0).toBe(0);
  }, 20_000);
});
