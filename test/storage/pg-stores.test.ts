// The Postgres stores against a real PostgreSQL (Debian's postgresql package, started by the test):
// migrations, the registry and trusted keys, samples (the same findings as the SQLite store for the same
// samples), digest slots, sampling leases, subscriptions and the audit trail, each seen by two replicas
// (two pools, as two bot processes would have).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPool, redactUrl, pgErrorLine, type Pool } from '../../src/storage/postgres/connect.js';
import { migrate, MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { PgHostRegistry } from '../../src/storage/postgres/registry.js';
import { PgWatchState } from '../../src/storage/postgres/watch.js';
import { PgSubscriptionStore } from '../../src/storage/postgres/subscriptions.js';
import { PgAuditStore } from '../../src/storage/postgres/audit.js';
import { openSharedStorage } from '../../src/storage/postgres/index.js';
import { storageOf } from '../../src/storage/config.js';
import { parseConfig } from '../../src/config.js';
import { findingsFromStore, findingsOf } from '../../src/watch/findings.js';
import { findingChartFromStore } from '../../src/watch/chart-store.js';
import { toMs } from '../../src/watch/series.js';
import type { Sample } from '../../src/watch/types.js';
import { TRACES_PATH } from '../watch/generate-traces.js';
import { decodeTrace } from '../watch/generator.js';
import { startPostgres, type PgInstance } from './pg-harness.js';
import { describeWithPostgres } from './pg-suite.js';
import { tempWatchStore } from './sqlite-stores.js';

const FP_A = 'SHA256:' + 'A'.repeat(43);
const FP_B = 'SHA256:' + 'B'.repeat(43);

describeWithPostgres('Postgres stores', 'test/storage/pg-stores.test.ts', () => {
  let server: PgInstance;
  let url: string;
  let a: Pool;
  let b: Pool;

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase('stores');
    a = openPool({ url, applicationName: 'replica-a' });
    b = openPool({ url, applicationName: 'replica-b' });
    await migrate(a);
  }, 60_000);

  afterAll(async () => {
    await a?.end();
    await b?.end();
    await server?.stop();
  });

  it('migrations: applied once, by one of two replicas starting together; a second run applies nothing', async () => {
    const fresh = await server.createDatabase('migrations');
    const [pa, pb] = [openPool({ url: fresh }), openPool({ url: fresh })];
    try {
      const [ra, rb] = await Promise.all([migrate(pa), migrate(pb)]);
      expect([...ra, ...rb].sort()).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await migrate(pa)).toEqual([]);
      const v = await pa.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(v.rows.map((r: { version: number }) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await pa.end();
      await pb.end();
    }
  });

  it('registry: a host added, trusted and removed through one replica is seen by the other; a config pin wins', async () => {
    const config = [{ name: 'pinned', host: '10.0.0.9', hostKey: FP_A, origin: 'config' as const }];
    const ra = new PgHostRegistry(a, config);
    const rb = new PgHostRegistry(b, config);
    await ra.add({ name: 'gpu7', host: '10.0.0.7', port: 2222, user: 'ml', hostKey: null });
    await expect(rb.add({ name: 'gpu7', host: '10.0.0.8' })).rejects.toThrow(/already exists/);
    await expect(ra.add({ name: 'pinned', host: '10.0.0.8' })).rejects.toThrow(/config file/);
    await expect(ra.add({ name: 'bad name', host: 'x' })).rejects.toThrow(/invalid host name/);
    await rb.refresh();
    expect(rb.get('gpu7')).toEqual({ name: 'gpu7', host: '10.0.0.7', port: 2222, user: 'ml', origin: 'runtime' });
    await rb.trust('gpu7', FP_B);
    await rb.trust('pinned', FP_B);
    await ra.refresh();
    expect(ra.get('gpu7')).toMatchObject({ hostKey: FP_B, pinnedBy: 'trust' });
    expect(ra.get('pinned')).toMatchObject({ hostKey: FP_A, pinnedBy: 'config' });
    expect(ra.list().map((h) => h.name)).toEqual(['pinned', 'gpu7']);
    expect(await ra.remove('gpu7')).toBe(true);
    expect(await ra.remove('gpu7')).toBe(false);
    await rb.refresh();
    expect(rb.get('gpu7')).toBeNull();
    expect((await b.query("SELECT count(*) AS n FROM host_keys WHERE name = 'gpu7'")).rows[0].n).toBe(0);
  });

  it('samples: every stored trace gives the same findings and samples from Postgres as from the SQLite store', async () => {
    const traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);
    let compared = 0;
    let charts = 0;
    for (const t of traces) {
      await a.query('TRUNCATE watch_samples, watch_procs, watch_hosts RESTART IDENTITY');
      const pg = new PgWatchState(a, { replica: 'a', leaseMs: 5000 });
      const s = tempWatchStore();
      // SQLite as the sampler writes (one poll at a time); Postgres an hour of polls per call (one round trip).
      let poll: Sample[] = [];
      let hour: Sample[] = [];
      let last: number | undefined;
      for (const x of [...t.samples, null]) {
        const ms = x ? toMs(x.ts) : undefined;
        if (poll.length && ms !== last) {
          s.insert(poll);
          hour.push(...poll);
          poll = [];
        }
        if (hour.length && (x === null || Math.floor(ms! / 3_600_000) !== Math.floor(toMs(hour[0].ts) / 3_600_000))) {
          await pg.insert(hour);
          hour = [];
        }
        if (x) poll.push(x);
        last = ms;
      }
      const end = toMs(t.samples[t.samples.length - 1].ts);
      // Read from the other replica (its own caches, its own pool).
      const other = new PgWatchState(b, { replica: 'b', leaseMs: 5000 });
      for (const now of [end, end + 7 * 60_000]) expect(await findingsOf(other, {}, now), `${t.id} now=${now}`).toEqual(findingsFromStore(s, {}, now));
      const host = t.samples[0].host;
      expect(await other.samplesSince(end - 6 * 3_600_000, host), t.id).toEqual([...s.samplesSince(end - 6 * 3_600_000, host)]);
      // A digest's chart of a finding: the same PNG from the samples read first from Postgres.
      const f = findingsFromStore(s, {}, end).findings.find((x) => x.kind === 'leak');
      if (f && charts < 3) {
        const style = { timeZone: 'UTC', sampleIntervalSec: 60 };
        const want = findingChartFromStore(s, style, end)(f);
        expect(want, t.id).toBeDefined();
        expect(findingChartFromStore(await other.samplesOf([f.host], end - 72 * 3_600_000), style, end)(f), t.id).toEqual(want);
        charts++;
      }
      s.close();
      compared++;
    }
    expect(compared).toBe(traces.length);
    expect(charts).toBe(3);
  }, 120_000);

  it('retention: rows past retention_days become their per-hour max, as in the SQLite store; one replica does it', async () => {
    const t = readFileSync(TRACES_PATH, 'utf8')
      .trim()
      .split('\n')
      .map(decodeTrace)
      .find((x) => x.expected.length > 0)!;
    await a.query('TRUNCATE watch_samples, watch_procs, watch_hosts, watch_meta RESTART IDENTITY');
    const pa = new PgWatchState(a, { replica: 'a', leaseMs: 5000 });
    const pb = new PgWatchState(b, { replica: 'b', leaseMs: 5000 });
    const s = tempWatchStore();
    s.insert(t.samples);
    await pa.insert(t.samples);
    const first = toMs(t.samples[0].ts);
    // "now" such that the first 5 hours of the trace are past a 1-day retention.
    const now = first + 86_400_000 + 5 * 3_600_000;
    s.applyRetention(1, now);
    const [ra, rb] = await Promise.all([pa.applyRetention(1, now), pb.applyRetention(1, now)]);
    expect([ra, rb].filter((r) => r.after > 0)).toHaveLength(1);
    const host = t.samples[0].host;
    expect(await pb.samplesSince(0, host)).toEqual([...s.samplesSince(0, host)]);
    expect(await pa.applyRetention(1, now)).toEqual({ before: 0, after: 0 });
    s.close();
  });

  it('digest slots: one claim per slot across replicas; an expired claim is taken over; posted is final', async () => {
    const sa = new PgWatchState(a, { replica: 'a', leaseMs: 400 });
    const sb = new PgWatchState(b, { replica: 'b', leaseMs: 400 });
    await sa.seed('daily', 1000);
    await sb.seed('daily', 1000);
    // The seeded slot (first start) is never posted.
    expect(await Promise.all([sa.claim('daily', 1000), sb.claim('daily', 1000)])).toEqual([false, false]);
    const claims = await Promise.all([sa.claim('daily', 2000), sb.claim('daily', 2000)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    const [holder, other] = claims[0] ? [sa, sb] : [sb, sa];
    expect(await holder.renew('daily', 2000)).toBe(true);
    expect(await other.renew('daily', 2000)).toBe(false);
    // The holder stops renewing (dies): after the claim's life the other takes the slot over.
    await new Promise((r) => setTimeout(r, 500));
    expect(await other.abandoned('daily')).toEqual([2000]);
    expect(await other.claim('daily', 2000)).toBe(true);
    expect(await holder.renew('daily', 2000)).toBe(false);
    await other.done('daily', 2000, 'posted');
    await new Promise((r) => setTimeout(r, 500));
    expect(await holder.claim('daily', 2000)).toBe(false);
    expect(await holder.abandoned('daily')).toEqual([]);
    const row = (await a.query("SELECT state, attempts, holder FROM digest_runs WHERE schedule = 'daily' AND slot = 2000")).rows[0];
    expect(row).toEqual({ state: 'posted', attempts: 2, holder: other.replica });
    // What a digest reported, shared.
    await sa.saveReported('daily', new Map([['leak|h|0|1|u', { slopeMiBPerHour: 50, hoursToFull: 3.5, reportedAt: 99 }]]));
    expect(await sb.reported('daily')).toEqual(new Map([['leak|h|0|1|u', { slopeMiBPerHour: 50, hoursToFull: 3.5, reportedAt: 99 }]]));
  });

  it('sampling leases: one holder per host, renewed while alive, taken over once expired, given back at a clean stop', async () => {
    const sa = new PgWatchState(a, { replica: 'a', leaseMs: 400 });
    const sb = new PgWatchState(b, { replica: 'b', leaseMs: 400 });
    expect([...(await sa.leaseHosts(['h1', 'h2']))].sort()).toEqual(['h1', 'h2']);
    expect([...(await sb.leaseHosts(['h1', 'h2', 'h3']))]).toEqual(['h3']);
    await new Promise((r) => setTimeout(r, 250));
    expect([...(await sa.leaseHosts(['h1', 'h2']))].sort()).toEqual(['h1', 'h2']); // renewed
    await new Promise((r) => setTimeout(r, 250));
    expect([...(await sb.leaseHosts(['h1', 'h2', 'h3']))]).toEqual(['h3']); // still a's
    await new Promise((r) => setTimeout(r, 450));
    expect([...(await sb.leaseHosts(['h1', 'h2', 'h3']))].sort()).toEqual(['h1', 'h2', 'h3']); // a stopped renewing
    await sb.releaseLeases();
    expect([...(await sa.leaseHosts(['h1', 'h3']))].sort()).toEqual(['h1', 'h3']);
    await sa.releaseLeases();
  });

  it('subscriptions: made on one replica, listed and closed once from the other', async () => {
    const sa = new PgSubscriptionStore(a);
    const sb = new PgSubscriptionStore(b);
    const row = await sa.addSubscription({ platform: 'slack', userId: 'U1', sizeMiB: 40960, size: '40G', count: 1, shared: false, createdMs: 1, expiresMs: 2 });
    expect(await sb.openSubscriptions({ platform: 'slack', userId: 'U1' })).toEqual([row]);
    expect(await sb.closeSubscription(row.id, 'cancelled', 5, null, { platform: 'slack', userId: 'U2' })).toBe(false);
    const both = await Promise.all([sa.closeSubscription(row.id, 'notified', 5, 'gpu1'), sb.closeSubscription(row.id, 'notified', 5, 'gpu1')]);
    expect(both.filter(Boolean)).toHaveLength(1);
    await sb.noteSubscription(row.id, 'message not sent: x');
    expect(await sa.subscription(row.id)).toMatchObject({ state: 'notified', closedMs: 5, note: 'message not sent: x' });
    expect(await sa.openSubscriptions()).toEqual([]);
  });

  it('audit: rows from both replicas, newest first, with the replica that ran the command', async () => {
    const errors: unknown[] = [];
    const ua = new PgAuditStore(a, 'a', (e) => errors.push(e));
    const ub = new PgAuditStore(b, 'b', (e) => errors.push(e));
    ua.record({ ts: 1, platform: 'slack', user: 'U1', channel: 'C1', command: '/gpu status', outcome: 'ok', ms: 12 });
    ub.record({ ts: 2, platform: 'discord', user: '123456', channel: null, command: '/gpu hosts list', outcome: 'ok', ms: 3 });
    await Promise.all([ua.flush(), ub.flush()]);
    expect(errors).toEqual([]);
    expect((await ua.recent(2)).map((r) => [r.ts, r.user, r.replica])).toEqual([
      [2, '123456', 'b'],
      [1, 'U1', 'a'],
    ]);
  });

  it('config: storage defaults to sqlite; a URL from the config or the environment; errors never carry the password', () => {
    expect(storageOf(parseConfig({}).storage)).toEqual({ kind: 'sqlite' });
    expect(storageOf(parseConfig({ storage: 'postgres://gd@db/x' }).storage)).toMatchObject({ kind: 'postgres', url: 'postgres://gd@db/x', leaseMs: 30_000 });
    expect(storageOf(parseConfig({ storage: 'postgres' }).storage, { GPU_DOCTOR_DATABASE_URL: 'postgresql://u@h/d' })).toMatchObject({
      url: 'postgresql://u@h/d',
    });
    expect(storageOf(parseConfig({ storage: { url_env: 'DB', lease_s: 5 } }).storage, { DB: 'postgres://u@h/d' })).toMatchObject({ leaseMs: 5000 });
    expect(() => storageOf(parseConfig({ storage: 'postgres' }).storage, {})).toThrow(/GPU_DOCTOR_DATABASE_URL is not set/);
    expect(() => parseConfig({ storage: 'mysql://x' })).toThrow(/storage/);
    expect(redactUrl('connect postgres://gd:hunter2@db:5432/x failed; postgresql://u:p%40ss@h/d?password=zz')).toBe(
      'connect postgres://gd:***@db:5432/x failed; postgresql://u:***@h/d?password=***',
    );
    expect(pgErrorLine(new Error('password authentication failed for postgres://gd:hunter2@db/x\nmore'))).not.toContain('hunter2');
  });

  it('a database that cannot be reached fails start-up in one line without the password', async () => {
    const bad = `postgres://gd:hunter2@127.0.0.1:${server.port}/no_such_db`;
    const e = (await openSharedStorage({ url: bad, leaseMs: 1000, poolMax: 1 }).then(
      () => null,
      (err: unknown) => err,
    )) as Error | null;
    expect(e?.message).toMatch(/^storage: Postgres: .*no_such_db.* does not exist/);
    expect(e?.message).not.toContain('hunter2');
  });
});
