// ProxyJump a,b from an ssh config, over three real sshd instances: the GPU host is reached through
// both hops in order (each sshd sits behind a counting TCP proxy, so who connected where is seen),
// the hop connections are pooled, and a dead first hop fails the host with that hop's own error.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { startDelayProxy, type DelayProxy } from './delay-proxy.js';
import { freePort, makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

describeWithSshd('ProxyJump a,b over real sshd', 'test/hosts/proxy-jump.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-jump-'));
  let hop1: SshdInstance, hop2: SshdInstance, gpu: SshdInstance;
  let p1: DelayProxy, p2: DelayProxy, p3: DelayProxy;
  let svc: SourcedHostsService;

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    [hop1, hop2, gpu] = await Promise.all(['hop1', 'hop2', 'gpu'].map((n) => startSshd(join(root, n), key.pub, { skipShellRc: true })));
    [p1, p2, p3] = await Promise.all([hop1, hop2, gpu].map((s) => startDelayProxy(s.port, 0)));
    const dead = await freePort();
    const sshConfig = join(root, 'ssh_config');
    writeFileSync(
      sshConfig,
      [
        'Host hop1',
        '  HostName 127.0.0.1',
        `  Port ${p1.port}`,
        'Host hop2',
        '  HostName 127.0.0.1',
        `  Port ${p2.port}`,
        'Host hop-dead',
        '  HostName 127.0.0.1',
        `  Port ${dead}`,
        'Host gpu-behind',
        '  HostName 127.0.0.1',
        `  Port ${p3.port}`,
        '  ProxyJump hop1,hop2',
        'Host gpu-broken-chain',
        '  HostName 127.0.0.1',
        `  Port ${p3.port}`,
        '  ProxyJump hop-dead,hop2',
        '',
      ].join('\n'),
    );
    const knownHosts = join(root, 'known_hosts');
    const pairs: [DelayProxy, SshdInstance][] = [
      [p1, hop1],
      [p2, hop2],
      [p3, gpu],
    ];
    writeFileSync(knownHosts, pairs.map(([p, s]) => `[127.0.0.1]:${p.port} ${s.publicKeyLine}`).join('\n') + '\n');
    svc = new SourcedHostsService(
      withSqliteRegistry({
        config: parseConfig({
          data_dir: join(root, 'data'),
          ssh: { config_file: sshConfig, known_hosts: knownHosts, identity_file: key.keyFile, connect_timeout_ms: 5000, exec_timeout_ms: 5000 },
          hosts: [
            { name: 'gpu', host: 'gpu-behind' },
            { name: 'broken', host: 'gpu-broken-chain' },
          ],
        }),
        baseDir: root,
        agent: null,
      }),
    );
  });

  afterAll(async () => {
    await svc?.close();
    await Promise.all([p1, p2, p3].map((p) => p?.close()));
    await Promise.all([hop1, hop2, gpu].map((s) => s?.stop()));
    rmSync(root, { recursive: true, force: true });
  });

  it('status reaches the host through hop1 then hop2, one pooled connection per hop', async () => {
    const [r] = await svc.status(['gpu']);
    expect(r.ok ? r.gpus.length : r).toBe(8);
    // One connection into each: ours into hop1, hop1's sshd into hop2, hop2's sshd into the GPU host.
    expect([p1.accepted, p2.accepted, p3.accepted]).toEqual([1, 1, 1]);
    // The session ran on the GPU host, not on a hop.
    const audit = (s: SshdInstance) => readFileSync(s.auditLog, 'utf8').split('\n').filter(Boolean).length;
    expect([audit(hop1), audit(hop2), audit(gpu)]).toEqual([0, 0, 1]);
    const [again] = await svc.status(['gpu']);
    expect(again.ok).toBe(true);
    expect([p1.accepted, p2.accepted, p3.accepted]).toEqual([1, 1, 1]);
  });

  it("a dead first hop fails the host with that hop's error; nothing reaches the GPU host", async () => {
    const before = p3.accepted;
    const [r] = await svc.status(['broken']);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/^connection refused \(127\.0\.0\.1:\d+\)$/);
    expect(!r.ok && r.error).not.toContain(String(p3.port));
    expect(p3.accepted).toBe(before);
  });
});
