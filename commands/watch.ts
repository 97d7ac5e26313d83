// /gpu watch HOST: the live memory series of one host (per GPU process and host RAM) as sparklines.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { HOST_NAME } from '../src/hosts/registry.js';

export default defineCommand({
  name: 'watch',
  summary: 'Live memory series of one host as sparklines (leak watch)',
  usage: 'watch HOST',
  // A host name in the registry's syntax, nothing else: the name is echoed in the reply, so chat markup
  // such as <!channel> must never get that far.
  options: z.object({ _: z.array(z.string().regex(HOST_NAME, 'a host name: letters, digits, . _ - (max 63)')).length(1) }).passthrough(),
  async run({ _: [host] }, ctx) {
    if (!ctx.services.watch) return { title: 'Leak watch', severity: 'info', sections: [{ text: 'leak watch is not enabled in the config' }] };
    return ctx.services.watch.watchHost(host);
  },
});
