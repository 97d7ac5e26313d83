// /gpu notify SIZE [count] [for 12h]: one direct message when a job needing SIZE per GPU fits (with the
// line to start it), or one when the wait runs out; `notify list` and `notify cancel ID` manage them.
// Kept in the leak watch's store and checked after each of its sampler rounds, so it needs the watch.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t, type Locale } from '../src/core/i18n.js';
import { issueWith, message, render, schemaMessage } from '../src/core/message.js';
import { textReply, type Reply } from '../src/core/reply.js';
import type { NotifySubscription } from '../src/core/services.js';
import { formatMiB, parseNotifyWords } from '../src/fleet/args.js';

const USAGE = 'notify add SIZE [count] [hours] [--shared]|list|cancel ID';

export default defineCommand({
  name: 'notify',
  summary: t('en', 'cmd.notify.summary'),
  usage: USAGE,
  options: z
    .object({
      // `notify 40G 2 for 12h` reads like `notify add 40G 2 12h`: the words are read by parseNotifyWords.
      _: z.array(z.string().max(32)).min(1, schemaMessage('usage.notify.what')).max(6),
      shared: z.boolean().optional(),
    })
    .passthrough()
    .superRefine((o, ctx) => {
      const r = parseNotifyWords(o._);
      if ('error' in r) ctx.addIssue(issueWith(r.error));
      else if (o.shared && r.action !== 'add') ctx.addIssue(issueWith(message('usage.shared')));
    }),
  async run(o, ctx) {
    const loc = ctx.locale;
    const notify = ctx.services.watch?.notify;
    if (!notify) return textReply(t(loc, 'common.noWatch.title'), t(loc, 'notify.noWatch'), 'info');
    const words = parseNotifyWords(o._);
    if ('error' in words) return textReply(t(loc, 'registry.usage.title', { usage: USAGE }), render(loc, words.error), 'warning');
    if (words.action === 'list') {
      const open = await notify.list(ctx.platform, ctx.userId);
      if (!open.length) return textReply(t(loc, 'notify.none.title'), t(loc, 'notify.none.text'), 'info');
      return { title: t(loc, 'notify.list.title', { n: open.length }), severity: 'info', sections: [subscriptionTable(open, loc)] };
    }
    if (words.action === 'cancel') {
      return (await notify.cancel(ctx.platform, ctx.userId, words.id))
        ? textReply(t(loc, 'notify.cancelled.title', { id: words.id }), t(loc, 'notify.cancelled.text'), 'ok')
        : textReply(t(loc, 'notify.noSuch.title', { id: words.id }), t(loc, 'notify.noSuch.text'), 'warning');
    }
    const r = await notify.subscribe({
      platform: ctx.platform,
      userId: ctx.userId,
      sizeMiB: words.sizeMiB,
      size: words.size,
      count: words.count,
      shared: o.shared === true,
      hours: words.hours,
    });
    if (!r.ok)
      return { title: t(loc, 'notify.notAdded.title'), severity: 'warning', sections: [{ text: render(loc, r.reason) }, subscriptionTable(r.open, loc)] };
    const s = r.subscription;
    const reply: Reply = {
      title: t(loc, 'notify.added.title', { id: s.id, what: describe(s, loc) }),
      severity: 'ok',
      sections: [
        {
          text: t(loc, 'notify.added.text', { until: new Date(s.expiresMs).toISOString().slice(0, 16).replace('T', ' ') }),
        },
      ],
      footer: t(loc, 'notify.added.footer', { id: s.id }),
    };
    return reply;
  },
});

function describe(s: NotifySubscription, loc: Locale | undefined): string {
  const count = s.count > 1 ? t(loc, 'notify.describe.count', { n: s.count }) : '';
  return `${s.size} (${formatMiB(s.sizeMiB)})${count}${s.shared ? t(loc, 'notify.describe.shared') : ''}`;
}

function subscriptionTable(open: NotifySubscription[], loc: Locale | undefined) {
  return {
    table: {
      columns: [t(loc, 'notify.col.id'), t(loc, 'notify.col.wants'), t(loc, 'notify.col.until')],
      rows: open.map((s) => [String(s.id), describe(s, loc), new Date(s.expiresMs).toISOString().slice(0, 16).replace('T', ' ')]),
    },
  };
}
