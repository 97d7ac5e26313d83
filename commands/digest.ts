// /gpu digest: a leak digest now, from the leak watch's recent samples.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t } from '../src/core/i18n.js';

export default defineCommand({
  name: 'digest',
  summary: t('en', 'cmd.digest.summary'),
  usage: 'digest',
  options: z.object({ _: z.array(z.string()).max(0).default([]) }).passthrough(),
  async run(_opts, ctx) {
    if (!ctx.services.watch)
      return { title: t(ctx.locale, 'common.noWatch.title'), severity: 'info', sections: [{ text: t(ctx.locale, 'common.noWatch.text') }] };
    return ctx.services.watch.digestNow(ctx.locale);
  },
});
