// /gpu hosts list|add|remove|test|trust: the host registry. add, remove and trust are admin-only.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { textReply } from '../src/core/reply.js';
import { listReply, testReply } from '../src/hosts/render.js';
import { FINGERPRINT, HOST_NAME } from '../src/hosts/registry.js';
import { parseUserHostPort } from '../src/hosts/ssh-config.js';

const ADMIN = new Set(['add', 'remove', 'trust']);

const options = z
  .object({
    _: z.array(z.string()).max(8).default([]),
    key: z.string().max(4096).optional(),
    // The fingerprint the admin read on the host (`ssh-keygen -lf`): never whatever the host presents now.
    trust: z.string().regex(FINGERPRINT, 'the fingerprint read on the host: --trust SHA256:...').optional(),
  })
  .passthrough()
  .refine((o) => ['list', 'add', 'remove', 'test', 'trust'].includes(o._[0] ?? 'list'), {
    message: 'hosts list|add NAME user@host[:port] [--key PATH] [--trust SHA256:...]|remove NAME|test NAME|trust NAME [SHA256:...]',
  });

export default defineCommand({
  name: 'hosts',
  summary: 'List, add, remove, test or trust GPU hosts (add/remove/trust: admins only)',
  usage: 'hosts list|add NAME user@host[:port] [--key PATH] [--trust SHA256:...]|remove NAME|test NAME|trust NAME [SHA256:...]',
  options,
  requiresAdmin: (o) => ADMIN.has(o._[0] ?? 'list'),
  async run(o, ctx) {
    const svc = ctx.services.hosts;
    if (!svc) return textReply('No hosts service', 'Host commands are not configured.', 'error');
    const [sub = 'list', name, target] = o._;
    if (sub === 'list') return listReply(await svc.list());
    if (!name) return textReply(`hosts ${sub} needs a host name`, `Usage: /gpu hosts ${sub} NAME`, 'warning');
    if (!HOST_NAME.test(name)) return textReply('Unknown host', 'unknown host', 'warning');
    if (sub === 'test') return testReply(await svc.test(name));
    if (sub === 'remove')
      return (await svc.remove(name))
        ? textReply(`Removed ${name}`, `${name} is no longer queried.`, 'ok')
        : textReply('Unknown host', 'unknown host', 'warning');
    if (sub === 'trust') {
      // `hosts trust NAME` shows the key; `hosts trust NAME SHA256:...` trusts exactly that key.
      const t = await svc.trust(name, target);
      return t.trusted === false ? textReply(`Not trusted yet: ${name}`, t.message, 'warning') : textReply(`Trusted ${name}`, t.message, 'ok');
    }
    const parsed = target ? parseUserHostPort(target) : null;
    if (!parsed || !parsed.user)
      return textReply(
        'Usage: /gpu hosts add NAME user@host[:port] [--key PATH] [--trust SHA256:...]',
        'the target must look like user@host or user@host:port',
        'warning',
      );
    const r = await svc.add({
      name,
      user: parsed.user,
      host: parsed.host,
      port: parsed.port ?? 22,
      ...(o.key ? { identityFile: o.key } : {}),
      ...(o.trust ? { trust: o.trust } : {}),
    });
    return { title: `Added ${name} (${r.host.target})`, severity: 'ok', sections: [{ text: r.message }] };
  },
});
