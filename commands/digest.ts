// /gpu digest: a leak digest now, from the leak watch's recent samples.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';

export default defineCommand({
  name: 'digest',
  summary: 'Leak watch digest now: leaking, rank-0 growth, host RAM creep and idle held memory',
  usage: 'digest',
  options: z.object({ _: z.array(z.string()).max(0).default([]) }).passthrough(),
  async run(_opts, ctx) {
    if (!ctx.services.watch) return { title: 'Leak watch', severity: 'info', sections: [{ text: 'leak watch is not enabled in the config' }] };
    return ctx.services.watch.digestNow();
  },
});
