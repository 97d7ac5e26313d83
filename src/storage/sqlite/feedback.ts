// Feedback's storage port (src/feedback/storage.ts) in SQLite: diagnoses and their 👍 / 👎 votes
// (feedback.sqlite in data_dir, 0600 like the other stores).
// A diagnosis row holds its rule id, category, time, platform, channel and an HMAC of who asked (the key
// is random per data directory, so the table names nobody); with feedback.keep_logs the redacted log of
// a matched diagnosis waits in the row for a 👎, and a log that matched no rule, or got a 👎, is written
// to data_dir/feedback-logs/ (0700 / 0600) for an admin to turn into a rule (`gpu-doctor knowledge new
// ID --from FILE`). Rows, votes and kept logs older than retention_days are deleted.
// Kept logs are capped (config feedback.max_logs_per_user_per_day, max_log_kib, max_kept_mib): a log over a
// cap is not kept (its diagnosis and votes are), with a note on the bot's log; the text stored has no NUL.
import Database from '../sqlite-driver.js';
import { createHmac, randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import {
  FEEDBACK_ID,
  type DiagnosisRecordInput,
  type FeedbackReport,
  type FeedbackReportItem,
  type FeedbackReportRule,
  type Vote,
  type VoteResult,
} from '../../core/feedback.js';
import { ensurePrivateDir, ensurePrivateFile } from '../../core/private-files.js';
import { redactLog } from '../../feedback/redact.js';
import {
  checkedKeptLogs,
  KEPT_LOG_DEFAULTS,
  keptLogInside,
  keptLogRefusal,
  PRUNE_EVERY_MS,
  REPORT_MAX_ITEMS,
  voteOf,
  writeKeptLog,
  type FeedbackStorage,
  type FeedbackStoreOptions,
  type KeptLogCaps,
} from '../../feedback/storage.js';
import { storableText } from '../storable-text.js';

/** Bytes of the kept log files in a folder (0 when there is none). */
export function keptFilesBytes(logsDir: string): number {
  let names: string[];
  try {
    names = readdirSync(logsDir);
  } catch {
    return 0;
  }
  let bytes = 0;
  for (const name of names) {
    try {
      const st = lstatSync(join(logsDir, name));
      if (st.isFile()) bytes += st.size;
    } catch {
      // gone meanwhile
    }
  }
  return bytes;
}

const defaultNote = (note: string) => void process.stderr.write(note + '\n');

const DAY_MS = 86_400_000;

interface DiagnosisRow {
  id: string;
  ts: number;
  platform: string;
  rule: string | null;
  category: string | null;
  matched: number;
  log_text: string | null;
  log_file: string | null;
}

export class FeedbackStore implements FeedbackStorage {
  private db: Database.Database;
  private key: Buffer;
  private lastPrune = 0;
  readonly keepLogs: boolean;
  readonly retentionDays: number;
  readonly logsDir: string;
  readonly caps: Required<Omit<KeptLogCaps, 'onNote'>>;
  private onNote: (note: string) => void;

  constructor(file: string, o: FeedbackStoreOptions = {}) {
    this.keepLogs = o.keepLogs ?? false;
    this.retentionDays = o.retentionDays ?? 30;
    this.logsDir = o.logsDir ?? join(file, '..', 'feedback-logs');
    this.caps = {
      maxLogsPerUserPerDay: o.maxLogsPerUserPerDay ?? KEPT_LOG_DEFAULTS.maxLogsPerUserPerDay,
      maxLogBytes: o.maxLogBytes ?? KEPT_LOG_DEFAULTS.maxLogBytes,
      maxKeptBytes: o.maxKeptBytes ?? KEPT_LOG_DEFAULTS.maxKeptBytes,
    };
    this.onNote = o.onNote ?? defaultNote;
    this.db = new Database(ensurePrivateFile(file));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS diagnoses (
        id TEXT PRIMARY KEY, ts INTEGER NOT NULL, platform TEXT NOT NULL, channel TEXT, user_hash TEXT NOT NULL,
        rule TEXT, category TEXT, matched INTEGER NOT NULL, log_text TEXT, log_file TEXT);
      CREATE INDEX IF NOT EXISTS diagnoses_by_user ON diagnoses (platform, user_hash, ts);
      CREATE INDEX IF NOT EXISTS diagnoses_by_ts ON diagnoses (ts);
      CREATE TABLE IF NOT EXISTS votes (
        diagnosis_id TEXT NOT NULL REFERENCES diagnoses (id) ON DELETE CASCADE, voter_hash TEXT NOT NULL,
        vote INTEGER NOT NULL CHECK (vote IN (-1, 1)), ts INTEGER NOT NULL, PRIMARY KEY (diagnosis_id, voter_hash));`);
    const stored = this.db.prepare("SELECT value FROM meta WHERE key = 'user_key'").get() as { value: string } | undefined;
    if (stored) this.key = Buffer.from(stored.value, 'base64');
    else {
      this.key = randomBytes(32);
      this.db.prepare("INSERT INTO meta (key, value) VALUES ('user_key', ?)").run(this.key.toString('base64'));
    }
    this.prune();
  }

  /** The store's file in a data directory. */
  static fileIn(dataDir: string): string {
    return join(dataDir, 'feedback.sqlite');
  }

  static inDataDir(dataDir: string, o: FeedbackStoreOptions = {}): FeedbackStore {
    ensurePrivateDir(dataDir);
    return new FeedbackStore(FeedbackStore.fileIn(dataDir), { logsDir: join(dataDir, 'feedback-logs'), ...o });
  }

  /** Who, as a keyed hash: the same person on the same platform always gets the same one. */
  private userHash(platform: string, userId: string): string {
    return createHmac('sha256', this.key).update(`${platform}\0${userId}`).digest('base64url').slice(0, 32);
  }

  record(d: DiagnosisRecordInput, now = Date.now()): string {
    if (now - this.lastPrune > PRUNE_EVERY_MS) this.prune(now);
    const id = randomBytes(12).toString('base64url');
    const matched = d.rule !== null;
    const userHash = this.userHash(d.platform, d.userId);
    let redacted = this.keepLogs ? redactLog(storableText(d.log), this.caps.maxLogBytes) : null;
    if (redacted !== null) {
      const refused = this.overCap(d.platform, userHash, Buffer.byteLength(redacted, 'utf8'), now);
      if (refused) {
        this.onNote(keptLogRefusal(refused, this.caps, d.platform));
        redacted = null;
      }
    }
    // A matched log waits in its row for a 👎; one no rule matched is what admins want to see at once.
    const logFile = redacted !== null && !matched ? this.writeLog(id, d.rule, redacted, now) : null;
    this.db
      .prepare(
        'INSERT INTO diagnoses (id, ts, platform, channel, user_hash, rule, category, matched, log_text, log_file) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        id,
        now,
        storableText(d.platform),
        storableText(d.channelId ?? null),
        userHash,
        storableText(d.rule),
        storableText(d.category),
        matched ? 1 : 0,
        logFile ? null : redacted,
        logFile,
      );
    return id;
  }

  /** Which cap keeping `bytes` more of this person's log would pass, if any. */
  private overCap(platform: string, userHash: string, bytes: number, now: number): 'perUser' | 'total' | null {
    const { n } = this.db
      .prepare('SELECT COUNT(*) AS n FROM diagnoses WHERE platform = ? AND user_hash = ? AND ts > ? AND (log_text IS NOT NULL OR log_file IS NOT NULL)')
      .get(platform, userHash, now - DAY_MS) as { n: number };
    if (n >= this.caps.maxLogsPerUserPerDay) return 'perUser';
    // A log waits in its row (for a 👎) or in its file, never both: the two together are what is kept.
    const { rows } = this.db.prepare('SELECT COALESCE(SUM(LENGTH(CAST(log_text AS BLOB))), 0) AS rows FROM diagnoses').get() as { rows: number };
    return rows + keptFilesBytes(this.logsDir) + bytes > this.caps.maxKeptBytes ? 'total' : null;
  }

  vote(r: { id?: string; platform: string; userId: string; vote: Vote }, now = Date.now()): VoteResult {
    const voter = this.userHash(r.platform, r.userId);
    let row: DiagnosisRow | undefined;
    if (r.id === undefined) {
      row = this.db.prepare('SELECT * FROM diagnoses WHERE platform = ? AND user_hash = ? ORDER BY ts DESC, rowid DESC LIMIT 1').get(r.platform, voter) as
        DiagnosisRow | undefined;
      if (!row) return { ok: false, reason: 'none' };
    } else {
      // Ids come from button values anyone can forge: shape first, then a lookup on the same platform.
      if (!FEEDBACK_ID.test(r.id)) return { ok: false, reason: 'unknown' };
      row = this.db.prepare('SELECT * FROM diagnoses WHERE id = ? AND platform = ?').get(r.id, r.platform) as DiagnosisRow | undefined;
      if (!row) return { ok: false, reason: 'unknown' };
    }
    const found = row;
    const value = r.vote === 'up' ? 1 : -1;
    const result = this.db.transaction((): VoteResult => {
      const before = this.db.prepare('SELECT vote FROM votes WHERE diagnosis_id = ? AND voter_hash = ?').get(found.id, voter) as { vote: number } | undefined;
      this.db
        .prepare(
          'INSERT INTO votes (diagnosis_id, voter_hash, vote, ts) VALUES (?, ?, ?, ?) ON CONFLICT (diagnosis_id, voter_hash) DO UPDATE SET vote = excluded.vote, ts = excluded.ts',
        )
        .run(found.id, voter, value, now);
      let keptLog = found.log_file;
      if (value < 0 && !keptLog && found.log_text !== null) {
        keptLog = this.writeLog(found.id, found.rule, found.log_text, found.ts);
        this.db.prepare('UPDATE diagnoses SET log_file = ?, log_text = NULL WHERE id = ?').run(keptLog, found.id);
      }
      return {
        ok: true,
        id: found.id,
        vote: r.vote,
        previous: before ? voteOf(before.vote) : null,
        rule: found.rule,
        category: found.category,
        ts: found.ts,
        keptLog,
      };
    })();
    return result;
  }

  report(days: number, now = Date.now()): FeedbackReport {
    const since = now - days * DAY_MS;
    const rules = this.db
      .prepare(
        `SELECT d.rule AS rule, MAX(d.category) AS category, COUNT(*) AS diagnoses,
                COALESCE(SUM(v.up), 0) AS up, COALESCE(SUM(v.down), 0) AS down
         FROM diagnoses d LEFT JOIN (SELECT diagnosis_id, SUM(vote = 1) AS up, SUM(vote = -1) AS down FROM votes GROUP BY diagnosis_id) v ON v.diagnosis_id = d.id
         WHERE d.ts >= ? GROUP BY d.rule ORDER BY down DESC, diagnoses DESC, rule`,
      )
      .all(since) as FeedbackReportRule[];
    const items = this.db
      .prepare(
        `SELECT d.id, d.ts, d.platform, d.rule, d.category, d.log_file AS logFile,
                  COALESCE(v.up, 0) AS up, COALESCE(v.down, 0) AS down
           FROM diagnoses d LEFT JOIN (SELECT diagnosis_id, SUM(vote = 1) AS up, SUM(vote = -1) AS down FROM votes GROUP BY diagnosis_id) v ON v.diagnosis_id = d.id
           WHERE d.ts >= ? AND (d.matched = 0 OR COALESCE(v.down, 0) > 0) ORDER BY d.ts DESC, d.rowid DESC LIMIT ?`,
      )
      .all(since, REPORT_MAX_ITEMS) as FeedbackReportItem[];
    return { days, sinceMs: since, keepLogs: this.keepLogs, rules, items: checkedKeptLogs(items, this.logsDir) };
  }

  /** Deletes diagnoses (their votes, their kept logs) older than retention_days. */
  prune(now = Date.now()): number {
    this.lastPrune = now;
    const cutoff = now - this.retentionDays * DAY_MS;
    const old = this.db.prepare('SELECT log_file FROM diagnoses WHERE ts < ? AND log_file IS NOT NULL').all(cutoff) as { log_file: string }[];
    for (const { log_file } of old) {
      // A path read back from the database is deleted only when it is a kept log's name in the kept-logs
      // folder: a row that names /etc/passwd or ~/.ssh/id_ed25519 must not become an unlink.
      const kept = keptLogInside(log_file, this.logsDir);
      if (kept === null) continue;
      try {
        unlinkSync(kept);
      } catch {
        // already gone
      }
    }
    return this.db.prepare('DELETE FROM diagnoses WHERE ts < ?').run(cutoff).changes;
  }

  private writeLog(id: string, rule: string | null, text: string, ts: number): string {
    return writeKeptLog(this.logsDir, id, rule, text, ts);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
