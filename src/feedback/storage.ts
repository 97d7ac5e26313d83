// Feedback's storage port: what the wing needs of wherever 👍 / 👎 are kept (record a diagnosis, take a
// vote, list the window's votes and kept logs for `/gpu feedback list` and the weekly list), and the rules
// on kept logs that every backend follows: caps, file names, where a path read back from a row may point.
// src/storage/sqlite/feedback.ts (feedback.sqlite in data_dir) and src/storage/postgres/feedback.ts (shared
// by replicas) implement it; src/app.ts picks one.
import { writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { FeedbackReportItem, FeedbackService, Vote } from '../core/feedback.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../core/private-files.js';
import { MAX_KEPT_BYTES } from './redact.js';

/** A store of diagnoses and votes, wherever it lives. Answers are values (SQLite) or promises (Postgres). */
export interface FeedbackStorage extends FeedbackService {
  /** feedback.keep_logs: redacted logs are kept (unmatched, or voted 👎). */
  readonly keepLogs: boolean;
  /** This process's folder of kept log files (data_dir/feedback-logs). */
  readonly logsDir: string;
  /** Deletes diagnoses (their votes, their kept logs) older than retention_days; how many rows went. */
  prune(now?: number): number | Promise<number>;
  close(): void;
}

/** The caps on kept logs (config `feedback`): any one person's flood, or all of them, cannot fill the disk. */
export interface KeptLogCaps {
  /** Logs kept per person (platform and user) in any 24 hours. */
  maxLogsPerUserPerDay?: number;
  /** Of each log, its last this many bytes. */
  maxLogBytes?: number;
  /** All kept log text together (rows waiting for a 👎 and files), in bytes. */
  maxKeptBytes?: number;
  /** Where a log that is not kept is told (default: the process's stderr, the bot's log). */
  onNote?: (note: string) => void;
}

export const KEPT_LOG_DEFAULTS = { maxLogsPerUserPerDay: 20, maxLogBytes: MAX_KEPT_BYTES, maxKeptBytes: 512 * 1024 * 1024 };

export interface FeedbackStoreOptions extends KeptLogCaps {
  /** Keep redacted logs (unmatched, or voted 👎). Default false: no log text is stored at all. */
  keepLogs?: boolean;
  retentionDays?: number;
  /** Where kept logs go; default <the database's folder>/feedback-logs. */
  logsDir?: string;
}

/** Why a log was not kept, as the bot's log says it (names no user: the store holds only their hash). */
export function keptLogRefusal(reason: 'perUser' | 'total', caps: Required<Omit<KeptLogCaps, 'onNote'>>, platform: string): string {
  return reason === 'perUser'
    ? `feedback: a ${platform} user's log was not kept: ${caps.maxLogsPerUserPerDay} of theirs already kept in the last 24 h (feedback.max_logs_per_user_per_day)`
    : `feedback: a log was not kept: the kept logs hold ${Math.round(caps.maxKeptBytes / 1024 / 1024)} MiB already (feedback.max_kept_mib); older ones go after retention_days`;
}

/** A diagnosis is pruned at most this often while records come in. */
export const PRUNE_EVERY_MS = 3_600_000;
/** Items listed in a report at most (the per-rule counts cover everything). */
export const REPORT_MAX_ITEMS = 200;

export const voteOf = (n: number): Vote => (n > 0 ? 'up' : 'down');

/** The names the stores give kept logs (keptLogPath): day, rule id (sanitised), diagnosis id. */
const KEPT_LOG_NAME = /^\d{8}-[A-Za-z0-9_-]{1,60}-[A-Za-z0-9_-]{16}\.log$/;

/**
 * A kept log's path as read back from the database, if it is one the store could have written: absolute,
 * already resolved (no `..`), directly in the kept-logs folder, named as the store names them. Else null.
 */
export function keptLogInside(file: unknown, keptLogsDir: string): string | null {
  if (typeof file !== 'string' || file.length > 4096 || !isAbsolute(file)) return null;
  if (resolve(file) !== file || dirname(file) !== resolve(keptLogsDir)) return null;
  return KEPT_LOG_NAME.test(basename(file)) ? file : null;
}

/**
 * Report items with each stored path put through keptLogInside, as retention does before a delete: a
 * path that is not a kept log in `keptLogsDir` is not shown (logFile null) and the item says it was refused.
 */
export function checkedKeptLogs(items: readonly FeedbackReportItem[], keptLogsDir: string): FeedbackReportItem[] {
  return items.map((i) => {
    if (i.logFile === null || i.logFile === undefined) return i;
    return keptLogInside(i.logFile, keptLogsDir) === null ? { ...i, logFile: null, logRefused: true } : i;
  });
}

/** The path a kept log gets in `logsDir` (0700), written 0600 and never over another file. */
export function keptLogPath(logsDir: string, id: string, rule: string | null, ts: number): string {
  const day = new Date(ts).toISOString().slice(0, 10).replace(/-/g, '');
  // The name is built from our own id and the rule id (a known rule's, or "unmatched"): nothing typed by a user.
  return join(logsDir, `${day}-${(rule ?? 'unmatched').replace(/[^a-z0-9-]/gi, '_').slice(0, 60)}-${id}.log`);
}

export function writeKeptLog(logsDir: string, id: string, rule: string | null, text: string, ts: number, path = keptLogPath(logsDir, id, rule, ts)): string {
  ensurePrivateDir(logsDir);
  writeFileSync(path, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  return path;
}
