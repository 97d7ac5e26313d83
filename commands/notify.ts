// /gpu notify SIZE [count] [for 12h]: one direct message when a job needing SIZE per GPU fits (with the
// line to start it), or one when the wait runs out; `notify list` and `notify cancel ID` manage them.
// Kept in the leak watch's store and checked after each of its sampler rounds, so it needs the watch.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { textReply, type Reply } from '../src/core/reply.js';
import type { NotifySubscription } from '../src/core/services.js';
import { formatMiB, parseNotifyWords } from '../src/fleet/args.js';

const USAGE = 'notify add SIZE [count] [hours] [--shared]|list|cancel ID';

export default defineCommand({
  name: 'notify',
  summary: 'One direct message when a job needing SIZE of GPU memory fits (notify 40G 2 for 12h), or when the wait ends',
  usage: USAGE,
  options: z
    .object({
      // `notify 40G 2 for 12h` reads like `notify add 40G 2 12h`: the words are read by parseNotifyWords.
      _: z.array(z.string().max(32)).min(1, 'notify SIZE [count] [for 12h], notify list or notify cancel ID').max(6),
      shared: z.boolean().optional(),
    })
    .passthrough()
    .superRefine((o, ctx) => {
      const r = parseNotifyWords(o._);
      if ('error' in r) ctx.addIssue({ code: 'custom', message: r.error });
      else if (o.shared && r.action !== 'add') ctx.addIssue({ code: 'custom', message: '--shared goes with notify SIZE' });
    }),
  async run(o, ctx) {
    const notify = ctx.services.watch?.notify;
    if (!notify) return textReply('Leak watch', 'notify needs the leak watch (watch.enabled in the config): it checks after each of its rounds.', 'info');
    const words = parseNotifyWords(o._);
    if ('error' in words) return textReply(`Usage: /gpu ${USAGE}`, words.error, 'warning');
    if (words.action === 'list') {
      const open = await notify.list(ctx.platform, ctx.userId);
      if (!open.length) return textReply('No open notify subscriptions', 'Start one with `/gpu notify 40G [count] [for 12h]`.', 'info');
      return { title: `${open.length} open notify subscription(s)`, severity: 'info', sections: [subscriptionTable(open)] };
    }
    if (words.action === 'cancel') {
      return (await notify.cancel(ctx.platform, ctx.userId, words.id))
        ? textReply(`Cancelled notify #${words.id}`, 'No message will come for it.', 'ok')
        : textReply(`No open subscription #${words.id} of yours`, '`/gpu notify list` shows yours.', 'warning');
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
    if (!r.ok) return { title: 'Not added', severity: 'warning', sections: [{ text: r.reason }, subscriptionTable(r.open)] };
    const s = r.subscription;
    const reply: Reply = {
      title: `Notify #${s.id}: ${describe(s)}`,
      severity: 'ok',
      sections: [
        {
          text: `You get one direct message when it fits (with the line to start it), or one at ${new Date(s.expiresMs).toISOString().slice(0, 16).replace('T', ' ')} UTC if it never does. Checked after every leak-watch round.`,
        },
      ],
      footer: `\`/gpu notify cancel ${s.id}\` stops it.`,
    };
    return reply;
  },
});

function describe(s: NotifySubscription): string {
  return `${s.size} (${formatMiB(s.sizeMiB)})${s.count > 1 ? ` on each of ${s.count} GPUs of one host` : ''}${s.shared ? ', shared GPUs too' : ''}`;
}

function subscriptionTable(open: NotifySubscription[]) {
  return {
    table: {
      columns: ['ID', 'Wants', 'Until (UTC)'],
      rows: open.map((s) => [String(s.id), describe(s), new Date(s.expiresMs).toISOString().slice(0, 16).replace('T', ' ')]),
    },
  };
}
