// Issue 22 item 11: closed `/gpu notify` subscriptions were never deleted (300 add/cancel cycles left 300
// rows). Through the `/gpu notify` command (the real CommandRegistry over the leak watch's runtime), on the
// SQLite store and on a real PostgreSQL: a user's closed subscriptions beyond the newest
// KEEP_CLOSED_SUBSCRIPTIONS are deleted as another closes; open ones and other users' rows are kept.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import type { CommandContext } from '../../src/core/command.js';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { openPool, type Pool } from '../../src/storage/postgres/connect.js';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { PgWatchState } from '../../src/storage/postgres/watch.js';
import { PgSubscriptionStore } from '../../src/storage/postgres/subscriptions.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { KEEP_CLOSED_SUBSCRIPTIONS } from '../../src/fleet/subscriptions.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { SubscriptionStore } from '../../src/storage/sqlite/subscriptions.js';
import { startPostgres, type PgInstance } from '../storage/pg-harness.js';
import { describeWithPostgres } from '../storage/pg-suite.js';

const CYCLES = 300;
const registry = new CommandRegistry(allCommands());

/** `cycles` times `/gpu notify 40G` then `/gpu notify cancel ID` by one user, with one subscription left open by another. */
async function churn(runtime: WatchRuntime, cycles: number): Promise<void> {
  const ctx = (userId: string): CommandContext => ({ platform: 'slack', userId, isAdmin: false, services: { watch: runtime } as unknown as Services });
  expect((await registry.dispatch('/gpu notify 80G', ctx('UOTHER01'))).outcome).toBe('ok');
  for (let i = 0; i < cycles; i++) {
    const added = await registry.dispatch('/gpu notify 40G', ctx('UCHURN01'));
    const id = /#(\d+)/.exec(added.reply.title)?.[1];
    expect(id, added.reply.title).toBeDefined();
    const cancelled = await registry.dispatch(`/gpu notify cancel ${id}`, ctx('UCHURN01'));
    expect(cancelled.reply.severity).toBe('ok');
  }
  // One left open: it stays, whatever the bound.
  expect((await registry.dispatch('/gpu notify 20G', ctx('UCHURN01'))).outcome).toBe('ok');
  expect((await runtime.notify!.list('slack', 'UCHURN01')).map((s) => s.size)).toEqual(['20G']);
}

interface Counts {
  closed: number;
  open: number;
  other: number;
  newestClosedKept: boolean;
}

describe('closed /gpu notify subscriptions are bounded per user (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-notify-bound-'));
  const store = WatchStore.inDataDir(dir);
  const runtime = new WatchRuntime(store, undefined, undefined, parseConfig({}).watch);
  runtime.setSubscriptions(SubscriptionStore.inDataDir(dir));
  afterAll(() => {
    runtime.stop();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`${CYCLES} add/cancel cycles leave ${KEEP_CLOSED_SUBSCRIPTIONS} closed rows, the newest`, async () => {
    await churn(runtime, CYCLES);
    const q = (sql: string) => (store.db.prepare(sql).get() as { n: number }).n;
    const counts: Counts = {
      closed: q("SELECT count(*) AS n FROM notify_subscriptions WHERE user_id = 'UCHURN01' AND state <> 'open'"),
      open: q("SELECT count(*) AS n FROM notify_subscriptions WHERE user_id = 'UCHURN01' AND state = 'open'"),
      other: q("SELECT count(*) AS n FROM notify_subscriptions WHERE user_id = 'UOTHER01'"),
      newestClosedKept:
        q("SELECT min(id) AS n FROM notify_subscriptions WHERE user_id = 'UCHURN01' AND state <> 'open'") ===
        q("SELECT max(id) AS n FROM notify_subscriptions WHERE user_id = 'UCHURN01' AND state <> 'open'") - (KEEP_CLOSED_SUBSCRIPTIONS - 1),
    };
    expect(counts).toEqual({ closed: KEEP_CLOSED_SUBSCRIPTIONS, open: 1, other: 1, newestClosedKept: true });
  }, 120_000);
});

describeWithPostgres('closed /gpu notify subscriptions are bounded per user (Postgres)', 'test/fleet/notify-bounded.test.ts', () => {
  let server: PgInstance;
  let pool: Pool;
  let runtime: WatchRuntime;
  beforeAll(async () => {
    server = await startPostgres();
    pool = openPool({ url: await server.createDatabase('notify_bound') });
    await migrate(pool);
    runtime = new WatchRuntime(new PgWatchState(pool, { replica: 'a', leaseMs: 5000 }), undefined, undefined, parseConfig({}).watch);
    runtime.setSubscriptions(new PgSubscriptionStore(pool));
  }, 120_000);
  afterAll(async () => {
    runtime?.stop();
    await pool?.end();
    await server?.stop();
  });

  it(`${CYCLES} add/cancel cycles leave ${KEEP_CLOSED_SUBSCRIPTIONS} closed rows, the newest`, async () => {
    await churn(runtime, CYCLES);
    const q = async (sql: string) => Number((await pool.query<{ n: string }>(sql)).rows[0].n);
    const counts: Counts = {
      closed: await q("SELECT count(*) AS n FROM notify_subscriptions WHERE user_id = 'UCHURN01' AND state <> 'open'"),
      open: await q("SELECT count(*) AS n FROM notify_subscriptions WHERE user_id = 'UCHURN01' AND state = 'open'"),
      other: await q("SELECT count(*) AS n FROM notify_subscriptions WHERE user_id = 'UOTHER01'"),
      newestClosedKept:
        (await q("SELECT min(id) AS n FROM notify_subscriptions WHERE user_id = 'UCHURN01' AND state <> 'open'")) ===
        (await q("SELECT max(id) AS n FROM notify_subscriptions WHERE user_id = 'UCHURN01' AND state <> 'open'")) - (KEEP_CLOSED_SUBSCRIPTIONS - 1),
    };
    expect(counts).toEqual({ closed: KEEP_CLOSED_SUBSCRIPTIONS, open: 1, other: 1, newestClosedKept: true });
  }, 180_000);
});
