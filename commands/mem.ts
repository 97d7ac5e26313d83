// /gpu mem [HOST...]: host RAM total / used / available / swap, warning under 10% available.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t } from '../src/core/i18n.js';
import { memReply } from '../src/hosts/render.js';

export default defineCommand({
  name: 'mem',
  summary: t('en', 'cmd.mem.summary'),
  usage: 'mem [HOST...]',
  options: z.object({ _: z.array(z.string()).max(64).default([]) }).passthrough(),
  async run({ _: hosts }, ctx) {
    if (!ctx.services.hosts)
      return { title: t(ctx.locale, 'common.noHosts.title'), severity: 'error', sections: [{ text: t(ctx.locale, 'common.noHosts.text') }] };
    return memReply(await ctx.services.hosts.mem(hosts), ctx.locale);
  },
});
