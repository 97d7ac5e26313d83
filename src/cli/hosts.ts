// `gpu-doctor status|mem [HOST...] [--json] [--config FILE]` and `gpu-doctor hosts ...`.
// The console user is admin. --json prints the result shapes of src/core/services.ts.
import { loadConfig } from '../config.js';
import { english } from '../core/message.js';
import type { Reply } from '../core/reply.js';
import { createHostsService, type SourcedHostsService } from '../hosts/service.js';
import { listReply, memReply, statusReply, testReply } from '../hosts/render.js';
import { parseUserHostPort } from '../hosts/ssh-config.js';
import { parseArgs, UsageError } from './usage.js';
import { terminalSafeJson } from './json.js';
import { stripTerminalControls } from '../adapters/console/render.js';

async function withService<T>(configFile: string | undefined, f: (s: SourcedHostsService) => Promise<T>): Promise<T> {
  const loaded = loadConfig(configFile);
  // The bot's own choice of backend (app.ts): with `storage:` Postgres a host added here is the replicas' too.
  const stores = await (await import('../app.js')).openStores(loaded);
  try {
    const svc = createHostsService(loaded.config, loaded.baseDir, (configHosts) => stores.registry(configHosts));
    try {
      return await f(svc);
    } finally {
      await svc.close();
    }
  } finally {
    await stores.close();
  }
}

async function print(reply: Reply): Promise<void> {
  const { renderText } = await import('../adapters/console/render.js');
  process.stdout.write(renderText(reply) + '\n');
}

const out = (v: unknown) => process.stdout.write(terminalSafeJson(v, 2) + '\n');

/** A host's answer as the JSON output has it: its error and warning lines in English, not the reply's messages. */
function jsonOf<T extends { problems?: unknown }>(r: T): Omit<T, 'problems'> {
  const { problems, ...rest } = r;
  void problems;
  return rest;
}

export async function statusCli(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { booleans: ['json'], values: ['config'] });
  const results = await withService(flags.config, (s) => s.status(positionals));
  if (flags.json) out({ hosts: results.map(jsonOf) });
  else await print(statusReply(results));
  return results.every((r) => r.ok) ? 0 : 1;
}

export async function memCli(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { booleans: ['json'], values: ['config'] });
  const results = await withService(flags.config, (s) => s.mem(positionals));
  if (flags.json) out({ hosts: results.map(jsonOf) });
  else await print(memReply(results));
  return results.every((r) => r.ok) ? 0 : 1;
}

export async function hostsCli(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { booleans: ['json'], values: ['config', 'key', 'trust'] });
  const [sub = 'list', name, target] = positionals;
  return withService(flags.config, async (s) => {
    switch (sub) {
      case 'list': {
        const hosts = await s.list();
        if (flags.json) out({ hosts });
        else await print(listReply(hosts));
        return 0;
      }
      case 'test': {
        if (!name) throw new UsageError('hosts test NAME');
        const t = await s.test(name);
        if (flags.json) out(t);
        else await print(testReply(t));
        return t.ok ? 0 : 1;
      }
      case 'remove': {
        if (!name) throw new UsageError('hosts remove NAME');
        const ok = await s.remove(name);
        process.stdout.write(ok ? `removed ${name}\n` : 'unknown host\n');
        return ok ? 0 : 1;
      }
      case 'trust': {
        if (!name) throw new UsageError('hosts trust NAME [SHA256:...]');
        const t = await s.trust(name, target);
        if (flags.json) out({ ...t, message: english(t.message) });
        else process.stdout.write(stripTerminalControls(english(t.message)) + '\n');
        return t.trusted ? 0 : 1;
      }
      case 'add': {
        const parsed = target ? parseUserHostPort(target) : null;
        if (!name || !parsed?.user) throw new UsageError('hosts add NAME user@host[:port] [--key PATH] [--trust SHA256:...]');
        const r = await s.add({
          name,
          user: parsed.user,
          host: parsed.host,
          port: parsed.port ?? 22,
          ...(flags.key ? { identityFile: flags.key } : {}),
          ...(flags.trust ? { trust: flags.trust } : {}),
        });
        if (flags.json) out({ ...r, message: english(r.message) });
        else process.stdout.write(stripTerminalControls(english(r.message)) + '\n');
        return 0;
      }
      default:
        throw new UsageError('hosts list|add|remove|test|trust');
    }
  });
}
