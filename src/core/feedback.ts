// 👍 / 👎 on diagnoses, platform-neutral. A diagnosis reply carries `feedback: { id }`, the opaque id of
// a stored record (rule, category, when, where, a hash of who asked); adapters turn it into buttons
// (Slack actions block, Discord button row) or a hint (console), and a click comes back as the
// command line `/gpu feedback up|down ID`. The store (src/feedback/storage.ts) looks every id up: a
// button's value is never trusted.

export type Vote = 'up' | 'down';

/** What an id looks like (16 characters of base64url); anything else is unknown without a lookup. */
export const FEEDBACK_ID = /^[A-Za-z0-9_-]{16}$/;

export interface DiagnosisRecordInput {
  platform: string;
  userId: string;
  channelId?: string;
  /** The best diagnosis's rule, or null when no rule matched. */
  rule: string | null;
  category: string | null;
  /** The log as read; kept (redacted) only when the config opts in. */
  log: string;
}

export type VoteResult =
  | { ok: true; id: string; vote: Vote; previous: Vote | null; rule: string | null; category: string | null; ts: number; keptLog: string | null }
  | { ok: false; reason: 'unknown' | 'none' };

export interface FeedbackReportRule {
  /** null: logs no rule matched. */
  rule: string | null;
  category: string | null;
  diagnoses: number;
  up: number;
  down: number;
}

export interface FeedbackReportItem {
  id: string;
  ts: number;
  platform: string;
  rule: string | null;
  category: string | null;
  up: number;
  down: number;
  /** The kept, redacted log (absolute path), when feedback.keep_logs was on. */
  logFile: string | null;
  /** The stored path was not a kept log in this bot's kept-logs folder (a changed row): not shown, logFile is null. */
  logRefused?: true;
}

export interface FeedbackReport {
  days: number;
  sinceMs: number;
  keepLogs: boolean;
  /** Every rule (and "no rule") diagnosed in the window, with its votes. */
  rules: FeedbackReportRule[];
  /** Diagnoses in the window with a 👎, or that matched no rule: newest first. */
  items: FeedbackReportItem[];
}

/**
 * The SQLite store (src/storage/sqlite/feedback.ts) answers at once; the Postgres one that replicas share
 * (src/storage/postgres/feedback.ts) with a promise: callers await either.
 */
export interface FeedbackService {
  /** Stores a diagnosis (and, when opted in, its redacted log); returns its opaque id. */
  record(input: DiagnosisRecordInput, now?: number): string | Promise<string>;
  /** One vote per user per diagnosis (a second one replaces it). No id: the user's last diagnosis on that platform. */
  vote(request: { id?: string; platform: string; userId: string; vote: Vote }, now?: number): VoteResult | Promise<VoteResult>;
  report(days: number, now?: number): FeedbackReport | Promise<FeedbackReport>;
}

/**
 * Records a diagnosis for 👍 / 👎 and returns the id to put on its reply, or undefined (no store, the
 * CLI, or a store error: the diagnosis is answered without buttons rather than not at all).
 */
export async function recordDiagnosis(
  // The command's context (CommandContext) as far as recording needs it: core/command.ts imports this file's types.
  ctx: { platform: string; userId: string; channelId?: string; services: { feedback?: FeedbackService } },
  d: { rule: string | null; category: string | null },
  log: string,
): Promise<string | undefined> {
  const store = ctx.services.feedback;
  if (!store || ctx.platform === 'cli') return undefined;
  try {
    return await store.record({ platform: ctx.platform, userId: ctx.userId, channelId: ctx.channelId, rule: d.rule, category: d.category, log });
  } catch {
    return undefined;
  }
}

/** The command line a button click stands for; an id of any other shape becomes one that is never found. */
export function feedbackLine(vote: Vote, id: unknown): string {
  return `/gpu feedback ${vote} ${typeof id === 'string' && FEEDBACK_ID.test(id) ? id : 'not-an-id'}`;
}
