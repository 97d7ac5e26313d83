// The weekly feedback list (issue 14 §5, config `feedback.weekly`): once a week, on the digests' clock (the
// same DigestScheduler, catch-up after a restart and digest_runs record, so never missed and never posted
// twice), the admins' channel gets the last 7 days' 👍 / 👎 per rule and the kept logs: each one's id, rule
// (or "no rule"), votes, one redacted line of it, and the `gpu-doctor knowledge new` line that turns it into
// a rule. A week with no vote and no log that matched no rule posts one short line, so a silent week is
// told apart from a bot that stopped posting. Only that channel gets it: the config refuses a weekly
// channel that a leak digest also posts to, and nothing else posts this reply.
// The rows come from a database another replica (or anyone with access to it) may have written: a kept log's
// path is listed only when it is a name the store gives, directly in the kept-logs folder (else the row is
// named as skipped), it is read without following a link and at most its last 256 KiB, every line quoted from
// it is redacted again, and every value in the shell line admins paste is shell-quoted.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { FEEDBACK_WEEKLY_NAME, type feedbackWeeklySchema } from '../core/config.js';
import { FEEDBACK_ID, type FeedbackReport, type FeedbackService } from '../core/feedback.js';
import { t, type Locale } from '../core/i18n.js';
import type { Reply, ReplySection } from '../core/reply.js';
import { finalError } from '../diagnose/final-error.js';
import { LogText, normalizeLog } from '../diagnose/normalize.js';
import { DigestScheduler, type PostMessage, type ScheduledPost } from '../watch/scheduler.js';
import type { WatchState } from '../watch/state.js';
import { redactLog, scrubBareSecrets } from './redact.js';
import { keptLogInside } from './storage.js';
import type { z } from 'zod';

export type FeedbackWeeklyConfig = z.infer<typeof feedbackWeeklySchema>;

export const WEEK_DAYS = 7;
/** Kept logs listed in one post (the rest: `gpu-doctor feedback list`); rows of the votes table. */
export const MAX_KEPT = 15;
const MAX_RULE_ROWS = 30;
const EXCERPT_CHARS = 120;
/** What of a kept file is read for its line: its end holds the last error (the store keeps at most 256 KiB). */
const READ_BYTES = 256 * 1024;

/**
 * One line of a kept log: its last error line (the one `knowledge new` builds the pattern from), else its
 * first non-blank line; redacted again, the whole text first (a key block spans lines) and then the line
 * (the file was redacted when kept, perhaps by an older rule set), runs that look like a key body gone,
 * control characters gone, cut.
 */
export function excerptOf(text: string): string {
  const log = new LogText(normalizeLog(redactLog(text, READ_BYTES)));
  const last = finalError(log);
  let line = last ? log.line(last.line) : undefined;
  // As `knowledge new` looks for it: the last line that reads like an error, else the first line.
  for (let i = log.lineCount - 1; !line?.trim() && i >= 0; i--) if (/error|killed|out of memory|failed/i.test(log.line(i))) line = log.line(i);
  for (let i = 0; !line?.trim() && i < log.lineCount; i++) if (!/^\[\.\.\. earlier lines not kept/.test(log.line(i))) line = log.line(i);
  const clean = scrubBareSecrets(redactLog(line ?? '', 4096))
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return clean.length > EXCERPT_CHARS ? clean.slice(0, EXCERPT_CHARS - 1) + '…' : clean;
}

/** The last `maxBytes` of a regular file, read without following a link; null when it is gone or not a plain file. */
export function readTail(file: string, maxBytes = READ_BYTES): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const size = Math.min(st.size, maxBytes);
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, st.size - size + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** A kept file's line, or '' when it is gone (pruned, or removed by hand). */
function excerptOfFile(file: string): string {
  const text = readTail(file);
  return text === null ? '' : excerptOf(text);
}

/** A word for a POSIX shell: as it is when it holds only safe characters, else in single quotes. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A day in the schedule's time zone, as 2026-11-23. */
const day = (ms: number, timeZone: string) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

export interface WeeklyOptions {
  /** The folder kept logs are written to (the store's logsDir): a path read back from elsewhere is not listed. */
  keptLogsDir: string;
  locale?: Locale;
  timeZone?: string;
  /** One line of a kept log file (tests may give their own). */
  excerpt?: (file: string) => string;
}

/** The week's report as the admins' channel gets it. */
export function weeklyFeedbackReply(r: FeedbackReport, now: number, o: WeeklyOptions): Reply {
  const loc = o.locale;
  const tz = o.timeZone ?? 'UTC';
  const title = t(loc, 'feedback.weekly.title', { from: day(r.sinceMs, tz), to: day(now, tz) });
  const diagnoses = r.rules.reduce((n, x) => n + x.diagnoses, 0);
  const votes = r.rules.reduce((n, x) => n + x.up + x.down, 0);
  if (votes === 0 && !r.items.some((i) => i.rule === null))
    return { title, severity: 'info', sections: [{ text: t(loc, 'feedback.weekly.empty', { n: diagnoses }) }] };
  const noRule = t(loc, 'feedback.report.noRule');
  const sections: ReplySection[] = [
    {
      heading: t(loc, 'feedback.report.votes'),
      table: {
        columns: [t(loc, 'feedback.report.col.rule'), t(loc, 'feedback.report.col.diagnoses'), '👍', '👎'],
        rows: r.rules.slice(0, MAX_RULE_ROWS).map((x) => [x.rule ?? noRule, String(x.diagnoses), String(x.up), String(x.down)]),
      },
    },
  ];
  const withFile = r.items.filter((i) => i.logFile !== null || i.logRefused);
  // A path the store could not have written (a changed row): the row is named, its path never used.
  const kept = withFile.filter((i) => FEEDBACK_ID.test(i.id) && keptLogInside(i.logFile, o.keptLogsDir) !== null);
  const skipped = withFile.filter((i) => !kept.includes(i)).map((i) => (FEEDBACK_ID.test(i.id) ? i.id : '?'));
  const shown = kept.slice(0, MAX_KEPT);
  if (shown.length) {
    const excerpt = o.excerpt ?? excerptOfFile;
    sections.push({
      heading: t(loc, 'feedback.weekly.kept', { n: kept.length }),
      table: {
        columns: [t(loc, 'feedback.weekly.col.id'), t(loc, 'feedback.report.col.rule'), '👍/👎', t(loc, 'feedback.weekly.col.excerpt')],
        rows: shown.map((i) => [i.id, i.rule ?? noRule, `${i.up}/${i.down}`, excerpt(i.logFile!)]),
      },
    });
    sections.push({
      text: t(loc, 'feedback.weekly.toRule'),
      code: shown.map((i) => `gpu-doctor knowledge new RULE-ID --from ${shellQuote(i.logFile!)}`).join('\n'),
    });
    if (kept.length > shown.length) sections.push({ text: t(loc, 'feedback.weekly.more', { n: kept.length - shown.length }) });
  } else sections.push({ text: r.keepLogs ? t(loc, 'feedback.weekly.noKept') : t(loc, 'feedback.report.offHint') });
  if (skipped.length)
    sections.push({ text: t(loc, 'feedback.weekly.badPath', { n: skipped.length, ids: skipped.slice(0, MAX_KEPT).join(', '), dir: o.keptLogsDir }) });
  const unkept = r.items.length - withFile.length;
  if (unkept > 0 && r.keepLogs) sections.push({ text: t(loc, 'feedback.weekly.notKept', { n: unkept }) });
  return { title, severity: 'info', sections };
}

/** The weekly list as one more schedule of the DigestScheduler (its name is its digest_runs record). */
export function feedbackWeeklyPost(
  store: Pick<FeedbackService, 'report'> & { readonly logsDir: string },
  cfg: FeedbackWeeklyConfig,
  locale?: Locale,
): ScheduledPost {
  return {
    name: FEEDBACK_WEEKLY_NAME,
    platform: cfg.platform,
    channel: cfg.channel,
    cron: cfg.cron,
    timezone: cfg.timezone,
    compose: async (now) => weeklyFeedbackReply(await store.report(WEEK_DAYS, now), now, { keptLogsDir: store.logsDir, locale, timeZone: cfg.timezone }),
  };
}

/**
 * The weekly list when the leak watch is off: the same DigestScheduler over the watch state's digest runs
 * (opened for that record only), started once the chat adapters give it somewhere to post, so a week missed
 * while the bot was down is posted on start, once. Where replicas share the state (Postgres) each week's
 * slot is claimed by one replica (as the digests are), so two replicas post it once.
 */
export class FeedbackWeeklySchedule {
  readonly scheduler: DigestScheduler;
  private post: PostMessage | null = null;
  private started: Promise<string[]> | null = null;

  constructor(
    private store: Pick<WatchState, 'digestRuns' | 'findingsInput' | 'close'>,
    weekly: ScheduledPost,
    private onError: (e: unknown) => void = () => {},
  ) {
    this.scheduler = new DigestScheduler(
      store,
      [],
      (d, r) => (this.post ? this.post(d, r) : Promise.reject(new Error('nothing to post to'))),
      undefined,
      {},
      onError,
    );
    this.scheduler.add(weekly);
  }

  /** The adapters' poster; the first one starts the schedule (catch-up, then the cron job). */
  setPoster(post: PostMessage): Promise<string[]> {
    this.post = post;
    return (this.started ??= this.scheduler.start().catch((e: unknown) => {
      this.onError(e);
      return [];
    }));
  }

  stop(): void {
    this.scheduler.stop();
    this.store.close();
  }
}
