// Test wiring: the real rule base and commands, config admins, a temp data dir, a silent logger.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import pino from 'pino';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { defineCommand } from '../../src/core/command.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { allCommands } from '../../commands/index.js';
import { AuditStore } from '../../src/storage/sqlite/audit.js';
import { Metrics } from '../../src/ops/metrics.js';
import type { AdapterDeps } from '../../src/adapters/common.js';
import type { HostsService } from '../../src/core/services.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { SubscriptionStore } from '../../src/storage/sqlite/subscriptions.js';

/** Stands in for the hosts command if it has not landed yet: same admin rule (add/remove/trust). */
const stubHosts = defineCommand({
  name: 'hosts',
  summary: 'hosts (test stub)',
  usage: 'hosts list|add|remove|test|trust',
  options: z.object({ _: z.array(z.string()) }).passthrough(),
  requiresAdmin: (o) => ['add', 'remove', 'trust'].includes(o._[0]),
  async run(o) {
    return { title: `hosts ${o._[0] ?? 'list'} done`, severity: 'ok', sections: [{ text: 'ok' }] };
  },
});

/** Stands in for /gpu status if it has not landed yet: asks services.hosts, returns a table. */
const stubStatus = defineCommand({
  name: 'status',
  summary: 'status (test stub)',
  usage: 'status [host]',
  options: z.object({ _: z.array(z.string()) }).passthrough(),
  async run(o, ctx) {
    const res = await ctx.services.hosts!.status(o._);
    const rows = res.flatMap((h) => (h.ok ? h.gpus.map((g) => [h.name, String(g.index), String(g.memoryUsedMiB)]) : [[h.name, '-', h.error]]));
    return { title: 'GPU status', severity: 'info', sections: [{ table: { columns: ['host', 'gpu', 'used MiB'], rows } }] };
  },
});

/** A stand-in hosts service: `status()` with no names answers for `hostCount` hosts (gpu1..gpuN). */
export const fakeHosts = (delayMs = 0, hostCount = 1): HostsService => ({
  async status(names) {
    await new Promise((r) => setTimeout(r, delayMs));
    return (names.length ? names : Array.from({ length: hostCount }, (_, i) => `gpu${i + 1}`)).map((name) => ({
      name,
      ok: true as const,
      elapsedMs: delayMs,
      gpus: [{ index: 0, uuid: 'GPU-1', name: 'H100', memoryUsedMiB: 1000, memoryTotalMiB: 80000, utilizationPct: 5, temperatureC: 40 }],
      processes: [],
    }));
  },
  async mem() {
    return [];
  },
  async list() {
    return [{ name: 'gpu1', target: 'ml@10.0.0.5:22', origin: 'config' as const }];
  },
  async add(r) {
    return { host: { name: r.name, target: `${r.user}@${r.host}:${r.port}`, origin: 'runtime' as const }, fingerprint: null, message: 'added' };
  },
  async remove() {
    return true;
  },
  async test(name) {
    return { name, ok: true, steps: [] };
  },
  async trust() {
    return { fingerprint: 'SHA256:x', message: 'trusted' };
  },
});

export interface TestDepsOptions {
  admins?: { slack?: string[]; discord?: string[] };
  channels?: Record<string, string[] | boolean>;
  hostsDelayMs?: number;
  hostCount?: number;
  /** A real leak watch over an empty store in the data dir (no sampler, no digests). */
  watch?: boolean;
}

export async function testDeps(extra: TestDepsOptions = {}): Promise<AdapterDeps & { audit: AuditStore; metrics: Metrics; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gpu-doctor-adapter-'));
  const config = parseConfig({
    data_dir: dataDir,
    admins: { slack: extra.admins?.slack ?? [], discord: extra.admins?.discord ?? [] },
    channels: extra.channels ?? {},
  });
  const commands = allCommands();
  if (!commands.some((c) => c.name === 'hosts')) commands.push(stubHosts);
  if (!commands.some((c) => c.name === 'status')) commands.push(stubStatus);
  const rules = await loadRuleBase();
  const watch = extra.watch ? new WatchRuntime(WatchStore.inDataDir(dataDir), undefined, rules, config.watch) : undefined;
  watch?.setSubscriptions(SubscriptionStore.inDataDir(dataDir));
  return {
    registry: new CommandRegistry(commands),
    services: { rules, hosts: fakeHosts(extra.hostsDelayMs ?? 0, extra.hostCount ?? 1), ...(watch ? { watch } : {}) },
    config,
    logger: pino({ level: process.env.TEST_LOG ?? 'silent' }),
    audit: AuditStore.inDataDir(dataDir),
    metrics: new Metrics(),
    dataDir,
  };
}
