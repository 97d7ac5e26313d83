// Fault injection with real sshd behind a small delaying / cutting TCP proxy (delay-proxy.ts):
// a slow link, and a connection dropped in the middle of a command.
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import type { HostStatusResult } from '../../src/core/services.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { startDelayProxy, type DelayProxy } from './delay-proxy.js';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

const SLOW_MS = 200; // each way

describeWithSshd('fault injection through a TCP proxy', 'test/hosts/faults.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-faults-'));
  const inst: Record<'a' | 'b' | 'slow' | 'cut', SshdInstance> = {} as never;
  let slowProxy: DelayProxy;
  let cutProxy: DelayProxy;
  let svc: SourcedHostsService;

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    [inst.a, inst.b, inst.slow, inst.cut] = await Promise.all([
      startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' }),
      startSshd(join(root, 'b'), key.pub, { skipShellRc: true, data: 'h100' }),
      startSshd(join(root, 'slow'), key.pub, { skipShellRc: true, data: 'h100' }),
      startSshd(join(root, 'cut'), key.pub, { skipShellRc: true, data: 'h100' }),
    ]);
    slowProxy = await startDelayProxy(inst.slow.port, SLOW_MS);
    cutProxy = await startDelayProxy(inst.cut.port, 0);
    const config = parseConfig({
      data_dir: join(root, 'data'),
      // Generous timeouts: a cold connect through 200 ms each way is ~8 round trips (> 3 s).
      ssh: { identity_file: key.keyFile, known_hosts: join(root, 'known_hosts'), connect_timeout_ms: 15000, exec_timeout_ms: 15000 },
      hosts: [
        { name: 'gpu-a', host: '127.0.0.1', port: inst.a.port, host_key: inst.a.fingerprint },
        { name: 'gpu-b', host: '127.0.0.1', port: inst.b.port, host_key: inst.b.fingerprint },
        { name: 'slow', host: '127.0.0.1', port: slowProxy.port, host_key: inst.slow.fingerprint },
        { name: 'cut', host: '127.0.0.1', port: cutProxy.port, host_key: inst.cut.fingerprint },
      ],
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
  });

  afterAll(async () => {
    await svc?.close();
    await slowProxy?.close();
    await cutProxy?.close();
    await Promise.all(Object.values(inst).map((i) => i?.stop()));
    rmSync(root, { recursive: true, force: true });
  });

  const byName = (rs: HostStatusResult[]) => Object.fromEntries(rs.map((r) => [r.name, r])) as Record<string, HostStatusResult>;

  it('a slow host (200 ms each way) answers correctly and does not delay the others', async () => {
    for (const round of ['cold', 'warm']) {
      const t0 = performance.now();
      const by = byName(await svc.status(['slow', 'gpu-a', 'gpu-b']));
      const wall = performance.now() - t0;
      const slow = by.slow;
      expect(slow.ok, `${round}: ${JSON.stringify(slow)}`).toBe(true);
      if (!slow.ok) return;
      expect(slow.gpus).toHaveLength(1);
      expect(slow.gpus[0]).toMatchObject({ name: 'NVIDIA H100 80GB HBM3', memoryTotalMiB: 81559 });
      expect(slow.processes.map((p) => p.user)).toEqual(['carol', 'carol', 'carol']);
      // At least two round trips of 400 ms (channel open, exec) even when warm.
      expect(slow.elapsedMs).toBeGreaterThanOrEqual(2 * 2 * SLOW_MS);
      for (const n of ['gpu-a', 'gpu-b']) {
        const r = by[n];
        expect(r.ok, `${round} ${n}`).toBe(true);
        // The fast hosts finish on their own time, before the slow one: had they waited for it, they would end
        // with it or after. (No margin of the slow host's round trips: on a loaded 2-core CI machine a warm local
        // exec has taken over a second, while the ordering still holds.)
        expect(r.elapsedMs!, `${round} ${n}: ${r.elapsedMs} ms vs slow ${slow.elapsedMs} ms`).toBeLessThan(slow.elapsedMs);
      }
      // The whole answer takes the slow host's own time, not the sum.
      expect(wall).toBeLessThan(slow.elapsedMs + 500);
    }
  });

  it('a connection dropped mid-command: one plain line, then the next call reconnects and succeeds', async () => {
    // Warm the pooled connection first, so the drop hits an established, reused connection.
    const [first] = await svc.status(['cut']);
    expect(first.ok).toBe(true);
    expect(cutProxy.accepted).toBe(1);
    writeFileSync(join(inst.cut.dir, 'smi-delay'), '3');
    const auditLines = () => readFileSync(inst.cut.auditLog, 'utf8').split('\n').filter(Boolean).length;
    const before = auditLines();
    const pending = svc.status(['cut', 'gpu-a']);
    // Cut the link once the remote command has started (the fake nvidia-smi is now sleeping 3 s).
    const deadline = Date.now() + 5000;
    while (auditLines() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(auditLines()).toBeGreaterThan(before);
    await new Promise((r) => setTimeout(r, 100));
    const cutAt = performance.now();
    cutProxy.dropAll();
    const by = byName(await pending);
    const answeredIn = performance.now() - cutAt;
    const cut = by.cut;
    expect(cut.ok).toBe(false);
    const error = cut.ok ? '' : cut.error;
    expect(error).toMatch(/^connection to 127\.0\.0\.1:\d+ dropped during the command$/);
    expect(error).not.toContain('\n');
    expect(answeredIn).toBeLessThan(1500); // told at once, not after the 3 s sleep or the 15 s exec timeout
    expect(by['gpu-a'].ok).toBe(true);

    // The broken connection is not reused: the next call opens a new one and succeeds.
    rmSync(join(inst.cut.dir, 'smi-delay'));
    const [again] = await svc.status(['cut']);
    expect(again.ok, JSON.stringify(again)).toBe(true);
    expect(cutProxy.accepted).toBe(2);
    if (again.ok) expect(again.gpus[0].name).toBe('NVIDIA H100 80GB HBM3');
    const [warm] = await svc.status(['cut']);
    expect(warm.ok).toBe(true);
    expect(cutProxy.accepted).toBe(2); // and that new one is pooled again
  });
});
