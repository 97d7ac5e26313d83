// /gpu fit SIZE [count] [hours] [--shared]: where a job needing SIZE of GPU memory per GPU fits now, best
// first, with the line to start it; when nothing fits, what is closest and who holds it. Reads the same
// live status as /gpu status (read-only, the service's timeouts) and the leak watch's growth rates.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t } from '../src/core/i18n.js';
import { issueWith, render, schemaMessage } from '../src/core/message.js';
import { textReply } from '../src/core/reply.js';
import { joinSizeWords } from '../src/core/size.js';
import { MAX_COUNT, MAX_HOURS, parseSize } from '../src/fleet/args.js';
import { DEFAULT_FIT_SETTINGS, rankFits, sshHint, type GpuGrowth } from '../src/fleet/fit.js';
import { ownUsersOf } from '../src/fleet/notify.js';
import { fitReply } from '../src/fleet/render.js';

/** The growth rates are extra: the answer never waits longer than this for them. */
const GROWTH_TIMEOUT_MS = 10_000;

export default defineCommand({
  name: 'fit',
  summary: t('en', 'cmd.fit.summary'),
  usage: 'fit SIZE [count] [hours] [--shared]',
  options: z
    .object({
      // `fit 40 G 2` as `fit 40G 2`: a number and a bare unit are one size.
      _: z.preprocess(
        (w) => (Array.isArray(w) ? joinSizeWords(w as string[]) : w),
        z.tuple([
          z
            .string()
            .max(32)
            .superRefine((s, ctx) => {
              const r = parseSize(s);
              if ('error' in r) ctx.addIssue(issueWith(r.error));
            }),
          z.coerce
            .number()
            .int(schemaMessage('usage.count.int', { max: MAX_COUNT }))
            .min(1, schemaMessage('usage.count.range', { max: MAX_COUNT }))
            .max(MAX_COUNT, schemaMessage('usage.count.range', { max: MAX_COUNT }))
            .optional(),
          z.coerce
            .number()
            .min(1, schemaMessage('usage.hours.range', { max: MAX_HOURS }))
            .max(MAX_HOURS, schemaMessage('usage.hours.week', { max: MAX_HOURS }))
            .optional(),
        ]),
      ),
      shared: z.boolean().optional(),
    })
    .passthrough(),
  async run({ _: [size, count, hours], shared }, ctx) {
    const hosts = ctx.services.hosts;
    if (!hosts) return textReply(t(ctx.locale, 'common.noHosts.title'), t(ctx.locale, 'common.noHosts.text'), 'error');
    const parsed = parseSize(size);
    if ('error' in parsed)
      return textReply(t(ctx.locale, 'registry.usage.title', { usage: 'fit SIZE [count] [hours]' }), render(ctx.locale, parsed.error), 'warning');
    const settings = ctx.services.fit ?? { ...DEFAULT_FIT_SETTINGS, maxNotifyPerUser: 3 };
    const [status, list, growth] = await Promise.all([hosts.status([]), hosts.list(), growthWithin(ctx.services.watch?.gpuGrowth?.())]);
    const targets = new Map(list.map((h) => [h.name, sshHint(h.target)]));
    const result = rankFits(
      status,
      { sizeMiB: parsed.mib, count: count ?? 1, hours: hours ?? 1, shared: shared === true, ownUsers: ownUsersOf(ctx.platform, ctx.userId) },
      settings,
      growth ?? [],
      (h) => targets.get(h) ?? null,
    );
    const reply = fitReply(result, size, ctx.locale);
    if (growth === null && ctx.services.watch)
      reply.footer = `${reply.footer ?? ''} ${t(ctx.locale, 'fit.growthLate', { s: GROWTH_TIMEOUT_MS / 1000 })}`.trim();
    return reply;
  },
});

/** The growth rates, or null when they fail or take longer than GROWTH_TIMEOUT_MS. */
async function growthWithin(p: Promise<GpuGrowth[]> | undefined): Promise<GpuGrowth[] | null> {
  if (!p) return [];
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), GROWTH_TIMEOUT_MS)));
  try {
    return await Promise.race([p.catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}
