// /gpu watch HOST: the live memory series of one host (per GPU process and host RAM) as sparklines.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t } from '../src/core/i18n.js';
import { schemaMessage } from '../src/core/message.js';
import { HOST_NAME } from '../src/hosts/registry.js';

export default defineCommand({
  name: 'watch',
  summary: t('en', 'cmd.watch.summary'),
  usage: 'watch HOST',
  // A host name in the registry's syntax, nothing else: the name is echoed in the reply, so chat markup
  // such as <!channel> must never get that far.
  options: z.object({ _: z.array(z.string().regex(HOST_NAME, schemaMessage('usage.hostName'))).length(1) }).passthrough(),
  async run({ _: [host] }, ctx) {
    if (!ctx.services.watch)
      return { title: t(ctx.locale, 'common.noWatch.title'), severity: 'info', sections: [{ text: t(ctx.locale, 'common.noWatch.text') }] };
    return ctx.services.watch.watchHost(host, ctx.locale);
  },
});
