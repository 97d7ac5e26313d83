// 👍 / 👎 on diagnoses in Postgres, shared by replicas (config `storage: postgres://...`): a diagnosis
// recorded by one replica is voted on through the other (a button click lands on either) and every
// replica's `/gpu feedback list` and weekly list count the same votes. The rows are the SQLite store's
// (src/storage/sqlite/feedback.ts; both implement src/feedback/storage.ts): rule, category, time, platform, channel and a keyed hash of who asked, the key
// one per database (feedback_meta) so both replicas hash a person alike.
//
// Kept logs (feedback.keep_logs): the redacted text stays in its row (feedback_diagnoses.log_text) until
// retention_days; the file an admin turns into a rule (`gpu-doctor knowledge new ID --from FILE`) is
// written, as with SQLite, to data_dir/feedback-logs of the replica that kept it (a log no rule matched:
// the one that recorded it; a 👎: the one that took the vote). Each replica deletes its own files past
// retention_days (by the day in the file's name).
//
// Kept logs are capped as with SQLite (KeptLogCaps): per person per 24 h, per log, and all rows' log text
// together (every kept file is a copy of its row's text). Two replicas recording at the same moment may
// each pass a cap by one log. Text goes in without NUL or lone surrogates (Postgres refuses NUL: the row
// would be lost).
import { createHmac, randomBytes } from 'node:crypto';
import { readdirSync, unlinkSync } from 'node:fs';
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
import { redactLog } from '../../feedback/redact.js';
import {
  checkedKeptLogs,
  KEPT_LOG_DEFAULTS,
  keptLogPath,
  keptLogRefusal,
  PRUNE_EVERY_MS,
  REPORT_MAX_ITEMS,
  voteOf,
  writeKeptLog,
  type FeedbackStorage,
  type KeptLogCaps,
} from '../../feedback/storage.js';
import { storableText } from '../storable-text.js';
import type { Pool } from './connect.js';

export interface PgFeedbackOptions extends KeptLogCaps {
  keepLogs?: boolean;
  retentionDays?: number;
  /** This replica's folder for kept logs (data_dir/feedback-logs). */
  logsDir: string;
}

const DAY_MS = 86_400_000;

interface DiagnosisRow {
  id: string;
  ts: number;
  rule: string | null;
  category: string | null;
  log_text: string | null;
  log_file: string | null;
}

const VOTES = `SELECT diagnosis_id, count(*) FILTER (WHERE vote = 1) AS up, count(*) FILTER (WHERE vote = -1) AS down FROM feedback_votes GROUP BY diagnosis_id`;

export class PgFeedbackStore implements FeedbackStorage {
  private key: Promise<Buffer> | null = null;
  private lastPrune = 0;
  readonly keepLogs: boolean;
  readonly retentionDays: number;
  readonly logsDir: string;
  readonly caps: Required<Omit<KeptLogCaps, 'onNote'>>;
  private onNote: (note: string) => void;

  constructor(
    private pool: Pool,
    o: PgFeedbackOptions,
  ) {
    this.keepLogs = o.keepLogs ?? false;
    this.retentionDays = o.retentionDays ?? 30;
    this.logsDir = o.logsDir;
    this.caps = {
      maxLogsPerUserPerDay: o.maxLogsPerUserPerDay ?? KEPT_LOG_DEFAULTS.maxLogsPerUserPerDay,
      maxLogBytes: o.maxLogBytes ?? KEPT_LOG_DEFAULTS.maxLogBytes,
      maxKeptBytes: o.maxKeptBytes ?? KEPT_LOG_DEFAULTS.maxKeptBytes,
    };
    this.onNote = o.onNote ?? ((note) => void process.stderr.write(note + '\n'));
  }

  /** Which cap keeping `bytes` more of this person's log would pass, if any (one statement: both counts). */
  private async overCap(platform: string, userHash: string, bytes: number, now: number): Promise<'perUser' | 'total' | null> {
    const r = await this.pool.query<{ n: number; kept: string }>(
      `SELECT count(*) FILTER (WHERE platform = $1 AND user_hash = $2 AND ts > $3 AND (log_text IS NOT NULL OR log_file IS NOT NULL))::int AS n,
              COALESCE(sum(octet_length(log_text)), 0)::text AS kept
       FROM feedback_diagnoses`,
      [platform, userHash, now - DAY_MS],
    );
    const row = r.rows[0];
    if ((row?.n ?? 0) >= this.caps.maxLogsPerUserPerDay) return 'perUser';
    return Number(row?.kept ?? 0) + bytes > this.caps.maxKeptBytes ? 'total' : null;
  }

  /** The database's hashing key: made by the first replica that needs it, read by every other. */
  private userKey(): Promise<Buffer> {
    this.key ??= (async () => {
      await this.pool.query("INSERT INTO feedback_meta (key, value) VALUES ('user_key', $1) ON CONFLICT (key) DO NOTHING", [
        randomBytes(32).toString('base64'),
      ]);
      const r = await this.pool.query<{ value: string }>("SELECT value FROM feedback_meta WHERE key = 'user_key'");
      return Buffer.from(r.rows[0].value, 'base64');
    })();
    // A failed read is tried again next time rather than kept.
    this.key.catch(() => (this.key = null));
    return this.key;
  }

  private async userHash(platform: string, userId: string): Promise<string> {
    return createHmac('sha256', await this.userKey())
      .update(`${platform}\0${userId}`)
      .digest('base64url')
      .slice(0, 32);
  }

  async record(d: DiagnosisRecordInput, now = Date.now()): Promise<string> {
    if (now - this.lastPrune > PRUNE_EVERY_MS) await this.prune(now).catch(() => undefined);
    const id = randomBytes(12).toString('base64url');
    const matched = d.rule !== null;
    let redacted = this.keepLogs ? redactLog(storableText(d.log), this.caps.maxLogBytes) : null;
    const hash = await this.userHash(d.platform, d.userId);
    if (redacted !== null) {
      const refused = await this.overCap(d.platform, hash, Buffer.byteLength(redacted, 'utf8'), now);
      if (refused) {
        this.onNote(keptLogRefusal(refused, this.caps, d.platform));
        redacted = null;
      }
    }
    // A log no rule matched is what admins want to see at once: its file is written now; a matched one waits for a 👎.
    const logFile = redacted !== null && !matched ? keptLogPath(this.logsDir, id, d.rule, now) : null;
    await this.pool.query(
      'INSERT INTO feedback_diagnoses (id, ts, platform, channel, user_hash, rule, category, matched, log_text, log_file) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
      [id, now, storableText(d.platform), storableText(d.channelId ?? null), hash, storableText(d.rule), storableText(d.category), matched, redacted, logFile],
    );
    if (logFile && redacted !== null) writeKeptLog(this.logsDir, id, d.rule, redacted, now, logFile);
    return id;
  }

  async vote(r: { id?: string; platform: string; userId: string; vote: Vote }, now = Date.now()): Promise<VoteResult> {
    const voter = await this.userHash(r.platform, r.userId);
    let row: DiagnosisRow | undefined;
    const cols = 'id, ts, rule, category, log_text, log_file';
    if (r.id === undefined) {
      row = (
        await this.pool.query<DiagnosisRow>(
          `SELECT ${cols} FROM feedback_diagnoses WHERE platform = $1 AND user_hash = $2 ORDER BY ts DESC, seq DESC LIMIT 1`,
          [r.platform, voter],
        )
      ).rows[0];
      if (!row) return { ok: false, reason: 'none' };
    } else {
      // Ids come from button values anyone can forge: shape first, then a lookup on the same platform.
      if (!FEEDBACK_ID.test(r.id)) return { ok: false, reason: 'unknown' };
      row = (await this.pool.query<DiagnosisRow>(`SELECT ${cols} FROM feedback_diagnoses WHERE id = $1 AND platform = $2`, [r.id, r.platform])).rows[0];
      if (!row) return { ok: false, reason: 'unknown' };
    }
    const value = r.vote === 'up' ? 1 : -1;
    // One statement: the vote as it was (the CTE reads before the upsert) and the vote as it is now.
    const before = (
      await this.pool.query<{ before: number | null }>(
        `WITH before AS (SELECT vote FROM feedback_votes WHERE diagnosis_id = $1 AND voter_hash = $2),
              upsert AS (INSERT INTO feedback_votes (diagnosis_id, voter_hash, vote, ts) VALUES ($1, $2, $3, $4)
                         ON CONFLICT (diagnosis_id, voter_hash) DO UPDATE SET vote = excluded.vote, ts = excluded.ts RETURNING 1)
         SELECT (SELECT vote FROM before) AS before, (SELECT count(*) FROM upsert) AS n`,
        [row.id, voter, value, now],
      )
    ).rows[0]?.before;
    let keptLog = row.log_file;
    if (value < 0 && !keptLog && row.log_text !== null) {
      // The first 👎 (on any replica) names the file; only the replica whose name went in writes it.
      const path = keptLogPath(this.logsDir, row.id, row.rule, row.ts);
      const set = await this.pool.query<{ log_file: string }>(
        'UPDATE feedback_diagnoses SET log_file = $1 WHERE id = $2 AND log_file IS NULL RETURNING log_file',
        [path, row.id],
      );
      if (set.rowCount === 1) keptLog = writeKeptLog(this.logsDir, row.id, row.rule, row.log_text, row.ts, path);
      else
        keptLog =
          (await this.pool.query<{ log_file: string | null }>('SELECT log_file FROM feedback_diagnoses WHERE id = $1', [row.id])).rows[0]?.log_file ?? null;
    }
    return {
      ok: true,
      id: row.id,
      vote: r.vote,
      previous: before === null || before === undefined ? null : voteOf(before),
      rule: row.rule,
      category: row.category,
      ts: row.ts,
      keptLog,
    };
  }

  async report(days: number, now = Date.now()): Promise<FeedbackReport> {
    const since = now - days * DAY_MS;
    const [rules, items] = await Promise.all([
      this.pool.query<FeedbackReportRule>(
        `SELECT d.rule AS rule, max(d.category) AS category, count(*)::int AS diagnoses,
                COALESCE(sum(v.up), 0)::int AS up, COALESCE(sum(v.down), 0)::int AS down
         FROM feedback_diagnoses d LEFT JOIN (${VOTES}) v ON v.diagnosis_id = d.id
         WHERE d.ts >= $1 GROUP BY d.rule ORDER BY down DESC, diagnoses DESC, rule COLLATE "C" NULLS FIRST`,
        [since],
      ),
      this.pool.query<FeedbackReportItem>(
        `SELECT d.id, d.ts, d.platform, d.rule, d.category, d.log_file AS "logFile",
                COALESCE(v.up, 0)::int AS up, COALESCE(v.down, 0)::int AS down
         FROM feedback_diagnoses d LEFT JOIN (${VOTES}) v ON v.diagnosis_id = d.id
         WHERE d.ts >= $1 AND (NOT d.matched OR COALESCE(v.down, 0) > 0) ORDER BY d.ts DESC, d.seq DESC LIMIT $2`,
        [since, REPORT_MAX_ITEMS],
      ),
    ]);
    return {
      days,
      sinceMs: since,
      keepLogs: this.keepLogs,
      rules: rules.rows,
      items: checkedKeptLogs(
        items.rows.map((i) => ({ ...i, ts: Number(i.ts) })),
        this.logsDir,
      ),
    };
  }

  /**
   * Deletes diagnoses (and their votes) older than retention_days, and this replica's kept log files
   * older than that (the other replica's files are its own to delete).
   */
  async prune(now = Date.now()): Promise<number> {
    this.lastPrune = now;
    const cutoff = now - this.retentionDays * DAY_MS;
    let files: string[] = [];
    try {
      files = readdirSync(this.logsDir).filter((f) => f.endsWith('.log'));
    } catch {
      // no kept logs here yet
    }
    for (const f of files) {
      // A kept log's name starts with its diagnosis's day (keptLogPath): gone once that whole day is past retention.
      const day = /^(\d{4})(\d{2})(\d{2})-/.exec(f);
      if (!day || Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])) + DAY_MS > cutoff) continue;
      try {
        unlinkSync(join(this.logsDir, f));
      } catch {
        // already gone
      }
    }
    return (await this.pool.query('DELETE FROM feedback_diagnoses WHERE ts < $1', [cutoff])).rowCount ?? 0;
  }

  close(): void {
    /* the pool is the storage's, closed with it */
  }
}
