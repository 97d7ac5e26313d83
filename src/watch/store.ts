// Leak-watch sample store: SQLite (WAL) under data_dir. One compact table for all samples, clustered by
// time so appends are sequential and a digest is one range scan:
//   samples(ts s, host_id, gpu, pid, start, mib, util)
//   - process row: pid > 0, start = process start (epoch s), mib = process MiB (null: [N/A])
//   - GPU row:     pid = 0, start = GPU total MiB, mib = GPU used MiB, util = utilisation %
//   - host RAM:    gpu = -1, pid = -1, start = total MiB, mib = used MiB (total - available)
// Process user/command live once per process in `procs`. Rows older than the retention window are
// downsampled to the per-hour max (never simply dropped), so a week-long creep stays visible.
// digest_runs / digest_reported hold each digest's last run and what it already reported.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ReportedState } from './digest.js';
import type { Sample } from './types.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS hosts (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS samples (
  ts INTEGER NOT NULL, host_id INTEGER NOT NULL, gpu INTEGER NOT NULL, pid INTEGER NOT NULL,
  start INTEGER NOT NULL, mib INTEGER, util INTEGER,
  PRIMARY KEY (ts, host_id, gpu, pid, start)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS procs (
  host_id INTEGER NOT NULL, pid INTEGER NOT NULL, start INTEGER NOT NULL, user TEXT NOT NULL, command TEXT NOT NULL,
  PRIMARY KEY (host_id, pid, start)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS watch_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS digest_runs (name TEXT PRIMARY KEY, last_run_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS digest_reported (
  name TEXT NOT NULL, key TEXT NOT NULL, slope REAL NOT NULL, hours_to_full REAL, reported_at_ms INTEGER NOT NULL,
  PRIMARY KEY (name, key)
) WITHOUT ROWID;
`;

const sec = (ts: string | number): number => Math.floor((typeof ts === 'number' ? ts : Date.parse(ts)) / 1000);
const MiB = 1024 * 1024;

export class WatchStore {
  readonly db: Database.Database;
  private hostIds = new Map<string, number>();
  private hostNames = new Map<number, string>();
  private knownProcs = new Set<string>();
  private insSample: Database.Statement;
  private insProc: Database.Statement;
  private insHost: Database.Statement;
  private insertMany: (samples: Sample[]) => void;

  static inDataDir(dataDir: string): WatchStore {
    mkdirSync(dataDir, { recursive: true });
    return new WatchStore(join(dataDir, 'watch.sqlite'));
  }

  constructor(readonly file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    for (const r of this.db.prepare('SELECT id, name FROM hosts').all() as { id: number; name: string }[]) {
      this.hostIds.set(r.name, r.id);
      this.hostNames.set(r.id, r.name);
    }
    this.insSample = this.db.prepare('INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.insProc = this.db.prepare('INSERT OR IGNORE INTO procs VALUES (?, ?, ?, ?, ?)');
    this.insHost = this.db.prepare('INSERT INTO hosts (name) VALUES (?)');
    this.insertMany = this.db.transaction((samples: Sample[]) => {
      for (const s of samples) this.insertOne(s);
    });
  }

  hostId(name: string): number {
    let id = this.hostIds.get(name);
    if (id === undefined) {
      id = Number(this.insHost.run(name).lastInsertRowid);
      this.hostIds.set(name, id);
      this.hostNames.set(id, name);
    }
    return id;
  }

  private insertOne(s: Sample): void {
    const h = this.hostId(s.host);
    const ts = sec(s.ts);
    if (s.kind === 'host') {
      const total = Math.round(s.memTotalBytes / MiB);
      this.insSample.run(ts, h, -1, -1, total, Math.round((s.memTotalBytes - s.memAvailableBytes) / MiB), null);
      return;
    }
    if (s.pid === undefined) {
      this.insSample.run(ts, h, s.gpu, 0, Math.round(s.gpuTotalMiB), Math.round(s.gpuUsedMiB), s.utilizationPct);
      return;
    }
    const start = sec(s.processStart);
    const pk = `${h}|${s.pid}|${start}`;
    if (!this.knownProcs.has(pk)) {
      this.insProc.run(h, s.pid, start, s.user, s.command);
      this.knownProcs.add(pk);
      if (this.knownProcs.size > 200_000) this.knownProcs.clear();
    }
    // The GPU row once per poll (process samples carry their GPU's figures), then the process row.
    this.insSample.run(ts, h, s.gpu, 0, Math.round(s.gpuTotalMiB), Math.round(s.gpuUsedMiB), s.utilizationPct);
    this.insSample.run(ts, h, s.gpu, s.pid, start, s.processMiB === null ? null : Math.round(s.processMiB), null);
  }

  /** Writes one poll's samples in one transaction. */
  insert(samples: Sample[]): void {
    if (samples.length) this.insertMany(samples);
  }

  /**
   * Samples since `sinceMs` (epoch ms), in time order, as the detector takes them (ts in epoch ms).
   * A GPU row followed by process rows of the same GPU is folded into them; alone it is a GPU sample.
   */
  *samplesSince(sinceMs = 0, host?: string): Generator<Sample> {
    const procs = new Map<string, { user: string; command: string }>();
    for (const r of this.db.prepare('SELECT host_id, pid, start, user, command FROM procs').iterate() as Iterable<{
      host_id: number; pid: number; start: number; user: string; command: string;
    }>)
      procs.set(`${r.host_id}|${r.pid}|${r.start}`, { user: r.user, command: r.command });
    const hostId = host === undefined ? undefined : this.hostIds.get(host);
    if (host !== undefined && hostId === undefined) return;
    const stmt = this.db
      .prepare(
        `SELECT ts, host_id, gpu, pid, start, mib, util FROM samples WHERE ts >= ?${hostId === undefined ? '' : ' AND host_id = ?'} ORDER BY ts, host_id, gpu, pid, start`,
      )
      .raw(true);
    const args = hostId === undefined ? [Math.floor(sinceMs / 1000)] : [Math.floor(sinceMs / 1000), hostId];
    let pending: [number, number, number, number, number, number | null, number | null] | null = null;
    let pendingUsed = false;
    const flushGpu = function* (this: WatchStore): Generator<Sample> {
      if (pending && !pendingUsed) {
        const [ts, h, gpu, , total, used, util] = pending;
        yield { ts: ts * 1000, host: this.hostNames.get(h)!, gpu, gpuTotalMiB: total, gpuUsedMiB: used ?? 0, utilizationPct: util };
      }
    };
    for (const row of stmt.iterate(...args) as Iterable<[number, number, number, number, number, number | null, number | null]>) {
      const [ts, h, gpu, pid, start, mib] = row;
      if (pid === 0) {
        yield* flushGpu.call(this);
        pending = row;
        pendingUsed = false;
        continue;
      }
      if (pid === -1) {
        yield { ts: ts * 1000, host: this.hostNames.get(h)!, kind: 'host', memTotalBytes: start * MiB, memAvailableBytes: (start - (mib ?? 0)) * MiB };
        continue;
      }
      const g = pending && pending[0] === ts && pending[1] === h && pending[2] === gpu ? pending : null;
      if (g) pendingUsed = true;
      const meta = procs.get(`${h}|${pid}|${start}`);
      yield {
        ts: ts * 1000,
        host: this.hostNames.get(h)!,
        gpu,
        gpuTotalMiB: g ? g[4] : 0,
        gpuUsedMiB: g ? (g[5] ?? 0) : 0,
        utilizationPct: g ? g[6] : null,
        pid,
        processStart: start * 1000,
        user: meta?.user ?? '?',
        command: meta?.command ?? '',
        processMiB: mib,
      };
    }
    yield* flushGpu.call(this);
  }

  /** Hosts and processes seen since `sinceMs`. */
  watched(sinceMs: number): { hosts: number; processes: number } {
    const s = Math.floor(sinceMs / 1000);
    const r = this.db
      .prepare('SELECT count(DISTINCT host_id) AS hosts, count(DISTINCT CASE WHEN pid > 0 THEN host_id || \'|\' || pid || \'|\' || start END) AS processes FROM samples WHERE ts >= ?')
      .get(s) as { hosts: number; processes: number };
    return r;
  }

  latestTsMs(): number | null {
    const r = this.db.prepare('SELECT max(ts) AS ts FROM samples').get() as { ts: number | null };
    return r.ts === null ? null : r.ts * 1000;
  }

  /**
   * Retention: rows older than `retentionDays` are replaced by their per-hour max (one row per hour per
   * series); rows already downsampled are not touched again. Returns rows before/after.
   */
  applyRetention(retentionDays: number, nowMs = Date.now()): { before: number; after: number } {
    const cutoff = Math.floor((nowMs / 1000 - retentionDays * 86400) / 3600) * 3600;
    const done = (this.db.prepare("SELECT value FROM watch_meta WHERE key = 'downsampled_until'").get() as { value: number } | undefined)?.value ?? 0;
    if (cutoff <= done) return { before: 0, after: 0 };
    let before = 0;
    let after = 0;
    this.db.transaction(() => {
      before = (this.db.prepare('SELECT count(*) AS n FROM samples WHERE ts >= ? AND ts < ?').get(done, cutoff) as { n: number }).n;
      this.db.exec('CREATE TEMP TABLE IF NOT EXISTS ds (ts, host_id, gpu, pid, start, mib, util); DELETE FROM ds;');
      this.db
        .prepare(
          `INSERT INTO ds SELECT (ts / 3600) * 3600, host_id, gpu, pid, start, max(mib), max(util)
           FROM samples WHERE ts >= ? AND ts < ? GROUP BY ts / 3600, host_id, gpu, pid, start`,
        )
        .run(done, cutoff);
      this.db.prepare('DELETE FROM samples WHERE ts >= ? AND ts < ?').run(done, cutoff);
      this.db.exec('INSERT OR REPLACE INTO samples SELECT * FROM ds; DELETE FROM ds;');
      after = (this.db.prepare('SELECT count(*) AS n FROM samples WHERE ts >= ? AND ts < ?').get(done, cutoff) as { n: number }).n;
      this.db.prepare("INSERT OR REPLACE INTO watch_meta VALUES ('downsampled_until', ?)").run(cutoff);
    })();
    return { before, after };
  }

  // ---- digest state ----

  lastRun(digest: string): number | null {
    const r = this.db.prepare('SELECT last_run_ms FROM digest_runs WHERE name = ?').get(digest) as { last_run_ms: number } | undefined;
    return r?.last_run_ms ?? null;
  }

  setLastRun(digest: string, ms: number): void {
    this.db.prepare('INSERT OR REPLACE INTO digest_runs VALUES (?, ?)').run(digest, ms);
  }

  reported(digest: string): Map<string, ReportedState> {
    const out = new Map<string, ReportedState>();
    for (const r of this.db.prepare('SELECT key, slope, hours_to_full, reported_at_ms FROM digest_reported WHERE name = ?').all(digest) as {
      key: string; slope: number; hours_to_full: number | null; reported_at_ms: number;
    }[])
      out.set(r.key, { slopeMiBPerHour: r.slope, hoursToFull: r.hours_to_full, reportedAt: r.reported_at_ms });
    return out;
  }

  saveReported(digest: string, update: Map<string, ReportedState>): void {
    const st = this.db.prepare('INSERT OR REPLACE INTO digest_reported VALUES (?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      for (const [k, v] of update) st.run(digest, k, v.slopeMiBPerHour, v.hoursToFull, v.reportedAt);
    })();
  }

  close(): void {
    this.db.close();
  }
}
