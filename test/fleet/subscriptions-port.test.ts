// Fleet's subscription port (src/fleet/subscriptions.ts) and its two implementations side by side: the
// same calls give the same rows from SQLite (data_dir/watch.sqlite, beside the leak watch's store) and
// from a real PostgreSQL; a SQLite subscription outlives a restart of either store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubscriptionRow, SubscriptionStorage } from '../../src/fleet/subscriptions.js';
import { openPool, type Pool } from '../../src/storage/postgres/connect.js';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { PgSubscriptionStore } from '../../src/storage/postgres/subscriptions.js';
import { SubscriptionStore } from '../../src/storage/sqlite/subscriptions.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { startPostgres, type PgInstance } from '../storage/pg-harness.js';
import { describeWithPostgres } from '../storage/pg-suite.js';

const ALICE = { platform: 'slack', userId: 'UALICE001' };
const BOB = { platform: 'discord', userId: '123456789012345678' };

/** One scripted sequence through the port; what it saw, ids replaced by their order of creation. */
async function script(store: SubscriptionStorage): Promise<unknown[]> {
  const seen: unknown[] = [];
  const ids: number[] = [];
  const plain = (r: SubscriptionRow | null) => r && { ...r, id: ids.indexOf(r.id) };
  const a = await store.addSubscription({ ...ALICE, sizeMiB: 40960, size: '40G', count: 2, shared: true, createdMs: 10, expiresMs: 20 });
  ids.push(a.id);
  const b = await store.addSubscription({ ...BOB, sizeMiB: 1024, size: '1G', count: 1, shared: false, createdMs: 11, expiresMs: 21 });
  ids.push(b.id);
  seen.push((await store.openSubscriptions()).map(plain));
  seen.push((await store.openSubscriptions(ALICE)).map(plain));
  // Only the owner cancels; a close happens once.
  seen.push(await store.closeSubscription(a.id, 'cancelled', 30, null, BOB));
  seen.push(await store.closeSubscription(a.id, 'notified', 31, 'gpu1 GPU 4'));
  seen.push(await store.closeSubscription(a.id, 'expired', 32));
  await store.noteSubscription(a.id, 'message not sent: ' + 'x'.repeat(600));
  const closed = await store.subscription(a.id);
  seen.push({ ...plain(closed), note: closed?.note?.length });
  seen.push((await store.openSubscriptions()).map(plain));
  seen.push(await store.subscription(-1));
  return seen;
}

describe('subscriptions in SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-subs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('live in the leak watch database beside its store, and outlive a restart of both', async () => {
    const watch = WatchStore.inDataDir(dir);
    const subs = SubscriptionStore.inDataDir(dir);
    expect(subs.file).toBe(watch.file);
    const row = subs.addSubscription({ ...ALICE, sizeMiB: 2048, size: '2G', count: 1, shared: false, createdMs: 1, expiresMs: 2 });
    await watch.insertPaced([{ ts: 1000, host: 'gpu1', gpu: 0, gpuTotalMiB: 80, gpuUsedMiB: 1, utilizationPct: 0 }]);
    subs.close();
    watch.close();
    const again = SubscriptionStore.inDataDir(dir);
    expect(again.openSubscriptions(ALICE)).toEqual([row]);
    again.close();
  });
});

describeWithPostgres('subscriptions: SQLite and Postgres side by side', 'test/fleet/subscriptions-port.test.ts', () => {
  let server: PgInstance;
  let pool: Pool;
  const dir = mkdtempSync(join(tmpdir(), 'gd-subs-pg-'));
  beforeAll(async () => {
    server = await startPostgres();
    pool = openPool({ url: await server.createDatabase('subscriptions_port') });
    await migrate(pool);
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the same calls give the same answers from both', async () => {
    const sqlite = SubscriptionStore.inDataDir(dir);
    const fromSqlite = await script(sqlite);
    sqlite.close();
    const fromPg = await script(new PgSubscriptionStore(pool));
    expect(fromPg).toEqual(fromSqlite);
    // What the script saw, spelled out once: both open, then only bob's; the owner check; one close; the note cut.
    expect(fromSqlite.slice(2, 5)).toEqual([false, true, false]);
    expect(fromSqlite[5]).toMatchObject({ state: 'notified', closedMs: 31, note: 500 });
    expect((fromSqlite[6] as unknown[]).length).toBe(1);
  });
});
