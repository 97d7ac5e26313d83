// /gpu mem [HOST...]: host RAM total / used / available / swap, warning under 10% available.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { memReply } from '../src/hosts/render.js';

export default defineCommand({
  name: 'mem',
  summary: 'Host RAM and swap per host, with a warning when available memory is under 10%',
  usage: 'mem [HOST...]',
  options: z.object({ _: z.array(z.string()).max(64).default([]) }).passthrough(),
  async run({ _: hosts }, ctx) {
    if (!ctx.services.hosts) return { title: 'No hosts service', severity: 'error', sections: [{ text: 'Host commands are not configured.' }] };
    return memReply(await ctx.services.hosts.mem(hosts));
  },
});
