// Single flight per host (issue 22): requests that need a host's reading while an exec for it runs
// share that exec (its output, failure or timeout) instead of running nvidia-smi again; a request
// after it ended runs a new one. Real sshd hosts; each exec is one line of the host's audit log (the
// ForceCommand wrapper writes it), so the count is what the host ran. Chat requests go through the
// command registry with the real /gpu status, /gpu mem and /gpu fit, as every adapter sends them.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import type { CommandContext } from '../../src/core/command.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { testDeps } from '../adapters/helpers.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';

/** Seconds each fake nvidia-smi call sleeps: the exec is still running when the other requests arrive. */
const SMI_DELAY_S = '0.2';
const CONCURRENT = 6;

describeWithSshd('single flight per host', 'test/hosts/single-flight.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-single-flight-'));
  let a: SshdInstance;
  let b: SshdInstance;
  let hung: SshdInstance;
  let svc: SourcedHostsService;
  let deps: Awaited<ReturnType<typeof testDeps>>;
  let context: CommandContext;

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    [a, b, hung] = await Promise.all([
      startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' }),
      startSshd(join(root, 'b'), key.pub, { skipShellRc: true, data: 'h100' }),
      startSshd(join(root, 'hung'), key.pub, { skipShellRc: true, data: 'h100', mode: 'hang' }),
    ]);
    for (const i of [a, b]) writeFileSync(join(i.dir, 'smi-delay'), SMI_DELAY_S);
    const config = parseConfig({
      data_dir: join(root, 'data'),
      ssh: { identity_file: key.keyFile, known_hosts: join(root, 'known_hosts'), connect_timeout_ms: 15_000, exec_timeout_ms: 8_000 },
      hosts: [
        { name: 'gpu-a', host: '127.0.0.1', port: a.port, host_key: a.fingerprint },
        { name: 'gpu-b', host: '127.0.0.1', port: b.port, host_key: b.fingerprint },
        { name: 'hung', host: '127.0.0.1', port: hung.port, host_key: hung.fingerprint },
      ],
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
    deps = await testDeps();
    deps.services.hosts = svc;
    context = { platform: 'slack', userId: 'U1', isAdmin: false, services: deps.services };
    // Connections made and warm, so every count below is of execs alone.
    await svc.status(['gpu-a', 'gpu-b']);
  }, 60_000);

  afterAll(async () => {
    deps?.audit.close();
    await svc?.close();
    await Promise.all([a, b, hung].map((i) => i?.stop()));
    rmSync(root, { recursive: true, force: true });
  });

  /** Commands each host ran since the last reset (the wrapper's audit log, one line per exec). */
  const execs = (i: SshdInstance) => readFileSync(i.auditLog, 'utf8').split('\n').filter(Boolean);
  beforeEach(() => {
    for (const i of [a, b, hung]) writeFileSync(i.auditLog, '');
  });

  const ask = (line: string) => deps.registry.dispatch(line, context).then((o) => JSON.stringify(o.reply));

  it(`${CONCURRENT} concurrent /gpu status over two hosts: one exec per host, every asker gets the full answer`, async () => {
    const replies = await Promise.all(Array.from({ length: CONCURRENT }, () => ask('/gpu status gpu-a gpu-b')));
    expect(execs(a)).toHaveLength(1);
    expect(execs(b)).toHaveLength(1);
    for (const r of replies) {
      expect(r).toContain('NVIDIA H200');
      expect(r).toContain('NVIDIA H100 80GB HBM3');
    }
  }, 60_000);

  it('sequential /gpu status: one exec each (nothing is cached)', async () => {
    for (let n = 0; n < 3; n++) expect(await ask('/gpu status gpu-a')).toContain('NVIDIA H200');
    expect(execs(a)).toHaveLength(3);
  }, 60_000);

  it('/gpu mem, /gpu fit and the watch round asked while a status runs share its exec', async () => {
    const [status, mem, fit, round] = await Promise.all([
      svc.status(['gpu-a', 'gpu-b']),
      ask('/gpu mem gpu-a gpu-b'),
      ask('/gpu fit 10G'),
      svc.statusInBackground(['gpu-a', 'gpu-b']),
    ]);
    expect(status.every((r) => r.ok)).toBe(true);
    expect(round.every((r) => r.ok)).toBe(true);
    expect(mem).toContain('gpu-a');
    expect(fit).toContain('gpu-a GPU');
    // The status exec prints mem's sections too: still one exec per host.
    expect(execs(a)).toHaveLength(1);
    expect(execs(b)).toHaveLength(1);
  }, 60_000);

  it('a hung host holds one exec for all concurrent askers, and each of them gets its timeout', async () => {
    const replies = await Promise.all(Array.from({ length: CONCURRENT }, () => svc.status(['hung'])));
    expect(execs(hung)).toHaveLength(1);
    for (const [r] of replies) {
      expect(r.ok || r.error).toMatch(/timed out/);
    }
    // After the shared timeout, the next request tries the host again.
    await svc.status(['hung']);
    expect(execs(hung)).toHaveLength(2);
  }, 60_000);
});
