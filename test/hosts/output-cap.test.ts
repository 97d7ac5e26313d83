// Attack 3 of issue 11: a broken host writing to stderr without end, against real sshd, through the
// real CommandRegistry. The answer comes at the stderr cap (not at the exec timeout), the bot's memory
// stays bounded, and the channel is closed so the writer on the host ends too.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import type { CommandContext } from '../../src/core/command.js';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

const EXEC_TIMEOUT_MS = 8000;

describeWithSshd('endless stderr from a host (issue 11, attack 3)', 'test/hosts/output-cap.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-cap-'));
  let flood: SshdInstance;
  let good: SshdInstance;
  let svc: SourcedHostsService;
  const registry = new CommandRegistry(allCommands());
  const ctx: CommandContext = { platform: 'slack', userId: 'U0PLAIN01', isAdmin: false, services: { hosts: undefined } as unknown as Services };

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    [flood, good] = await Promise.all([
      startSshd(join(root, 'flood'), key.pub, { skipShellRc: true, floodStderr: true }),
      startSshd(join(root, 'good'), key.pub, { skipShellRc: true, data: 'h100' }),
    ]);
    const config = parseConfig({
      data_dir: join(root, 'data'),
      ssh: { identity_file: key.keyFile, known_hosts: join(root, 'known_hosts'), connect_timeout_ms: 6000, exec_timeout_ms: EXEC_TIMEOUT_MS },
      hosts: [
        { name: 'flood', host: '127.0.0.1', port: flood.port, host_key: flood.fingerprint },
        { name: 'good', host: '127.0.0.1', port: good.port, host_key: good.fingerprint },
      ],
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
    (ctx.services as { hosts: unknown }).hosts = svc;
  });

  afterAll(async () => {
    await svc?.close();
    await Promise.all([flood?.stop(), good?.stop()]);
    rmSync(root, { recursive: true, force: true });
  });

  it('`status` answers at the stderr cap, long before the exec timeout, with bounded memory; the remote writer ends', async () => {
    await svc.status(['good']); // connections warm: what is measured is the flood
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const watch = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const t0 = performance.now();
    const out = await registry.dispatch('/gpu status flood good', ctx);
    const took = performance.now() - t0;
    clearInterval(watch);
    peak = Math.max(peak, process.memoryUsage().rss);

    expect(out.outcome).toBe('ok');
    const text = renderText(out.reply);
    expect(text).toContain('GPU status: 1/2 hosts answered');
    expect(text).toContain('flood: flood sent more than 1024 KiB on stderr; stopped reading and closed the channel');
    expect(took, `${Math.round(took)} ms`).toBeLessThan(EXEC_TIMEOUT_MS / 2);
    const grownMiB = (peak - rssBefore) / 2 ** 20;
    expect(grownMiB, `RSS grew ${grownMiB.toFixed(1)} MiB`).toBeLessThan(64);

    // The channel was closed: sshd shuts the stderr pipe and the writer on the host dies of it.
    const pids = readFileSync(flood.sessionPids, 'utf8').split('\n').filter(Boolean);
    expect(pids.length).toBeGreaterThan(0);
    const deadline = Date.now() + 2000;
    while (pids.some((p) => existsSync(`/proc/${p}`)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(
      pids.filter((p) => existsSync(`/proc/${p}`)),
      'writers still running on the host',
    ).toEqual([]);

    // And the bot goes on answering, on the same connection.
    const again = await registry.dispatch('/gpu status good', ctx);
    expect(renderText(again.reply)).toContain('GPU status: 1/1 host answered');
  }, 30_000);
});
