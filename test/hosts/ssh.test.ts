// The hosts layer against real OpenSSH sshd instances (see sshd-harness.ts).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { english } from '../../src/core/message.js';
import { parseConfig } from '../../src/config.js';
import type { HostStatusResult } from '../../src/core/services.js';
import { FIXED_COMMAND_PATTERNS, MEM_COMMAND, STATUS_COMMAND } from '../../src/hosts/remote-commands.js';
import { HostRegistry } from '../../src/storage/sqlite/registry.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { makeClientKey, silentListener, startSshd, freePort, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

describeWithSshd('hosts over real sshd', 'test/hosts/ssh.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-ssh-'));
  const inst: Record<string, SshdInstance> = {};
  let silent: Awaited<ReturnType<typeof silentListener>>;
  let deadPort: number;
  let svc: SourcedHostsService;
  let key: { keyFile: string; pub: string };
  let otherKey: { keyFile: string; pub: string };
  let knownHosts: string;

  const config = (dataDir: string, extra: object[] = []) =>
    parseConfig({
      data_dir: dataDir,
      ssh: { known_hosts: knownHosts, identity_file: key.keyFile, connect_timeout_ms: 2000, exec_timeout_ms: 2500 },
      hosts: [
        { name: 'gpu-a', host: '127.0.0.1', port: inst.a.port, host_key: inst.a.fingerprint },
        { name: 'gpu-b', host: '127.0.0.1', port: inst.b.port }, // known_hosts (hashed)
        { name: 'dead', host: '127.0.0.1', port: deadPort, host_key: inst.a.fingerprint },
        { name: 'silent', host: '127.0.0.1', port: silent.port, host_key: inst.a.fingerprint },
        { name: 'nosmi', host: '127.0.0.1', port: inst.missing.port, host_key: inst.missing.fingerprint },
        { name: 'hung', host: '127.0.0.1', port: inst.hang.port, host_key: inst.hang.fingerprint },
        { name: 'nodriver', host: '127.0.0.1', port: inst.driver.port, host_key: inst.driver.fingerprint },
        { name: 'stranger', host: '127.0.0.1', port: inst.unknown.port },
        { name: 'changed', host: '127.0.0.1', port: inst.a.port, host_key: inst.b.fingerprint },
        { name: 'wrongkey', host: '127.0.0.1', port: inst.a.port, host_key: inst.a.fingerprint, identity_file: otherKey.keyFile },
        ...extra,
      ],
    });

  beforeAll(async () => {
    key = makeClientKey(join(root, 'client'));
    otherKey = makeClientKey(join(root, 'other-client'));
    // skipShellRc: the account's own shell rc (a heavy pyenv init on some machines) is not what is tested.
    const started = await Promise.all([
      startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' }),
      startSshd(join(root, 'b'), key.pub, { skipShellRc: true, data: 'h100' }),
      startSshd(join(root, 'missing'), key.pub, { skipShellRc: true, mode: 'missing' }),
      startSshd(join(root, 'hang'), key.pub, { skipShellRc: true, mode: 'hang' }),
      startSshd(join(root, 'driver'), key.pub, { skipShellRc: true, mode: 'driver' }),
      startSshd(join(root, 'unknown'), key.pub, { skipShellRc: true }),
    ]);
    [inst.a, inst.b, inst.missing, inst.hang, inst.driver, inst.unknown] = started;
    silent = await silentListener();
    deadPort = await freePort();
    knownHosts = join(root, 'known_hosts');
    const [type, blob] = inst.b.publicKeyLine.split(/\s+/);
    writeFileSync(knownHosts, `[127.0.0.1]:${inst.b.port} ${type} ${blob}\n`);
    execFileSync('ssh-keygen', ['-H', '-f', knownHosts], { stdio: 'ignore' }); // hashed entries, as HashKnownHosts writes
    expect(readFileSync(knownHosts, 'utf8')).toMatch(/^\|1\|/);
    svc = new SourcedHostsService(withSqliteRegistry({ config: config(join(root, 'data')), baseDir: root, agent: null }));
  });

  afterAll(async () => {
    await svc?.close();
    await silent?.close();
    await Promise.all(Object.values(inst).map((i) => i.stop()));
    rmSync(root, { recursive: true, force: true });
  });

  it('fans out: good hosts answer on time, each failure is one plain line', async () => {
    const t0 = performance.now();
    const results = await svc.status([]);
    const wall = performance.now() - t0;
    const by = Object.fromEntries(results.map((r) => [r.name, r])) as Record<string, HostStatusResult>;
    expect(results).toHaveLength(10);
    const a = by['gpu-a'];
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    expect(a.gpus).toHaveLength(8);
    expect(a.gpus[0]).toMatchObject({ index: 0, name: 'NVIDIA H200', memoryUsedMiB: 84474, memoryTotalMiB: 143771, utilizationPct: 1, temperatureC: 26 });
    expect(a.processes).toHaveLength(8);
    expect(a.processes[0]).toMatchObject({ gpuIndex: 0, pid: 1328667, user: 'alice', memoryMiB: 130004 });
    expect(a.processes[0].command).toContain('vllm.entrypoints');
    const hidden = a.processes.find((p) => p.pid === 1758887)!;
    expect(hidden.user).toBeNull();
    expect(hidden.command).toBe('in a container (pid not visible on the host)');
    // A good host never waits for the dead ones (silent: 2 s connect timeout, hung: 2.5 s exec timeout).
    // (sequential would be >= 2 + 2.5 + 2 s of timeouts; this box's sshd spends ~0.5 s per session)
    expect(a.elapsedMs).toBeLessThan(4000);
    const b = by['gpu-b'];
    expect(b.ok && b.gpus[0].name).toBe('NVIDIA H100 80GB HBM3');
    expect(b.ok && b.processes.map((p) => p.user)).toEqual(['carol', 'carol', 'carol']);
    const err = (n: string) => (by[n].ok ? 'ok' : (by[n] as { error: string }).error);
    expect(err('dead')).toMatch(/^connection refused \(127\.0\.0\.1:\d+\)$/);
    expect(err('silent')).toMatch(/^timed out connecting to 127\.0\.0\.1:\d+ after 2\.0 s$/);
    expect(err('nosmi')).toBe('nvidia-smi not found');
    expect(err('hung')).toMatch(/^timed out after 2\.5 s/);
    expect(err('nodriver')).toMatch(/^driver not loaded: Failed to initialize NVML: Driver\/library version mismatch/);
    expect(err('stranger')).toContain(`host key unknown for stranger (127.0.0.1:${inst.unknown.port}): ${inst.unknown.fingerprint}`);
    expect(err('changed')).toContain(`HOST KEY CHANGED for changed`);
    expect(err('changed')).toContain(`got ${inst.a.fingerprint}`);
    expect(err('wrongkey')).toMatch(/^auth failed/);
    for (const r of results) expect(r.ok || !(r as { error: string }).error.includes('\n')).toBe(true);
    // Bounded by the slowest host's own timeout (exec 2.5 s), not the sum.
    expect(wall).toBeLessThan(4500);
  });

  it('reuses the pooled connection (warm is fast) and mem reads free -b', async () => {
    const before = readFileSync(inst.a.auditLog, 'utf8').split('\n').filter(Boolean).length;
    const [a] = await svc.status(['gpu-a']);
    expect(a.ok).toBe(true);
    // One exec per host per request: the status command carries ps and free -b too.
    const lines = readFileSync(inst.a.auditLog, 'utf8').split('\n').filter(Boolean);
    expect(lines.slice(before)).toEqual([STATUS_COMMAND]);
    expect(a.ok && a.memory).toMatchObject({ totalBytes: 6249144320, availableBytes: 5561253888 });
    expect(a.ok && a.processes.filter((p) => p.user).length).toBe(7);
    const target = svc.ssh.target(svc.registry.get('gpu-b')!);
    svc.ssh.pool.drop(target);
    const first = await svc.ssh.pool.exec(target, MEM_COMMAND);
    const second = await svc.ssh.pool.exec(target, MEM_COMMAND);
    expect(first.connectMs).not.toBeNull(); // new connection
    expect(second.connectMs).toBeNull(); // pooled: no TCP, key exchange or auth
    const [m] = await svc.mem(['gpu-a']);
    expect(m).toMatchObject({
      ok: true,
      memory: { totalBytes: 6249144320, usedBytes: 393076736, availableBytes: 5561253888, swapTotalBytes: 2147479552, swapUsedBytes: 0 },
    });
  });

  it('trusting an unknown host is explicit, and then it works', async () => {
    // Without the fingerprint: the presented key and how to confirm it, nothing trusted.
    const shown = await svc.trust('stranger');
    expect(shown).toMatchObject({ fingerprint: inst.unknown.fingerprint, trusted: false });
    expect(english(shown.message)).toContain(`hosts trust stranger ${inst.unknown.fingerprint}`);
    expect((await svc.status(['stranger']))[0].ok).toBe(false);
    const t = await svc.trust('stranger', inst.unknown.fingerprint);
    expect(t).toMatchObject({ fingerprint: inst.unknown.fingerprint, trusted: true });
    const [r] = await svc.status(['stranger']);
    expect(r.ok).toBe(true);
    const test = await svc.test('gpu-a');
    expect(test.ok).toBe(true);
    expect(test.fingerprint).toBe(inst.a.fingerprint);
    expect(test.steps.map((s) => s.step)).toEqual(['connect', 'nvidia-smi', 'free']);
  });

  it('audit: hostile names and arguments never reach the remote side', async () => {
    const hostile = ['gpu1; rm -rf /', '$(id)', '`id`', 'gpu-a\nid', "gpu-a' ; id; '", 'x'.repeat(10_000), '../../etc/passwd', 'gpu-a && touch /tmp/pwned'];
    const st = await svc.status(hostile);
    expect(st.every((r) => !r.ok && r.error === 'unknown host')).toBe(true);
    expect(st.every((r) => r.name.length <= 41 && !r.name.includes('\n'))).toBe(true);
    await svc.mem(hostile);
    for (const h of hostile) {
      expect((await svc.test(h)).ok).toBe(false);
      await expect(svc.trust(h)).rejects.toThrow();
      expect(await svc.remove(h)).toBe(false);
      await expect(svc.add({ name: h, user: 'root', host: '127.0.0.1', port: inst.a.port })).rejects.toThrow();
      await expect(svc.add({ name: 'okname', user: 'root', host: h, port: inst.a.port })).rejects.toThrow();
    }
    await svc.status([]);
    await svc.mem([]);
    let lines = 0;
    for (const i of Object.values(inst)) {
      for (const line of readFileSync(i.auditLog, 'utf8').split('\n')) {
        if (line === '') continue;
        lines++;
        expect(
          FIXED_COMMAND_PATTERNS.some((p) => p.test(line)),
          line,
        ).toBe(true);
      }
    }
    expect(lines).toBeGreaterThan(5);
  });

  it('runtime hosts survive a restart', async () => {
    const dataDir = join(root, 'restart');
    const s1 = new SourcedHostsService(withSqliteRegistry({ config: config(dataDir), baseDir: root, agent: null }));
    const added = await s1.add({ name: 'late', user: process.env.USER ?? 'root', host: '127.0.0.1', port: inst.b.port, trust: inst.b.fingerprint });
    expect(added.fingerprint).toBe(inst.b.fingerprint);
    await s1.close();
    const s2 = new SourcedHostsService(withSqliteRegistry({ config: config(dataDir), baseDir: root, agent: null }));
    expect((await s2.list()).find((h) => h.name === 'late')).toMatchObject({ origin: 'runtime', hostKey: inst.b.fingerprint });
    const [r] = await s2.status(['late']);
    expect(r.ok).toBe(true);
    expect(await s2.remove('late')).toBe(true);
    await s2.close();
  });

  it('kill -9 in the middle of adds leaves the database intact', async () => {
    const dataDir = join(root, 'killed');
    const script = join(import.meta.dirname, 'add-loop.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', script, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((res) => child.stdout.once('data', () => res()));
    await new Promise((r) => setTimeout(r, 150));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const reg = new HostRegistry(dataDir, []);
    expect(reg.integrityOk()).toBe(true);
    const hosts = reg.list();
    expect(hosts.length).toBeGreaterThan(0);
    for (const h of hosts) expect(h).toMatchObject({ host: '127.0.0.1', port: 22, user: 'ml', hostKey: expect.stringMatching(/^SHA256:/) });
    reg.close();
  });
});
