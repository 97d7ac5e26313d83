// /gpu chart HOST [GPU|all] [hours]: one GPU's recent memory as a PNG (per process, total, capacity, and the
// fitted creep when the detector finds one), or every GPU of the host as panels, without waiting for a digest.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t } from '../src/core/i18n.js';
import { schemaMessage } from '../src/core/message.js';
import { HOST_NAME } from '../src/hosts/registry.js';

export const DEFAULT_CHART_HOURS = 6;

export default defineCommand({
  name: 'chart',
  summary: t('en', 'cmd.chart.summary'),
  usage: 'chart HOST [GPU] [hours] [--theme light|dark]',
  options: z
    .object({
      _: z.tuple([
        // The name is echoed in the reply and the file name: the registry's syntax and nothing else.
        z.string().regex(HOST_NAME, schemaMessage('usage.hostName')),
        // A GPU's index, or `all`: every GPU of the host, a panel each.
        z
          .union([
            z.literal('all'),
            z.coerce
              .number()
              .int(schemaMessage('usage.gpuIndex.int'))
              .min(0, schemaMessage('usage.gpuIndex.range'))
              .max(63, schemaMessage('usage.gpuIndex.range')),
          ])
          .describe(t('en', 'slash.arg.gpuOrAll'))
          .optional(),
        z.coerce
          .number()
          .min(1, schemaMessage('usage.hours.range', { max: 168 }))
          .max(168, schemaMessage('usage.hours.week', { max: 168 }))
          .optional(),
      ]),
      theme: z.enum(['light', 'dark']).optional(),
    })
    .passthrough(),
  async run({ _: [host, gpu, hours], theme }, ctx) {
    if (!ctx.services.watch)
      return { title: t(ctx.locale, 'common.noWatch.title'), severity: 'info', sections: [{ text: t(ctx.locale, 'common.noWatch.text') }] };
    return ctx.services.watch.chartHost({
      host,
      gpu,
      hours: hours ?? DEFAULT_CHART_HOURS,
      theme,
      platform: ctx.platform,
      channel: ctx.channelId,
      locale: ctx.locale,
    });
  },
});
