// /gpu hosts list|add|remove|test|trust: the host registry. add, remove and trust are admin-only.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t } from '../src/core/i18n.js';
import { render, schemaMessage } from '../src/core/message.js';
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
    trust: z.string().regex(FINGERPRINT, schemaMessage('usage.hosts.trust')).optional(),
  })
  .passthrough()
  .refine((o) => ['list', 'add', 'remove', 'test', 'trust'].includes(o._[0] ?? 'list'), {
    message: 'hosts list|add NAME user@host[:port] [--key PATH] [--trust SHA256:...]|remove NAME|test NAME|trust NAME [SHA256:...]',
  });

export default defineCommand({
  name: 'hosts',
  summary: t('en', 'cmd.hosts.summary'),
  usage: 'hosts list|add NAME user@host[:port] [--key PATH] [--trust SHA256:...]|remove NAME|test NAME|trust NAME [SHA256:...]',
  options,
  requiresAdmin: (o) => ADMIN.has(o._[0] ?? 'list'),
  async run(o, ctx) {
    const svc = ctx.services.hosts;
    if (!svc) return textReply(t(ctx.locale, 'common.noHosts.title'), t(ctx.locale, 'common.noHosts.text'), 'error');
    const [sub = 'list', name, target] = o._;
    if (sub === 'list') return listReply(await svc.list(), ctx.locale);
    if (!name) return textReply(t(ctx.locale, 'hosts.needsName.title', { sub }), t(ctx.locale, 'hosts.needsName.text', { sub }), 'warning');
    const unknown = () => textReply(t(ctx.locale, 'hosts.unknown.title'), t(ctx.locale, 'hosts.unknown.text'), 'warning');
    if (!HOST_NAME.test(name)) return unknown();
    if (sub === 'test') return testReply(await svc.test(name), ctx.locale);
    if (sub === 'remove')
      return (await svc.remove(name))
        ? textReply(t(ctx.locale, 'hosts.removed.title', { name }), t(ctx.locale, 'hosts.removed.text', { name }), 'ok')
        : unknown();
    if (sub === 'trust') {
      // `hosts trust NAME` shows the key; `hosts trust NAME SHA256:...` trusts exactly that key.
      const tr = await svc.trust(name, target);
      return tr.trusted === false
        ? textReply(t(ctx.locale, 'hosts.notTrusted.title', { name }), render(ctx.locale, tr.message), 'warning')
        : textReply(t(ctx.locale, 'hosts.trusted.title', { name }), render(ctx.locale, tr.message), 'ok');
    }
    const parsed = target ? parseUserHostPort(target) : null;
    if (!parsed || !parsed.user)
      return textReply(
        t(ctx.locale, 'registry.usage.title', { usage: 'hosts add NAME user@host[:port] [--key PATH] [--trust SHA256:...]' }),
        t(ctx.locale, 'hosts.badTarget'),
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
    return {
      title: t(ctx.locale, 'hosts.added.title', { name, target: r.host.target }),
      severity: 'ok',
      sections: [{ text: render(ctx.locale, r.message) }],
    };
  },
});
