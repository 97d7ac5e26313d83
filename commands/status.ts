// /gpu status [HOST...]: per host, per GPU: memory with a bar, utilisation, temperature, processes.
// Over many hosts it shows progress while they answer ("12 of 24 hosts answered…"), then the tables.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t } from '../src/core/i18n.js';
import { statusProgressReply, statusReply } from '../src/hosts/render.js';

export default defineCommand({
  name: 'status',
  summary: t('en', 'cmd.status.summary'),
  usage: 'status [HOST...]',
  options: z.object({ _: z.array(z.string()).max(64).default([]) }).passthrough(),
  async run({ _: hosts }, ctx) {
    if (!ctx.services.hosts)
      return { title: t(ctx.locale, 'common.noHosts.title'), severity: 'error', sections: [{ text: t(ctx.locale, 'common.noHosts.text') }] };
    const progress = ctx.progress;
    const onProgress = progress
      ? (answered: Parameters<typeof statusProgressReply>[0], asked: readonly string[]) => void progress(statusProgressReply(answered, asked, ctx.locale))
      : undefined;
    return statusReply(await ctx.services.hosts.status(hosts, onProgress), ctx.services.owners, ctx.locale);
  },
});
