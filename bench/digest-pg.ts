// npm run bench:digest:pg: the leak digest read from Postgres (config `storage:` Postgres), against a
// plain SELECT of the same rows. The same fleet as bench/digest.ts (H hosts x 8 GPUs x 2 processes, one
// sample a minute for 24 h, 1 process in 50 leaking), written through the real store (PgWatchState.insert,
// one call per poll, as the sampler writes) into a real PostgreSQL started for the run (test/storage/
// pg-harness.ts: initdb in a temp folder, removed after). The scale is 1000 hosts (~23M process
// samples); BENCH_HOSTS scales it (default 100). BENCH_PG_URL measures an existing database instead
// (its tables must be empty or hold this bench's rows: BENCH_PG_REUSE=1 skips the writes).
import pg from 'pg';
import { openPool } from '../src/storage/postgres/connect.js';
import { migrate } from '../src/storage/postgres/migrations.js';
import { PgWatchState } from '../src/storage/postgres/watch.js';
import { findingsOf } from '../src/watch/findings.js';
import { syntheticFleet } from './synthetic-fleet.js';
import { startPostgres } from '../test/storage/pg-harness.js';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 100);
const GPUS = 8;
const PROCS = 2;
const MINUTES = Number(process.env.BENCH_MINUTES ?? 1440);
const FULL = 1000 * GPUS * PROCS * 1440;
const reuse = process.env.BENCH_PG_REUSE === '1';

const server = process.env.BENCH_PG_URL ? null : await startPostgres({ settings: { shared_buffers: '512MB', work_mem: '64MB', max_wal_size: '4GB' } });
const url = process.env.BENCH_PG_URL ?? (await server!.createDatabase('bench'));
const pool = openPool({ url, max: 4, applicationName: 'bench' });
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });
try {
  await migrate(pool);
  const store = new PgWatchState(pool, { replica: 'bench', leaseMs: 30_000 });
  const t0 = Date.parse('2026-11-20T00:00:00Z');
  console.log(
    `bench:digest:pg  ${HOSTS} hosts x ${GPUS} GPUs x ${PROCS} procs x ${MINUTES} min = ${(HOSTS * GPUS * PROCS * MINUTES).toLocaleString()} process samples` +
      (HOSTS * GPUS * PROCS * MINUTES < FULL ? ` (scaled down from the issue's ${FULL.toLocaleString()}; BENCH_HOSTS=1000 for full)` : ''),
  );
  const fleet = syntheticFleet({ hosts: HOSTS, gpus: GPUS, procs: PROCS, t0 });
  const tIns = performance.now();
  for (let m = 0; m < (reuse ? 0 : MINUTES); m++) {
    const poll = fleet.poll(m);
    await store.insert(poll);
    if (m % 240 === 239) process.stderr.write(`  written ${m + 1} of ${MINUTES} polls\n`);
  }
  const insS = (performance.now() - tIns) / 1000;
  await pool.query('VACUUM ANALYZE watch_samples');
  const rows = (await pool.query<{ n: number }>('SELECT count(*) AS n FROM watch_samples')).rows[0].n;
  const bytes = (await pool.query<{ b: number }>("SELECT pg_total_relation_size('watch_samples') AS b")).rows[0].b;
  const now = t0 + MINUTES * 60_000;
  const since = Math.floor((now - 72 * 3_600_000) / 1000);

  // The floors: the server's own scan, and a plain SELECT of the digest's rows to this process (the rows
  // the digest reads, in the same keyset batches, with nothing done with them).
  const tServer = performance.now();
  const floor = (await pool.query('SELECT count(*), max(mib) FROM watch_samples WHERE ts >= $1', [since])).rows[0] as unknown;
  const serverScanMs = performance.now() - tServer;
  const rssBeforeScan = process.memoryUsage().rss;
  const tScan = performance.now();
  let scanned = 0;
  let after: unknown[] | null = null;
  for (;;) {
    const r: pg.QueryResult<unknown[]> = await pool.query({
      text: `SELECT ts, host_id, gpu, pid, start, mib, util FROM watch_samples WHERE ts >= $1${after ? ' AND (ts, host_id, gpu, pid, start) > ($2, $3, $4, $5, $6)' : ''} ORDER BY ts, host_id, gpu, pid, start LIMIT 20000`,
      values: after ? [since, ...after.slice(0, 5)] : [since],
      rowMode: 'array',
    });
    scanned += r.rows.length;
    if (r.rows.length < 20000) break;
    after = r.rows[r.rows.length - 1];
  }
  const scanMs = performance.now() - tScan;
  const rssAfterScan = process.memoryUsage().rss;

  const rssBefore = process.memoryUsage().rss;
  const tDig = performance.now();
  const { findings, watched } = await findingsOf(store, {}, now);
  const digestMs = performance.now() - tDig;
  const rssAfter = process.memoryUsage().rss;
  const leaks = findings.filter((f) => f.kind === 'leak').length;
  const expected = Math.floor((HOSTS * GPUS * PROCS + 42) / 50);

  const inserted = HOSTS * GPUS * PROCS * MINUTES;
  if (!reuse)
    console.log(
      `insert:        ${fmt(inserted / insS)} process samples/s (${fmt(insS)} s, one INSERT .. unnest per poll; ${fmt(rows)} rows incl. GPU and host RAM rows)`,
    );
  console.log(`on disk:       ${fmt(bytes / 2 ** 20)} MiB (table and primary key), ${fmt(bytes / rows)} bytes per row`);
  console.log(`server scan:   ${fmt(serverScanMs)} ms  (SELECT count(*), max(mib) FROM watch_samples -> ${JSON.stringify(floor)})`);
  console.log(
    `scan floor:    ${fmt(scanMs)} ms  (a plain SELECT of the ${fmt(scanned)} rows to this process, keyset batches of 20,000; RSS ${fmt(rssBeforeScan / 2 ** 20)} -> ${fmt(rssAfterScan / 2 ** 20)} MiB)`,
  );
  console.log(
    `digest:        ${fmt(digestMs)} ms  (${findings.length} findings, ${leaks} leaks; expected ${expected} findings; watched ${watched.hosts} hosts), ${fmt(digestMs / scanMs)}x the scan floor`,
  );
  console.log(
    `RSS:           ${fmt(rssBefore / 2 ** 20)} -> ${fmt(rssAfter / 2 ** 20)} MiB across the digest; peak ${fmt(process.resourceUsage().maxRSS / 1024)} MiB for the whole run (the bot process; the server's own memory not counted)`,
  );
  if (findings.length !== expected) process.exitCode = 1;
} finally {
  await pool.end();
  await server?.stop();
}
