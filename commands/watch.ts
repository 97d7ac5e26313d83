// /gpu watch HOST: the live memory series of one host (per GPU process and host RAM) as sparklines.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';

export default defineCommand({
  name: 'watch',
  summary: 'Live memory series of one host as sparklines (leak watch)',
  usage: 'watch HOST',
  options: z.object({ _: z.array(z.string().min(1).max(128)).length(1) }).passthrough(),
  async run({ _: [host] }, ctx) {
    if (!ctx.services.watch) return { title: 'Leak watch', severity: 'info', sections: [{ text: 'leak watch is not enabled in the config' }] };
    return ctx.services.watch.watchHost(host);
  },
});
