// /gpu feedback up|down [ID]: 👍 / 👎 on a diagnosis (the buttons under every diagnosis send this; with
// no ID, your last one). /gpu feedback [list] [--days N] (admins): the last N days' (7) 👎 and logs no
// rule matched, votes per rule, and the kept logs' files (feedback.keep_logs) to turn into rules.
import { z } from 'zod';
import { defineCommand, type CommandContext } from '../src/core/command.js';
import type { FeedbackReport, VoteResult } from '../src/core/feedback.js';
import { t, type Locale } from '../src/core/i18n.js';
import { schemaMessage } from '../src/core/message.js';
import { textReply, type Reply, type ReplySection } from '../src/core/reply.js';

export const DEFAULT_FEEDBACK_DAYS = 7;
const USAGE = 'feedback list [--days N]|up [ID]|down [ID]';
/** Rows of the "needs a look" table in chat; the per-rule counts cover everything. */
const MAX_ROWS = 40;

export default defineCommand({
  name: 'feedback',
  summary: t('en', 'cmd.feedback.summary'),
  usage: USAGE,
  options: z
    .object({
      _: z
        .array(z.string().max(100).describe(t('en', 'slash.arg.feedbackId')))
        .max(2, schemaMessage('usage.feedback.words'))
        .refine((w) => w.length === 0 || ['list', 'up', 'down'].includes(w[0]), schemaMessage('usage.feedback.words'))
        .refine((w) => w.length < 2 || w[0] !== 'list', schemaMessage('usage.feedback.listNoId')),
      days: z.coerce
        .number()
        .int(schemaMessage('usage.days.int'))
        .min(1, schemaMessage('usage.days.range'))
        .max(90, schemaMessage('usage.days.range'))
        .optional()
        .describe(t('en', 'slash.arg.days')),
    })
    .passthrough(),
  // Votes are everyone's; the list (kept logs' paths, everyone's votes) is the admins'.
  requiresAdmin: (o) => !['up', 'down'].includes(o._[0] ?? 'list'),
  run({ _: words, days }, ctx) {
    return answer(words, days, ctx);
  },
});

async function answer(words: string[], days: number | undefined, ctx: CommandContext): Promise<Reply> {
  const store = ctx.services.feedback;
  const action = words[0] ?? 'list';
  const loc = ctx.locale;
  if (!store) return textReply(t(loc, 'feedback.off.title'), t(loc, 'feedback.off.text'), 'info');
  if (action === 'up' || action === 'down') {
    if (days !== undefined) return textReply(t(loc, 'registry.usage.title', { usage: USAGE }), t(loc, 'feedback.daysWithList'), 'warning');
    return voteReply(await store.vote({ id: words[1], platform: ctx.platform, userId: ctx.userId, vote: action }), loc);
  }
  // The registry refuses non-admins before this (requiresAdmin); checked again so the list never leaks.
  if (!ctx.isAdmin)
    return { title: t(loc, 'registry.denied.title'), severity: 'warning', visibility: 'asker', sections: [{ text: t(loc, 'feedback.denied.text') }] };
  return reportReply(await store.report(days ?? DEFAULT_FEEDBACK_DAYS), loc);
}

function voteReply(r: VoteResult, loc: Locale | undefined): Reply {
  if (!r.ok) {
    return r.reason === 'none'
      ? {
          title: t(loc, 'feedback.none.title'),
          severity: 'warning',
          visibility: 'asker',
          sections: [{ text: t(loc, 'feedback.none.text') }],
        }
      : {
          title: t(loc, 'feedback.unknown.title'),
          severity: 'warning',
          visibility: 'asker',
          sections: [{ text: t(loc, 'feedback.unknown.text') }],
        };
  }
  const what = r.rule ? t(loc, 'feedback.what.rule', { rule: r.rule }) : t(loc, 'feedback.what.noRule');
  const changed =
    r.previous && r.previous !== r.vote
      ? t(loc, 'feedback.changed', { vote: r.previous === 'up' ? '👍' : '👎' })
      : r.previous
        ? t(loc, 'feedback.already')
        : '';
  const sections: ReplySection[] = [{ text: t(loc, 'feedback.recorded', { vote: r.vote === 'up' ? '👍' : '👎', what, changed }) }];
  if (r.vote === 'down') sections.push({ text: r.keptLog ? t(loc, 'feedback.keptLog') : t(loc, 'feedback.notKept') });
  return { title: t(loc, 'feedback.thanks'), severity: 'ok', visibility: 'asker', sections };
}

const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

export function reportReply(r: FeedbackReport, loc?: Locale): Reply {
  const sections: ReplySection[] = [];
  const total = r.rules.reduce((n, x) => n + x.diagnoses, 0);
  if (total === 0)
    return {
      title: t(loc, 'feedback.report.title', { days: r.days }),
      severity: 'info',
      visibility: 'asker',
      sections: [{ text: t(loc, 'feedback.report.empty') }],
    };
  sections.push({
    heading: t(loc, 'feedback.report.votes'),
    table: {
      columns: [t(loc, 'feedback.report.col.rule'), t(loc, 'feedback.report.col.diagnoses'), '👍', '👎'],
      rows: r.rules.map((x) => [x.rule ?? t(loc, 'feedback.report.noRule'), String(x.diagnoses), String(x.up), String(x.down)]),
    },
  });
  if (r.items.length) {
    const rows = r.items
      .slice(0, MAX_ROWS)
      .map((i) => [
        when(i.ts),
        i.rule ?? t(loc, 'feedback.report.noRule'),
        i.rule ? `${i.up}/${i.down}` : i.down || i.up ? `${i.up}/${i.down}` : '-',
        i.logFile ?? (i.logRefused ? t(loc, 'feedback.report.refused') : r.keepLogs ? t(loc, 'feedback.report.notKept') : t(loc, 'feedback.report.off')),
      ]);
    sections.push({
      heading: t(loc, 'feedback.report.items', { n: r.items.length }),
      table: { columns: [t(loc, 'feedback.report.col.when'), t(loc, 'feedback.report.col.rule'), '👍/👎', t(loc, 'feedback.report.col.kept')], rows },
    });
    if (r.items.length > MAX_ROWS) sections.push({ text: t(loc, 'feedback.report.more', { n: r.items.length - MAX_ROWS }) });
  } else sections.push({ text: t(loc, 'feedback.report.noItems') });
  sections.push({
    text: r.keepLogs ? t(loc, 'feedback.report.keepHint') : t(loc, 'feedback.report.offHint'),
  });
  return { title: t(loc, 'feedback.report.title', { days: r.days }), severity: 'info', visibility: 'asker', sections };
}
