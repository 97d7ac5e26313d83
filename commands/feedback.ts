// /gpu feedback up|down [ID]: 👍 / 👎 on a diagnosis (the buttons under every diagnosis send this; with
// no ID, your last one). /gpu feedback [list] [--days N] (admins): the last N days' (7) 👎 and logs no
// rule matched, votes per rule, and the kept logs' files (feedback.keep_logs) to turn into rules.
import { z } from 'zod';
import { defineCommand, type CommandContext } from '../src/core/command.js';
import type { FeedbackReport, VoteResult } from '../src/core/feedback.js';
import { textReply, type Reply, type ReplySection } from '../src/core/reply.js';

export const DEFAULT_FEEDBACK_DAYS = 7;
const USAGE = 'feedback list [--days N]|up [ID]|down [ID]';
/** Rows of the "needs a look" table in chat; the per-rule counts cover everything. */
const MAX_ROWS = 40;

export default defineCommand({
  name: 'feedback',
  summary: '👍 / 👎 on a diagnosis (your last one without ID); admins: list the 👎 and unmatched logs',
  usage: USAGE,
  options: z
    .object({
      _: z
        .array(z.string().max(100).describe('The diagnosis id from its buttons (default: your last diagnosis)'))
        .max(2, `feedback up|down [ID], or feedback list [--days N]`)
        .refine((w) => w.length === 0 || ['list', 'up', 'down'].includes(w[0]), 'feedback up|down [ID], or feedback list [--days N]')
        .refine((w) => w.length < 2 || w[0] !== 'list', 'feedback list takes no ID (--days N picks the window)'),
      days: z.coerce.number().int('days: a whole number').min(1, 'days: 1-90').max(90, 'days: 1-90').optional().describe('How many days back (default 7)'),
    })
    .passthrough(),
  // Votes are everyone's; the list (kept logs' paths, everyone's votes) is the admins'.
  requiresAdmin: (o) => !['up', 'down'].includes(o._[0] ?? 'list'),
  run({ _: words, days }, ctx) {
    return Promise.resolve(answer(words, days, ctx));
  },
});

function answer(words: string[], days: number | undefined, ctx: CommandContext): Reply {
  const store = ctx.services.feedback;
  const action = words[0] ?? 'list';
  if (!store) return textReply('Feedback is off', 'This bot keeps no feedback store (it runs without a data directory).', 'info');
  if (action === 'up' || action === 'down') {
    if (days !== undefined) return textReply(`Usage: /gpu ${USAGE}`, '--days goes with feedback list', 'warning');
    return voteReply(store.vote({ id: words[1], platform: ctx.platform, userId: ctx.userId, vote: action }));
  }
  // The registry refuses non-admins before this (requiresAdmin); checked again so the list never leaks.
  if (!ctx.isAdmin)
    return { title: 'That needs an admin', severity: 'warning', visibility: 'asker', sections: [{ text: "Only the bot's admins can list feedback." }] };
  return reportReply(store.report(days ?? DEFAULT_FEEDBACK_DAYS));
}

function voteReply(r: VoteResult): Reply {
  if (!r.ok) {
    return r.reason === 'none'
      ? {
          title: 'No diagnosis to vote on',
          severity: 'warning',
          visibility: 'asker',
          sections: [{ text: 'You have no diagnosis here yet: paste a training log first, then vote with its buttons or `/gpu feedback up|down`.' }],
        }
      : {
          title: 'Unknown diagnosis',
          severity: 'warning',
          visibility: 'asker',
          sections: [{ text: 'I have no diagnosis with that id (it may be older than the feedback kept, or from elsewhere). Nothing was recorded.' }],
        };
  }
  const what = r.rule ? `rule ${r.rule}` : 'a log no rule matched';
  const changed = r.previous && r.previous !== r.vote ? ` (changed from ${r.previous === 'up' ? '👍' : '👎'})` : r.previous ? ' (already recorded)' : '';
  const sections: ReplySection[] = [
    { text: `Recorded ${r.vote === 'up' ? '👍' : '👎'} for ${what}${changed}. One vote per person: voting again replaces it.` },
  ];
  if (r.vote === 'down')
    sections.push({ text: r.keptLog ? 'The log was kept (redacted) for the admins to improve the rules.' : "The admins see it in this week's feedback list." });
  return { title: 'Thanks for the feedback', severity: 'ok', visibility: 'asker', sections };
}

const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

export function reportReply(r: FeedbackReport): Reply {
  const sections: ReplySection[] = [];
  const total = r.rules.reduce((n, x) => n + x.diagnoses, 0);
  if (total === 0)
    return { title: `Feedback, last ${r.days} days`, severity: 'info', visibility: 'asker', sections: [{ text: 'No diagnoses in this window.' }] };
  sections.push({
    heading: 'Votes per rule',
    table: { columns: ['Rule', 'Diagnoses', '👍', '👎'], rows: r.rules.map((x) => [x.rule ?? '(no rule)', String(x.diagnoses), String(x.up), String(x.down)]) },
  });
  if (r.items.length) {
    const rows = r.items
      .slice(0, MAX_ROWS)
      .map((i) => [
        when(i.ts),
        i.rule ?? '(no rule)',
        i.rule ? `${i.up}/${i.down}` : i.down || i.up ? `${i.up}/${i.down}` : '-',
        i.logFile ?? (r.keepLogs ? 'not kept' : 'off'),
      ]);
    sections.push({ heading: `👎 and unmatched (${r.items.length})`, table: { columns: ['When (UTC)', 'Rule', '👍/👎', 'Kept log'], rows } });
    if (r.items.length > MAX_ROWS) sections.push({ text: `${r.items.length - MAX_ROWS} more not shown; \`gpu-doctor feedback list --json\` lists them all.` });
  } else sections.push({ text: 'No 👎 and no unmatched logs in this window.' });
  sections.push({
    text: r.keepLogs
      ? 'Turn a kept log into a rule: `gpu-doctor knowledge new RULE-ID --from FILE`.'
      : 'Logs are not kept (`feedback.keep_logs: false`): set it to true to keep unmatched and 👎 logs, redacted.',
  });
  return { title: `Feedback, last ${r.days} days`, severity: 'info', visibility: 'asker', sections };
}
