// Leak-watch sample store: SQLite (WAL) under data_dir. One compact table for all samples, clustered by
// time so appends are sequential and a digest is one range scan:
//   samples(ts s, host_id, gpu, pid, start, mib, util)
//   - process row: pid > 0, start = process start (epoch s), mib = process MiB (null: [N/A])
//   - GPU row:     pid = 0, start = GPU total MiB, mib = GPU used MiB, util = utilisation %
//   - host RAM:    gpu = -1, pid = -1, start = total MiB, mib = used MiB (total - available)
// Process user/command live once per process in `procs`. Rows older than the retention window are
// downsampled to the per-hour max (never simply dropped), so a week-long creep stays visible.
// digest_runs / digest_reported hold each digest's last run and what it already reported.
//
// wsum holds per-10-minute-window summaries of every series, kept up to date at insert time (one UPSERT
// per row, appends at the end of the table since w leads the key), so a digest reads ~1/10 of the rows
// and never builds a JS object per sample. Each series (host_id, gpu, pid, start) has a small integer id
// in wseries; wsum rows carry only that id (short keys, and the digest reads them in key order, w then
// sid, with no GROUP BY or sort):
//   process (host_id, gpu, pid, start): n / lo / lo2 / hi / sum over known MiB (what series.ts Windows
//     keeps), umax = highest GPU utilisation among them (null utilisation counts as busy), the MiB at the
//     latest known sample (mib_ts, last_mib);
//   GPU (host_id, gpu, 0, 0): latest used (last_mib) and total (aux) MiB;
//   host RAM (host_id, -1, -1, 0): like a process over used MiB, aux = total MiB at the latest sample.
// first_ts / last_ts: first and last row of any kind in the window (series order, exited processes).
import Database from '../sqlite-driver.js';
import { ensurePrivateDir, ensurePrivateFile } from '../../core/private-files.js';
import { join } from 'node:path';
import type { SampleSource } from '../../watch/chart-render.js';
import type { ReportedState } from '../../watch/digest.js';
import { HostSeries, ProcessSeries, Windows, type SeriesIndex } from '../../watch/series.js';
import { SampleRowDecoder, type SampleRow } from '../../watch/sample-rows.js';
import type { DigestLog, DigestRuns, FindingsInput, PostedEpisode, SummaryReader, ThresholdEpisodes, WatchState } from '../../watch/state.js';
import type { DetectorOptions, Sample } from '../../watch/types.js';

/** The module a chart child opens this store's file with: chart-reader.ts from the sources, dist/sqlite-chart-reader.mjs from the bundle. */
const CHART_READER = new URL(import.meta.url.endsWith('.ts') ? './chart-reader.ts' : './sqlite-chart-reader.mjs', import.meta.url).href;
/** The module a findings worker opens this store's file with: findings-reader.ts from the sources, dist/sqlite-findings-reader.mjs from the bundle. */
const FINDINGS_READER = new URL(import.meta.url.endsWith('.ts') ? './findings-reader.ts' : './sqlite-findings-reader.mjs', import.meta.url).href;

const HOUR = 3_600_000;

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
CREATE TABLE IF NOT EXISTS wseries (
  id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, gpu INTEGER NOT NULL, pid INTEGER NOT NULL, start INTEGER NOT NULL,
  UNIQUE (host_id, gpu, pid, start)
);
CREATE TABLE IF NOT EXISTS watch_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS digest_runs (name TEXT PRIMARY KEY, last_run_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS digest_reported (
  name TEXT NOT NULL, key TEXT NOT NULL, slope REAL NOT NULL, hours_to_full REAL, reported_at_ms INTEGER NOT NULL,
  PRIMARY KEY (name, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS threshold_episodes (
  host TEXT NOT NULL, gpu INTEGER NOT NULL, rule TEXT NOT NULL, since_ms INTEGER NOT NULL, posted_ms INTEGER NOT NULL,
  PRIMARY KEY (host, gpu, rule)
) WITHOUT ROWID;
`;

const sec = (ts: string | number): number => Math.floor((typeof ts === 'number' ? ts : Date.parse(ts)) / 1000);
const MiB = 1024 * 1024;
/** How far (s) two polls' estimates of one process's start may differ: see canonicalStart. */
const START_SLACK_S = 30;
/** Summary window length (s): the detector's default windowMinutes. Other window lengths read raw samples. */
export const SUMMARY_WINDOW_S = 600;
const WSUM_VERSION = 2;
/** wsum's layout (version WSUM_VERSION): created, or re-created from the samples, when the version differs. */
const WSUM_DDL = `DROP TABLE IF EXISTS wsum;
CREATE TABLE wsum (
  w INTEGER NOT NULL, sid INTEGER NOT NULL,
  first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL, n INTEGER NOT NULL, lo INTEGER, lo2 INTEGER, hi INTEGER,
  sum INTEGER NOT NULL, umax REAL, mib_ts INTEGER, last_mib INTEGER, aux INTEGER,
  PRIMARY KEY (w, sid)
) WITHOUT ROWID;`;
/** umax for a sample with unknown utilisation: never idle. */
const BUSY_UTIL = 1e9;

/** A window summary as JS keeps it (wsum stores sid for host_id..start): w, host_id, gpu, pid, start, first_ts, last_ts, n, lo, lo2, hi, sum, umax, mib_ts, last_mib, aux. */
export type WindowRow = [
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number | null,
  number | null,
  number | null,
  number,
  number | null,
  number | null,
  number | null,
  number | null,
];

const UPSERT_WSUM = `INSERT INTO wsum VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (w, sid) DO UPDATE SET
  first_ts = CASE WHEN excluded.first_ts < first_ts THEN excluded.first_ts ELSE first_ts END,
  last_ts = CASE WHEN excluded.last_ts > last_ts THEN excluded.last_ts ELSE last_ts END,
  n = n + excluded.n,
  lo2 = CASE WHEN excluded.lo IS NULL OR lo IS NULL THEN lo2 WHEN excluded.lo < lo THEN lo
             WHEN lo2 IS NULL OR excluded.lo < lo2 THEN excluded.lo ELSE lo2 END,
  lo = CASE WHEN lo IS NULL OR excluded.lo < lo THEN coalesce(excluded.lo, lo) ELSE lo END,
  hi = CASE WHEN hi IS NULL OR excluded.hi > hi THEN coalesce(excluded.hi, hi) ELSE hi END,
  sum = sum + excluded.sum,
  umax = CASE WHEN umax IS NULL OR excluded.umax > umax THEN coalesce(excluded.umax, umax) ELSE umax END,
  last_mib = CASE WHEN excluded.mib_ts IS NOT NULL AND (mib_ts IS NULL OR excluded.mib_ts >= mib_ts) THEN excluded.last_mib ELSE last_mib END,
  aux = CASE WHEN excluded.mib_ts IS NOT NULL AND (mib_ts IS NULL OR excluded.mib_ts >= mib_ts) THEN excluded.aux ELSE aux END,
  mib_ts = CASE WHEN excluded.mib_ts IS NOT NULL AND (mib_ts IS NULL OR excluded.mib_ts >= mib_ts) THEN excluded.mib_ts ELSE mib_ts END`;

/** gd_wsum_take(sid, w, first_ts, last_ts, n, lo, lo2, hi, sum, umax, mib_ts, last_mib, aux): one wsum row. */
type WindowFn = (
  sid: number,
  w: number,
  firstTs: number,
  lastTs: number,
  n: number,
  lo: number | null,
  lo2: number | null,
  hi: number | null,
  sum: number,
  umax: number | null,
  mibTs: number | null,
  lastMib: number | null,
  aux: number | null,
) => null;

/** One sample as a wsum row (what UPSERT_WSUM merges). value: MiB (null: unknown); util: process samples only. */
function windowRow(
  ts: number,
  h: number,
  gpu: number,
  pid: number,
  start: number,
  value: number | null,
  util: number | null,
  aux: number | null,
  countValue: boolean,
): WindowRow {
  const known = value !== null && countValue;
  return [
    Math.floor(ts / SUMMARY_WINDOW_S),
    h,
    gpu,
    pid,
    start,
    ts,
    ts,
    known ? 1 : 0,
    known ? value : null,
    null,
    known ? value : null,
    known ? value : 0,
    known && pid > 0 ? (util ?? BUSY_UTIL) : null,
    value !== null ? ts : null,
    value,
    aux,
  ];
}

/** The same merge as UPSERT_WSUM, in JS (rebuilds and the digest's partial first window). */
function mergeRow(a: WindowRow, b: WindowRow): void {
  if (b[5] < a[5]) a[5] = b[5];
  if (b[6] > a[6]) a[6] = b[6];
  a[7] += b[7];
  const lo = b[8];
  if (lo !== null) {
    if (a[8] === null) a[8] = lo;
    else if (lo < a[8]) {
      a[9] = a[8];
      a[8] = lo;
    } else if (a[9] === null || lo < a[9]) a[9] = lo;
  }
  if (b[10] !== null && (a[10] === null || b[10] > a[10])) a[10] = b[10];
  a[11] += b[11];
  if (b[12] !== null && (a[12] === null || b[12] > a[12])) a[12] = b[12];
  if (b[13] !== null && (a[13] === null || b[13] >= a[13])) {
    a[13] = b[13];
    a[14] = b[14];
    a[15] = b[15];
  }
}

/**
 * The leak watch's state in one SQLite file under data_dir (the WatchState port of src/watch/state.ts):
 * one process samples every host, keeps its digests' last runs, and computes findings in a worker thread.
 */
export class WatchStore implements WatchState, DigestLog, SummaryReader {
  /** One process: each schedule's last run in digest_runs. */
  readonly digestRuns: DigestRuns = { log: this };
  readonly thresholdEpisodes: ThresholdEpisodes = this;
  readonly db: Database.Database;
  private hostIds = new Map<string, number>();
  private hostNames = new Map<number, string>();
  private knownProcs = new Set<string>();
  private insSample: Database.Statement;
  private insProc: Database.Statement;
  private insHost: Database.Statement;
  private insertMany: (samples: Sample[]) => void;
  private insSampleNew: Database.Statement;
  private upsertWsum!: Database.Statement;
  private insSeries: Database.Statement;
  private getSeriesId: Database.Statement;
  private getSeries: Database.Statement;
  /** Series key "host_id|gpu|pid|start" -> wseries id, and id -> [host_id, gpu, pid, start] (caches, bounded). */
  private sids = new Map<string, number>();
  private seriesOf = new Map<number, [number, number, number, number]>();
  /** The digest's per-window callback while summariseInto reads wsum (SQLite calls gd_wsum_take per row). */
  private onWindow: WindowFn = () => null;
  /** The GPU row last written in this batch: process samples of one GPU all carry it, written once. */
  private lastGpuRow = '';
  /** Windows (w) where a row was replaced rather than added: their summaries are rebuilt from the rows. */
  private dirtyWindows = new Set<number>();

  static inDataDir(dataDir: string): WatchStore {
    ensurePrivateDir(dataDir);
    return new WatchStore(join(dataDir, 'watch.sqlite'));
  }

  constructor(readonly file: string) {
    this.db = new Database(ensurePrivateFile(file));
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
    this.insSampleNew = this.db.prepare('INSERT OR IGNORE INTO samples VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.insSeries = this.db.prepare('INSERT OR IGNORE INTO wseries (host_id, gpu, pid, start) VALUES (?, ?, ?, ?)');
    this.getSeriesId = this.db.prepare('SELECT id FROM wseries WHERE host_id = ? AND gpu = ? AND pid = ? AND start = ?').pluck();
    this.getSeries = this.db.prepare('SELECT host_id, gpu, pid, start FROM wseries WHERE id = ?').raw(true);
    // Calling into JS with plain numbers is ~4x cheaper per row than better-sqlite3 building a row array.
    this.db.function('gd_wsum_take', { deterministic: false }, ((sid, w, firstTs, lastTs, n, lo, lo2, hi, sum, umax, mibTs, lastMib, aux) =>
      this.onWindow(sid, w, firstTs, lastTs, n, lo, lo2, hi, sum, umax, mibTs, lastMib, aux)) as WindowFn);
    this.insertMany = this.db.transaction((samples: Sample[]) => {
      this.lastGpuRow = '';
      for (const s of samples) this.insertOne(s);
      if (this.dirtyWindows.size) {
        for (const w of this.dirtyWindows) this.rebuildSummaries(w * SUMMARY_WINDOW_S, (w + 1) * SUMMARY_WINDOW_S);
        this.dirtyWindows.clear();
      }
    });
    const v = (this.db.prepare("SELECT value FROM watch_meta WHERE key = 'wsum_version'").get() as { value: number } | undefined)?.value;
    if (v !== WSUM_VERSION) {
      // Summaries missing (store from before wsum) or of another layout: rebuild them from the samples.
      this.db.transaction(() => {
        this.db.exec(WSUM_DDL);
        const r = this.db.prepare('SELECT min(ts), max(ts) FROM samples').raw(true).get() as [number | null, number | null];
        if (r[0] !== null && r[1] !== null) this.rebuildSummaries(r[0], r[1] + 1);
        this.db.prepare("INSERT OR REPLACE INTO watch_meta VALUES ('wsum_version', ?)").run(WSUM_VERSION);
      })();
    }
    this.upsertWsum = this.db.prepare(UPSERT_WSUM);
    this.nearStart = this.db.prepare('SELECT start FROM procs WHERE host_id = ? AND pid = ? AND start BETWEEN ? AND ? ORDER BY abs(start - ?) LIMIT 1').pluck();
  }

  /** The wseries id of a series, created on first use. */
  private sidOf(h: number, gpu: number, pid: number, start: number): number {
    const key = `${h}|${gpu}|${pid}|${start}`;
    let id = this.sids.get(key);
    if (id !== undefined) return id;
    const r = this.insSeries.run(h, gpu, pid, start);
    id = r.changes ? Number(r.lastInsertRowid) : (this.getSeriesId.get(h, gpu, pid, start) as number);
    if (this.sids.size >= 200_000) {
      this.sids.clear();
      this.seriesOf.clear();
    }
    this.sids.set(key, id);
    this.seriesOf.set(id, [h, gpu, pid, start]);
    return id;
  }

  /** [host_id, gpu, pid, start] of a wseries id. */
  private seriesIdentity(sid: number): [number, number, number, number] {
    return this.seriesOf.get(sid) ?? (this.getSeries.get(sid) as [number, number, number, number]);
  }

  /** Merges one window summary into wsum (the same merge as mergeRow). */
  private upsertRow(r: WindowRow): void {
    this.upsertWsum.run(r[0], this.sidOf(r[1], r[2], r[3], r[4]), r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
  }

  /** Adds a sample row and its window summary; a row already there is replaced and its window rebuilt. */
  private addRow(
    ts: number,
    h: number,
    gpu: number,
    pid: number,
    start: number,
    mib: number | null,
    util: number | null,
    summaryUtil: number | null,
    aux: number | null,
  ): void {
    if (this.insSampleNew.run(ts, h, gpu, pid, start, mib, util).changes === 0) {
      this.insSample.run(ts, h, gpu, pid, start, mib, util);
      this.dirtyWindows.add(Math.floor(ts / SUMMARY_WINDOW_S));
      return;
    }
    this.upsertRow(windowRow(ts, h, pid === -1 ? -1 : gpu, pid, pid > 0 ? start : 0, pid === -1 ? (mib ?? 0) : mib, summaryUtil, aux, pid !== 0));
  }

  /** The GPU row (pid 0, start = total MiB): replaced when re-sent; its summary keeps the latest figures. */
  private addGpuRow(ts: number, h: number, gpu: number, total: number, used: number, util: number | null): void {
    const key = `${ts}|${h}|${gpu}|${total}|${used}|${util}`;
    if (key === this.lastGpuRow) return;
    this.lastGpuRow = key;
    this.insSample.run(ts, h, gpu, 0, total, used, util);
    this.upsertRow(windowRow(ts, h, gpu, 0, 0, used, null, total, false));
  }

  /**
   * Recomputes the summaries of windows [fromS, toS) (s, multiples of the window length or not: whole
   * windows are rebuilt) from the sample rows, an hour at a time.
   */
  private rebuildSummaries(fromS: number, toS: number): void {
    const W = SUMMARY_WINDOW_S;
    const del = this.db.prepare('DELETE FROM wsum WHERE w >= ? AND w < ?');
    const ins = this.db.prepare('INSERT OR REPLACE INTO wsum VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    const next = this.db.prepare('SELECT min(ts) FROM samples WHERE ts >= ?').pluck();
    const w1 = Math.ceil(toS / W);
    del.run(Math.floor(fromS / W), w1);
    for (let w = Math.floor(fromS / W); w < w1; w += 6) {
      const t = next.get(w * W) as number | null;
      if (t === null || t >= w1 * W) break;
      w = Math.floor(t / W); // skip empty stretches
      const end = Math.min(w + 6, w1);
      for (const r of this.summariseRange(w * W, end * W).values())
        ins.run(r[0], this.sidOf(r[1], r[2], r[3], r[4]), r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
    }
  }

  /** Window summaries of the sample rows with fromS <= ts < toS, computed in JS (same merge as the UPSERT). */
  private summariseRange(fromS: number, toS: number): Map<string, WindowRow> {
    const out = new Map<string, WindowRow>();
    const put = (r: WindowRow) => {
      const k = `${r[0]}|${r[1]}|${r[2]}|${r[3]}|${r[4]}`;
      const a = out.get(k);
      if (a) mergeRow(a, r);
      else out.set(k, r);
    };
    type Row = [number, number, number, number, number, number | null, number | null];
    let gpu: Row | null = null;
    const rows = this.db
      .prepare('SELECT ts, host_id, gpu, pid, start, mib, util FROM samples WHERE ts >= ? AND ts < ? ORDER BY ts, host_id, gpu, pid, start')
      .raw(true);
    for (const r of rows.iterate(fromS, toS) as Iterable<Row>) {
      const [ts, h, g, pid, start, mib] = r;
      if (pid === 0) {
        gpu = r;
        put(windowRow(ts, h, g, 0, 0, mib ?? 0, null, start, false));
      } else if (pid === -1) put(windowRow(ts, h, -1, -1, 0, mib ?? 0, null, start, true));
      else {
        // The process sample's utilisation is its GPU row's (as samplesSince folds them).
        const util = gpu && gpu[0] === ts && gpu[1] === h && gpu[2] === g ? gpu[6] : null;
        put(windowRow(ts, h, g, pid, start, mib, util, null, true));
      }
    }
    return out;
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

  /** host_id|pid -> the start (s) recorded for that process: see canonicalStart. */
  private starts = new Map<string, number>();
  private nearStart!: Database.Statement;

  /**
   * The sampler derives a process's start as "poll time - ps etimes", which wobbles by a second or
   * more between polls (whole-second etimes, exec latency). A start within START_SLACK_S of the one
   * already recorded for this host and pid is that process: it keeps the recorded start, so one
   * process stays one series. A pid reused by a new process has a start far from the old one's.
   */
  private canonicalStart(h: number, pid: number, start: number): number {
    const key = `${h}|${pid}`;
    const known = this.starts.get(key) ?? (this.nearStart.get(h, pid, start - START_SLACK_S, start + START_SLACK_S, start) as number | undefined);
    if (known !== undefined && Math.abs(known - start) <= START_SLACK_S) {
      this.starts.set(key, known);
      return known;
    }
    if (this.starts.size > 200_000) this.starts.clear();
    this.starts.set(key, start);
    return start;
  }

  private insertOne(s: Sample): void {
    const h = this.hostId(s.host);
    const ts = sec(s.ts);
    if (s.kind === 'host') {
      const total = Math.round(s.memTotalBytes / MiB);
      this.addRow(ts, h, -1, -1, total, Math.round((s.memTotalBytes - s.memAvailableBytes) / MiB), null, null, total);
      return;
    }
    if (s.pid === undefined) {
      this.addGpuRow(ts, h, s.gpu, Math.round(s.gpuTotalMiB), Math.round(s.gpuUsedMiB), s.utilizationPct);
      return;
    }
    const start = this.canonicalStart(h, s.pid, sec(s.processStart));
    const pk = `${h}|${s.pid}|${start}`;
    if (!this.knownProcs.has(pk)) {
      this.insProc.run(h, s.pid, start, s.user, s.command);
      this.knownProcs.add(pk);
      if (this.knownProcs.size > 200_000) this.knownProcs.clear();
    }
    // The GPU row once per poll (process samples carry their GPU's figures), then the process row.
    this.addGpuRow(ts, h, s.gpu, Math.round(s.gpuTotalMiB), Math.round(s.gpuUsedMiB), s.utilizationPct);
    this.addRow(ts, h, s.gpu, s.pid, start, s.processMiB === null ? null : Math.round(s.processMiB), null, s.utilizationPct, null);
  }

  /** Writes one poll's samples in one transaction. */
  insert(samples: Sample[]): void {
    if (samples.length) this.insertMany(samples);
  }

  /**
   * Writes one poll's samples in transactions of about `chunk` samples, yielding to the event loop
   * between them, so a 1000-host poll (~16k rows, ~0.25 s of writing) never holds up a chat reply
   * for more than one chunk (a few ms). Chunks end at host boundaries: one host's samples (its GPU
   * rows and their process rows) always share a transaction.
   */
  async insertPaced(samples: Sample[], chunk = 512): Promise<void> {
    let from = 0;
    while (from < samples.length) {
      let to = Math.min(from + chunk, samples.length);
      while (to < samples.length && samples[to].host === samples[to - 1].host) to++;
      this.insertMany(samples.slice(from, to));
      from = to;
      if (from < samples.length) await new Promise<void>((r) => setImmediate(r));
    }
  }

  /**
   * Samples since `sinceMs` (epoch ms), in time order, as the detector takes them (ts in epoch ms).
   * A GPU row followed by process rows of the same GPU is folded into them; alone it is a GPU sample.
   */
  *samplesSince(sinceMs = 0, host?: string): Generator<Sample> {
    const procs = new Map<string, { user: string; command: string }>();
    for (const r of this.db.prepare('SELECT host_id, pid, start, user, command FROM procs').iterate() as Iterable<{
      host_id: number;
      pid: number;
      start: number;
      user: string;
      command: string;
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
    const rows = new SampleRowDecoder(
      (h) => this.hostNames.get(h)!,
      (h, pid, start) => procs.get(`${h}|${pid}|${start}`),
    );
    for (const row of stmt.iterate(...args) as Iterable<SampleRow>) yield* rows.push(row);
    yield* rows.end();
  }

  /**
   * Fills `index` from the window summaries of rows since `sinceMs`, for the same findings as
   * index.addAll(samplesSince(sinceMs)) without a JS object per sample: hosts and series are created in
   * first-seen order (job restarts link the same way, ties sort the same way), windows get the same
   * n / lo / lo2 / hi / sum, lastMs / lastMiB / GPU figures / host RAM are the latest rows'. A first window
   * that starts before `sinceMs` is summarised from its rows. Idle-while-holding state is replayed from the
   * rows only for series whose trailing stretch without a busy sample is long enough to be reported
   * (elsewhere it stays unset: no idle finding either way); sampling gaps are not listed (no finding uses
   * them). Returns false, leaving the index untouched, when its window length is not the summaries'.
   */
  summariseInto(index: SeriesIndex, sinceMs: number, o: Pick<DetectorOptions, 'idleHours' | 'idleMinMiB' | 'idleMaxUtilPct'>): boolean {
    const W = SUMMARY_WINDOW_S;
    const cfg = index.config;
    if (cfg.windowMs !== W * 1000) return false;
    const sinceS = Math.floor(sinceMs / 1000);
    const w0 = Math.floor(sinceS / W);

    /** One series as its windows come in (window order); identity and series objects are filled in after. */
    interface Seen {
      sid: number;
      first: number;
      last: number;
      mibTs: number;
      lastMib: number;
      aux: number;
      busyW: number;
      windows: Windows | null;
      h: number;
      gpu: number;
      pid: number;
      start: number;
      ps?: ProcessSeries;
      ram?: HostSeries;
    }
    const bySid = new Map<number, Seen>();
    const seen: Seen[] = [];
    const idleMax = o.idleMaxUtilPct;
    const idleMin = o.idleMinMiB;
    const maxWindows = cfg.maxWindows;
    // A series' windows are allocated once, for every window from its first to the newest in the store:
    // exact for a series that runs on to now, and no arrays regrown (and left to the GC) along the way.
    const lastW = (this.db.prepare('SELECT max(w) FROM wsum').pluck().get() as number | null) ?? w0;
    const take: WindowFn = (sid, w, firstTs, lastTs, n, lo, lo2, hi, sum, umax, mibTs, lastMib, aux) => {
      let s = bySid.get(sid);
      if (s === undefined) {
        s = { sid, first: firstTs, last: lastTs, mibTs: -Infinity, lastMib: 0, aux: 0, busyW: -Infinity, windows: null, h: 0, gpu: 0, pid: 0, start: 0 };
        bySid.set(sid, s);
        seen.push(s);
      } else s.last = lastTs; // windows come in order: the first window has the first row, the last the last
      if (mibTs !== null && mibTs >= s.mibTs) {
        s.mibTs = mibTs;
        s.lastMib = lastMib!;
        s.aux = aux ?? 0;
      }
      if (n > 0) {
        // GPU rows never count values (n = 0); umax is set on process windows only.
        (s.windows ??= new Windows(maxWindows, lastW - w + 1)).addSummary(w, n, lo!, lo2 ?? Infinity, hi!, sum);
        if (umax !== null && (umax > idleMax || lo! < idleMin)) s.busyW = w;
      }
      return null;
    };
    // A first window that starts before `since`: from its rows.
    if (sinceS % W !== 0)
      for (const r of this.summariseRange(sinceS, (w0 + 1) * W).values())
        take(this.sidOf(r[1], r[2], r[3], r[4]), r[0], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
    // The rest: every wsum row in key order (w, sid), handed to take() by SQLite, no row objects.
    this.onWindow = take;
    try {
      this.db
        .prepare('SELECT count(gd_wsum_take(sid, w, first_ts, last_ts, n, lo, lo2, hi, sum, umax, mib_ts, last_mib, aux)) FROM wsum WHERE w >= ?')
        .pluck()
        .get(sinceS % W !== 0 ? w0 + 1 : w0);
    } finally {
      this.onWindow = () => null;
    }

    const hosts = new Map<number, { first: number; last: number }>();
    for (const s of seen) {
      [s.h, s.gpu, s.pid, s.start] = this.seriesIdentity(s.sid);
      const hs = hosts.get(s.h);
      if (!hs) hosts.set(s.h, { first: s.first, last: s.last });
      else {
        if (s.first < hs.first) hs.first = s.first;
        if (s.last > hs.last) hs.last = s.last;
      }
    }
    // Hosts, then series, in the order their first rows come in (ts, host_id, gpu, pid, start).
    const states = new Map<number, ReturnType<SeriesIndex['hostState']>>();
    for (const [h, t] of [...hosts].sort((a, b) => a[1].first - b[1].first || a[0] - b[0])) {
      const st = index.hostState(this.hostNames.get(h)!);
      st.lastMs = t.last * 1000;
      states.set(h, st);
    }
    const all = seen.sort((a, b) => a.first - b.first || a.h - b.h || a.gpu - b.gpu || a.pid - b.pid || a.start - b.start);
    const procMeta = this.db.prepare('SELECT user, command FROM procs WHERE host_id = ? AND pid = ? AND start = ?').raw(true);
    const idle: Seen[] = [];
    for (const s of all) {
      const st = states.get(s.h)!;
      if (s.pid === 0) st.gpus.set(s.gpu, { ms: s.mibTs * 1000, usedMiB: s.lastMib, totalMiB: s.aux });
      else if (s.pid === -1) {
        const ram = (s.ram = new HostSeries(st.host, maxWindows, s.windows ?? undefined));
        st.ram = ram;
        ram.firstMs = s.first * 1000;
        ram.lastMs = s.mibTs * 1000;
        ram.totalMiB = s.aux;
        ram.availableMiB = s.aux - s.lastMib;
      } else {
        const meta = procMeta.get(s.h, s.pid, s.start) as [string, string] | undefined;
        const ps = (s.ps = new ProcessSeries(
          { host: st.host, gpu: s.gpu, pid: s.pid, processStart: s.start * 1000, user: meta?.[0] ?? '?', command: meta?.[1] ?? '' },
          s.start * 1000,
          maxWindows,
          s.windows ?? undefined,
        ));
        ps.firstMs = s.first * 1000;
        ps.lastMs = s.last * 1000;
        ps.lastMiB = s.lastMib;
        index.adopt(st, ps);
        const from = Math.max(s.busyW * W, sinceS);
        if (s.mibTs > -Infinity && ps.lastMs - from * 1000 >= o.idleHours * HOUR) idle.push(s);
      }
    }
    if (idle.length) this.replayIdle(idle, cfg, Math.max(sinceS, 0), W);
    return true;
  }

  /** Idle state of a few series from their rows since their last window with a busy sample. */
  private replayIdle(
    list: { h: number; gpu: number; pid: number; start: number; busyW: number; ps?: ProcessSeries }[],
    cfg: SeriesIndex['config'],
    sinceS: number,
    W: number,
  ): void {
    this.db.exec(
      'CREATE TEMP TABLE IF NOT EXISTS idle_cand (host_id INTEGER, gpu INTEGER, pid INTEGER, start INTEGER, from_ts INTEGER, PRIMARY KEY (host_id, gpu, pid, start)) WITHOUT ROWID; DELETE FROM idle_cand;',
    );
    const ins = this.db.prepare('INSERT INTO idle_cand VALUES (?, ?, ?, ?, ?)');
    const byKey = new Map<string, { ps: ProcessSeries; prev: number }>();
    let minFrom = Infinity;
    for (const s of list) {
      const from = Math.max(s.busyW * W, sinceS);
      ins.run(s.h, s.gpu, s.pid, s.start, from);
      byKey.set(`${s.h}|${s.gpu}|${s.pid}|${s.start}`, { ps: s.ps!, prev: -Infinity });
      if (from < minFrom) minFrom = from;
    }
    const rows = this.db
      .prepare(
        `SELECT s.ts, s.host_id, s.gpu, s.pid, s.start, s.mib,
           (SELECT g.util FROM samples g WHERE g.ts = s.ts AND g.host_id = s.host_id AND g.gpu = s.gpu AND g.pid = 0 ORDER BY g.start DESC LIMIT 1)
         FROM samples s CROSS JOIN idle_cand c ON c.host_id = s.host_id AND c.gpu = s.gpu AND c.pid = s.pid AND c.start = s.start
         WHERE s.ts >= ? AND s.pid > 0 AND s.ts >= c.from_ts ORDER BY s.ts, s.host_id, s.gpu, s.pid, s.start`,
      )
      .raw(true);
    for (const [ts, h, gpu, pid, start, mib, util] of rows.iterate(minFrom) as Iterable<
      [number, number, number, number, number, number | null, number | null]
    >) {
      const c = byKey.get(`${h}|${gpu}|${pid}|${start}`)!;
      const t = ts * 1000;
      if (mib !== null) c.ps.idleStep(t, t - c.prev, mib, util, cfg);
      c.prev = t;
    }
    this.db.exec('DELETE FROM idle_cand');
  }

  /** Hosts and processes seen since `sinceMs`. */
  watched(sinceMs: number): { hosts: number; processes: number } {
    const s = Math.floor(sinceMs / 1000);
    const r = this.db
      .prepare(
        "SELECT count(DISTINCT host_id) AS hosts, count(DISTINCT CASE WHEN pid > 0 THEN host_id || '|' || pid || '|' || start END) AS processes FROM samples WHERE ts >= ?",
      )
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
      this.rebuildSummaries(done, cutoff);
      this.db.prepare("INSERT OR REPLACE INTO watch_meta VALUES ('downsampled_until', ?)").run(cutoff);
    })();
    return { before, after };
  }

  /** The detector reads this file in a worker thread, through FINDINGS_READER (its own connection). */
  findingsInput(): FindingsInput {
    return { file: this.file, reader: FINDINGS_READER };
  }

  /** A chart child opens the file itself (its own connection, through CHART_READER). */
  chartSource(): Promise<SampleSource> {
    return Promise.resolve({ file: this.file, reader: CHART_READER });
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
      key: string;
      slope: number;
      hours_to_full: number | null;
      reported_at_ms: number;
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

  // ---- threshold alerts' posted episodes ----

  postedEpisodes(): PostedEpisode[] {
    return (
      this.db.prepare('SELECT host, gpu, rule, since_ms, posted_ms FROM threshold_episodes').all() as {
        host: string;
        gpu: number;
        rule: string;
        since_ms: number;
        posted_ms: number;
      }[]
    ).map((r) => ({ host: r.host, gpu: r.gpu, rule: r.rule, sinceMs: r.since_ms, postedMs: r.posted_ms }));
  }

  markPosted(e: PostedEpisode): boolean {
    return this.db.prepare('INSERT OR IGNORE INTO threshold_episodes VALUES (?, ?, ?, ?, ?)').run(e.host, e.gpu, e.rule, e.sinceMs, e.postedMs).changes > 0;
  }

  clearEpisodes(ended: Pick<PostedEpisode, 'host' | 'gpu' | 'rule'>[]): void {
    const st = this.db.prepare('DELETE FROM threshold_episodes WHERE host = ? AND gpu = ? AND rule = ?');
    this.db.transaction(() => {
      for (const e of ended) st.run(e.host, e.gpu, e.rule);
    })();
  }

  close(): void {
    this.db.close();
  }
}
