// The leak watch's shared state in Postgres: samples (the same compact rows as the SQLite store, so the
// detector gets the same Sample objects in the same order and reports the same findings), digest slots
// claimed by one replica at a time, what each digest already reported, and the
// sampling leases that decide which replica samples which host.
//
// Every statement stands alone (no session state), so it works through PgBouncer's transaction pooling:
// a digest slot is claimed with one INSERT .. ON CONFLICT .. RETURNING, a lease with one upsert per round.
import type { SampleSource } from '../../watch/chart-render.js';
import type { ReportedState } from '../../watch/digest.js';
import { SampleRowDecoder } from '../../watch/sample-rows.js';
import { sampleProblem } from '../../watch/sample-ranges.js';
import {
  packedChartSource,
  type DigestRuns,
  type FindingsInput,
  type DigestSlots,
  type PostedEpisode,
  type SampleReader,
  type SamplingLeases,
  type ThresholdEpisodes,
  type WatchState,
} from '../../watch/state.js';
import type { Sample } from '../../watch/types.js';
import { inTransaction, type Pool } from './connect.js';

const MiB = 1024 * 1024;
/** As the SQLite store: two polls' estimates of one process's start within this many seconds are one process. */
const START_SLACK_S = 30;
/** Rows per INSERT and per read batch. */
const WRITE_BATCH = 5000;
const READ_BATCH = 20_000;

const sec = (ts: string | number): number => Math.floor((typeof ts === 'number' ? ts : Date.parse(ts)) / 1000);

/** ts, host_id, gpu, pid, start, mib, util: one stored row. */
type Row = [number, number, number, number, number, number | null, number | null];

export interface PgWatchOptions {
  /** This replica's id: the holder of its leases and claims. */
  replica: string;
  /** Lease and claim lifetime without renewal (ms). */
  leaseMs: number;
  /** Tries per digest slot (a holder that dies uses one). */
  maxAttempts?: number;
}

/**
 * The leak watch's state in Postgres (the WatchState port of src/watch/state.ts): replicas claim digest
 * slots and lease hosts to sample; the detector (src/watch/findings.ts) reads the sample batches read here.
 */
export class PgWatchState implements WatchState, DigestSlots, SamplingLeases, SampleReader {
  /** Replicas: each slot is claimed by one and posted by it; a slot whose holder died is taken over when its claim expires. */
  readonly digestRuns: DigestRuns = { slots: this };
  /** Replicas: each samples only the hosts whose lease it holds. */
  readonly leases: SamplingLeases = this;
  /** Replicas: a threshold episode posted by one is not posted by another that takes its host over. */
  readonly thresholdEpisodes: ThresholdEpisodes = this;
  private hostIds = new Map<string, number>();
  private hostNames = new Map<number, string>();
  /** host_id|pid -> the start recorded for that process (see the SQLite store's canonicalStart). */
  private starts = new Map<string, number>();
  private knownProcs = new Set<string>();
  readonly replica: string;
  readonly claimTtlMs: number;
  private maxAttempts: number;

  constructor(
    readonly pool: Pool,
    o: PgWatchOptions,
  ) {
    this.replica = o.replica;
    this.claimTtlMs = o.leaseMs;
    this.maxAttempts = o.maxAttempts ?? 3;
  }

  // ---- samples ----

  private async hostId(name: string): Promise<number> {
    let id = this.hostIds.get(name);
    if (id !== undefined) return id;
    await this.pool.query('INSERT INTO watch_hosts (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [name]);
    id = (await this.pool.query<{ id: number }>('SELECT id FROM watch_hosts WHERE name = $1', [name])).rows[0].id;
    this.hostIds.set(name, id);
    this.hostNames.set(id, name);
    return id;
  }

  private async loadHosts(): Promise<void> {
    for (const r of (await this.pool.query<{ id: number; name: string }>('SELECT id, name FROM watch_hosts')).rows) {
      this.hostIds.set(r.name, r.id);
      this.hostNames.set(r.id, r.name);
    }
  }

  private async canonicalStart(h: number, pid: number, start: number): Promise<number> {
    const key = `${h}|${pid}`;
    let known = this.starts.get(key);
    if (known === undefined || Math.abs(known - start) > START_SLACK_S)
      known =
        (
          await this.pool.query<{ start: number }>(
            'SELECT start FROM watch_procs WHERE host_id = $1 AND pid = $2 AND start BETWEEN $3 AND $4 ORDER BY abs(start - $5) LIMIT 1',
            [h, pid, start - START_SLACK_S, start + START_SLACK_S, start],
          )
        ).rows[0]?.start ?? known;
    if (known !== undefined && Math.abs(known - start) <= START_SLACK_S) {
      this.starts.set(key, known);
      return known;
    }
    if (this.starts.size > 200_000) this.starts.clear();
    this.starts.set(key, start);
    return start;
  }

  /** Writes samples as the SQLite store does (same rows: GPU row once per poll, canonical process starts). */
  async insert(samples: Sample[]): Promise<void> {
    const rows = new Map<string, Row>();
    const procs: [number, number, number, string, string][] = [];
    const put = (r: Row) => rows.set(`${r[0]}|${r[1]}|${r[2]}|${r[3]}|${r[4]}`, r);
    for (const s of samples) {
      // A value no column can hold would fail the whole INSERT, every host's round with it (the sampler leaves these out already).
      if (sampleProblem(s) !== null) continue;
      const h = await this.hostId(s.host);
      const ts = sec(s.ts);
      if (s.kind === 'host') {
        const total = Math.round(s.memTotalBytes / MiB);
        put([ts, h, -1, -1, total, Math.round((s.memTotalBytes - s.memAvailableBytes) / MiB), null]);
        continue;
      }
      put([ts, h, s.gpu, 0, Math.round(s.gpuTotalMiB), Math.round(s.gpuUsedMiB), s.utilizationPct]);
      if (s.pid === undefined) continue;
      const start = await this.canonicalStart(h, s.pid, sec(s.processStart));
      const pk = `${h}|${s.pid}|${start}`;
      if (!this.knownProcs.has(pk)) {
        procs.push([h, s.pid, start, s.user, s.command]);
        this.knownProcs.add(pk);
        if (this.knownProcs.size > 200_000) this.knownProcs.clear();
      }
      put([ts, h, s.gpu, s.pid, start, s.processMiB === null ? null : Math.round(s.processMiB), null]);
    }
    if (procs.length)
      await this.pool.query(
        `INSERT INTO watch_procs (host_id, pid, start, username, command)
         SELECT * FROM unnest($1::integer[], $2::integer[], $3::bigint[], $4::text[], $5::text[]) ON CONFLICT DO NOTHING`,
        [procs.map((p) => p[0]), procs.map((p) => p[1]), procs.map((p) => p[2]), procs.map((p) => p[3]), procs.map((p) => p[4])],
      );
    await this.writeRows([...rows.values()]);
  }

  /** Stored rows as they are (the benchmark loads with this; insert() is the sampler's path). */
  async writeRows(all: Row[]): Promise<void> {
    for (let i = 0; i < all.length; i += WRITE_BATCH) {
      const b = all.slice(i, i + WRITE_BATCH);
      const col = (k: number) => b.map((r) => r[k]);
      await this.pool.query(
        `INSERT INTO watch_samples (ts, host_id, gpu, pid, start, mib, util)
         SELECT * FROM unnest($1::bigint[], $2::integer[], $3::integer[], $4::integer[], $5::bigint[], $6::integer[], $7::double precision[])
         ON CONFLICT (ts, host_id, gpu, pid, start) DO UPDATE SET mib = excluded.mib, util = excluded.util`,
        [col(0), col(1), col(2), col(3), col(4), col(5), col(6)],
      );
    }
  }

  /**
   * Rows with ts >= sinceS (of one host, or all) in key order, READ_BATCH at a time (keyset pagination on
   * the primary key: no cursor, no session state), folded into Samples exactly as the SQLite store's
   * samplesSince folds its rows. `each` gets them in order.
   */
  async eachSample(sinceMs: number, each: (s: Sample) => void, host?: string): Promise<void> {
    await this.loadHosts();
    const hostId = host === undefined ? undefined : this.hostIds.get(host);
    if (host !== undefined && hostId === undefined) return;
    const procs = new Map<string, { user: string; command: string }>();
    const pq = await this.pool.query<{ host_id: number; pid: number; start: number; username: string; command: string }>(
      `SELECT host_id, pid, start, username, command FROM watch_procs${hostId === undefined ? '' : ' WHERE host_id = $1'}`,
      hostId === undefined ? [] : [hostId],
    );
    for (const r of pq.rows) procs.set(`${r.host_id}|${r.pid}|${r.start}`, { user: r.username, command: r.command });
    const names = this.hostNames;
    const decoder = new SampleRowDecoder(
      (h) => names.get(h)!,
      (h, pid, start) => procs.get(`${h}|${pid}|${start}`),
    );
    let after: Row | null = null;
    const since = Math.floor(sinceMs / 1000);
    for (;;) {
      const params: unknown[] = [since];
      let where = 'ts >= $1';
      if (hostId !== undefined) {
        params.push(hostId);
        where += ` AND host_id = $${params.length}`;
      }
      if (after) {
        params.push(after[0], after[1], after[2], after[3], after[4]);
        const n = params.length;
        where += ` AND (ts, host_id, gpu, pid, start) > ($${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
      }
      const r = await this.pool.query<Row>({
        text: `SELECT ts, host_id, gpu, pid, start, mib, util FROM watch_samples WHERE ${where} ORDER BY ts, host_id, gpu, pid, start LIMIT ${READ_BATCH}`,
        values: params,
        rowMode: 'array',
      });
      for (const row of r.rows) for (const sample of decoder.push(row)) each(sample);
      if (r.rows.length < READ_BATCH) break;
      after = r.rows[r.rows.length - 1];
    }
    for (const sample of decoder.end()) each(sample);
  }

  /** One host's samples since `sinceMs` (`/gpu watch`, charts: hours of one host). */
  async samplesSince(sinceMs: number, host: string): Promise<Sample[]> {
    const out: Sample[] = [];
    await this.eachSample(sinceMs, (s) => out.push(s), host);
    return out;
  }

  /**
   * The samples of a few hosts since `sinceMs`, read now, for charts drawn afterwards (a digest's chart is
   * drawn synchronously): the same samplesSince(from, host) the SQLite store has, over what was read.
   */
  async samplesOf(hosts: string[], sinceMs: number): Promise<{ samplesSince(fromMs: number, host: string): Iterable<Sample> }> {
    const byHost = new Map<string, Sample[]>();
    for (const h of new Set(hosts)) byHost.set(h, await this.samplesSince(sinceMs, h));
    return {
      samplesSince: (fromMs, host) =>
        (byHost.get(host) ?? []).filter((s) => (typeof s.ts === 'number' ? s.ts : Date.parse(s.ts)) >= Math.floor(fromMs / 1000) * 1000),
    };
  }

  /** The detector (src/watch/findings.ts) reads Postgres in batches on the bot's thread, each a yield to the event loop. */
  findingsInput(): FindingsInput {
    return { batches: this };
  }

  /** A chart child cannot reach the pool: the samples are read here and sent to it. */
  chartSource(hosts: string[], sinceMs: number): Promise<SampleSource> {
    return packedChartSource(this, hosts, sinceMs);
  }

  /** The sampler's write: one INSERT .. unnest per poll (the pool's round trips are the yields). */
  insertPaced(samples: Sample[]): Promise<void> {
    return this.insert(samples);
  }

  /** The pool belongs to the shared storage (src/storage/postgres/index.ts), closed there. */
  close(): void {}

  // ---- threshold alerts' posted episodes ----

  async postedEpisodes(): Promise<PostedEpisode[]> {
    const r = await this.pool.query<{ host: string; gpu: number; rule: string; since_ms: string; posted_ms: string }>(
      'SELECT host, gpu, rule, since_ms, posted_ms FROM threshold_episodes',
    );
    return r.rows.map((x) => ({ host: x.host, gpu: Number(x.gpu), rule: x.rule, sinceMs: Number(x.since_ms), postedMs: Number(x.posted_ms) }));
  }

  /** One INSERT .. ON CONFLICT DO NOTHING: of two replicas marking one episode at once, one posts it. */
  async markPosted(e: PostedEpisode): Promise<boolean> {
    const r = await this.pool.query(
      'INSERT INTO threshold_episodes (host, gpu, rule, since_ms, posted_ms) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (host, gpu, rule) DO NOTHING',
      [e.host, e.gpu, e.rule, e.sinceMs, e.postedMs],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async clearEpisodes(ended: Pick<PostedEpisode, 'host' | 'gpu' | 'rule'>[]): Promise<void> {
    if (!ended.length) return;
    await this.pool.query(
      'DELETE FROM threshold_episodes t USING unnest($1::text[], $2::int[], $3::text[]) AS e(host, gpu, rule) WHERE t.host = e.host AND t.gpu = e.gpu AND t.rule = e.rule',
      [ended.map((e) => e.host), ended.map((e) => e.gpu), ended.map((e) => e.rule)],
    );
  }

  /** The newest sample's time (ms), or null with none: where a Prometheus history backfill starts. */
  async latestTsMs(): Promise<number | null> {
    const r = await this.pool.query<{ ts: string | null }>('SELECT max(ts) AS ts FROM watch_samples');
    return r.rows[0].ts === null ? null : Number(r.rows[0].ts) * 1000;
  }

  async watched(sinceMs: number): Promise<{ hosts: number; processes: number }> {
    const r = await this.pool.query<{ hosts: number; processes: number }>(
      `SELECT count(DISTINCT host_id) AS hosts, count(DISTINCT CASE WHEN pid > 0 THEN host_id || '|' || pid || '|' || start END) AS processes
       FROM watch_samples WHERE ts >= $1`,
      [Math.floor(sinceMs / 1000)],
    );
    return { hosts: Number(r.rows[0].hosts), processes: Number(r.rows[0].processes) };
  }

  /**
   * Retention as the SQLite store keeps it: rows older than `retentionDays` become their per-hour max.
   * One replica at a time (a transaction-scoped advisory lock; the other skips this round).
   */
  async applyRetention(retentionDays: number, nowMs = Date.now()): Promise<{ before: number; after: number }> {
    const cutoff = Math.floor((nowMs / 1000 - retentionDays * 86400) / 3600) * 3600;
    return inTransaction(this.pool, async (c) => {
      const locked = (await c.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock(hashtext('gpu-doctor retention')) AS ok")).rows[0].ok;
      if (!locked) return { before: 0, after: 0 };
      const done = (await c.query<{ value: number }>("SELECT value FROM watch_meta WHERE key = 'downsampled_until'")).rows[0]?.value ?? 0;
      if (cutoff <= done) return { before: 0, after: 0 };
      const moved = await c.query(
        `WITH moved AS (DELETE FROM watch_samples WHERE ts >= $1 AND ts < $2 RETURNING *)
         INSERT INTO watch_samples SELECT (ts / 3600) * 3600, host_id, gpu, pid, start, max(mib), max(util) FROM moved GROUP BY 1, 2, 3, 4, 5`,
        [done, cutoff],
      );
      await c.query("INSERT INTO watch_meta VALUES ('downsampled_until', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [cutoff]);
      return { before: -1, after: moved.rowCount ?? 0 };
    });
  }

  // ---- digest slots ----

  async seed(schedule: string, slotMs: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO digest_runs (schedule, slot, state, done_at, note) SELECT $1, $2, 'skipped', now(), 'first start: nothing missed'
       WHERE NOT EXISTS (SELECT 1 FROM digest_runs WHERE schedule = $1) ON CONFLICT DO NOTHING`,
      [schedule, slotMs],
    );
  }

  async claim(schedule: string, slotMs: number): Promise<boolean> {
    const r = await this.pool.query(
      `INSERT INTO digest_runs (schedule, slot, state, holder, attempts, claimed_at, expires_at)
       VALUES ($1, $2, 'claimed', $3, 1, now(), now() + $4 * interval '1 millisecond')
       ON CONFLICT (schedule, slot) DO UPDATE SET holder = excluded.holder, attempts = digest_runs.attempts + 1,
         claimed_at = excluded.claimed_at, expires_at = excluded.expires_at
       WHERE digest_runs.state = 'claimed' AND digest_runs.expires_at < now() AND digest_runs.attempts < $5
       RETURNING slot`,
      [schedule, slotMs, this.replica, this.claimTtlMs, this.maxAttempts],
    );
    return r.rowCount === 1;
  }

  async renew(schedule: string, slotMs: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE digest_runs SET expires_at = now() + $4 * interval '1 millisecond'
       WHERE schedule = $1 AND slot = $2 AND holder = $3 AND state = 'claimed'`,
      [schedule, slotMs, this.replica, this.claimTtlMs],
    );
    return r.rowCount === 1;
  }

  async done(schedule: string, slotMs: number, state: 'posted' | 'failed', note?: string): Promise<void> {
    await this.pool.query(
      `UPDATE digest_runs SET state = $4, done_at = now(), note = $5 WHERE schedule = $1 AND slot = $2 AND holder = $3 AND state = 'claimed'`,
      [schedule, slotMs, this.replica, state, note?.slice(0, 500) ?? null],
    );
  }

  async abandoned(schedule: string): Promise<number[]> {
    const r = await this.pool.query<{ slot: number }>(
      `SELECT slot FROM digest_runs WHERE schedule = $1 AND state = 'claimed' AND expires_at < now() AND attempts < $2 ORDER BY slot LIMIT 10`,
      [schedule, this.maxAttempts],
    );
    return r.rows.map((x) => x.slot);
  }

  async reported(schedule: string): Promise<Map<string, ReportedState>> {
    const r = await this.pool.query<{ key: string; slope: number; hours_to_full: number | null; reported_at_ms: number }>(
      'SELECT key, slope, hours_to_full, reported_at_ms FROM digest_reported WHERE schedule = $1',
      [schedule],
    );
    return new Map(r.rows.map((x) => [x.key, { slopeMiBPerHour: x.slope, hoursToFull: x.hours_to_full, reportedAt: x.reported_at_ms }]));
  }

  async saveReported(schedule: string, update: Map<string, ReportedState>): Promise<void> {
    if (!update.size) return;
    const u = [...update];
    await this.pool.query(
      `INSERT INTO digest_reported (schedule, key, slope, hours_to_full, reported_at_ms)
       SELECT $1, * FROM unnest($2::text[], $3::double precision[], $4::double precision[], $5::bigint[])
       ON CONFLICT (schedule, key) DO UPDATE SET slope = excluded.slope, hours_to_full = excluded.hours_to_full, reported_at_ms = excluded.reported_at_ms`,
      [schedule, u.map((x) => x[0]), u.map((x) => x[1].slopeMiBPerHour), u.map((x) => x[1].hoursToFull), u.map((x) => x[1].reportedAt)],
    );
  }

  // ---- sampling leases ----

  /** Takes or renews the lease of each host that is free, expired or already this replica's; returns those held. */
  async leaseHosts(hosts: string[]): Promise<Set<string>> {
    if (!hosts.length) return new Set();
    const r = await this.pool.query<{ host: string }>(
      `INSERT INTO sample_leases (host, holder, expires_at)
       SELECT h, $2, now() + $3 * interval '1 millisecond' FROM unnest($1::text[]) AS h
       ON CONFLICT (host) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE sample_leases.holder = excluded.holder OR sample_leases.expires_at < now()
       RETURNING host`,
      [hosts, this.replica, this.claimTtlMs],
    );
    return new Set(r.rows.map((x) => x.host));
  }

  /** Gives this replica's leases back (a clean stop): another replica takes the hosts over at once. */
  async releaseLeases(): Promise<void> {
    await this.pool.query('DELETE FROM sample_leases WHERE holder = $1', [this.replica]);
  }
}
