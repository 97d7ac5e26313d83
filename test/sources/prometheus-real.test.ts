// Issue 15 §1 end to end: one config with a `source: ssh` group (a real sshd) and a `source: prometheus`
// group (a real Prometheus scraping local targets that serve real exporter output) answers `status`,
// `mem` and a leak digest for both. The H100 behind nvidia_gpu_exporter is also served over SSH from the
// nvidia-smi capture the exporter's own fixture was made from, so the two paths are compared reading
// the same machine.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_FIT_SETTINGS, rankFits, sshHint } from '../../src/fleet/fit.js';
import type { PrometheusHostSource } from '../../src/sources/prometheus/hosts.js';
import type { HostStatusResult } from '../../src/core/services.js';
import { memReply, statusReply } from '../../src/hosts/render.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { digestReply } from '../../src/watch/digest.js';
import { findingsFromStore } from '../../src/watch/findings.js';
import { sampleOnce } from '../../src/watch/sampler.js';
import { freePort, makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { fixtureText, promFixtures } from './exposition.js';
import { describeWithPrometheus, serveMetrics, startPrometheus, waitForSeries, type PrometheusInstance } from './prometheus-harness.js';
import { tempWatchStore, withSqliteRegistry } from '../storage/sqlite-stores.js';

/** The capture's CSV (header + rows) as records by column name. */
function csvRecords(file: string): Record<string, string>[] {
  const [head, ...rows] = readFileSync(join(promFixtures, file), 'utf8').trim().split('\n');
  const cols = head.split(',').map((c) => c.trim());
  return rows.map((r) => Object.fromEntries(r.split(',').map((v, i) => [cols[i], v.trim()])));
}
const n = (s: string) => Number(s.replace(/\s*(MiB|%)$/, ''));

describeWithPrometheus('Prometheus and SSH host groups in one config', 'test/sources/prometheus-real.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-prom-'));
  let prom: PrometheusInstance;
  let sshd: SshdInstance;
  let svc: SourcedHostsService;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    // Two "machines" on their own loopback addresses; each exporter on its own port, as in a fleet.
    const a100Gpu = await serveMetrics('127.0.0.2', fixtureText('dcgm-exporter-a100.prom'));
    const a100Node = await serveMetrics('127.0.0.2', fixtureText('node-exporter-e2e-memory.prom'));
    const h100Gpu = await serveMetrics('127.0.0.3', fixtureText('nvidia-gpu-exporter-h100.prom'));
    for (const s of [a100Gpu, a100Node, h100Gpu]) closers.push(() => s.close());
    prom = await startPrometheus(join(root, 'prom'), [
      { job: 'dcgm', targets: [a100Gpu.target] },
      { job: 'nvidia_gpu', targets: [h100Gpu.target] },
      { job: 'node', targets: [a100Node.target] },
    ]);
    await waitForSeries(prom.url, 'up == 1', 3);
    await waitForSeries(prom.url, '{__name__=~"DCGM_FI_DEV_FB_USED|nvidia_smi_memory_used_bytes|node_memory_MemTotal_bytes"}', 3);
    // A few scrapes, so a range query's 1 s steps (evaluated at whole seconds) see every target.
    await new Promise((r) => setTimeout(r, 3000));

    // The same H100 over SSH: nvidia-smi answers the bot's queries with the capture's values.
    const key = makeClientKey(join(root, 'client'));
    sshd = await startSshd(join(root, 'sshd'), key.pub, { skipShellRc: true, data: 'h100' });
    const g = csvRecords('nvidia-smi-h100-load-query-gpu.csv')[0];
    const apps = csvRecords('nvidia-smi-h100-load-query-compute-apps.csv');
    writeFileSync(
      join(sshd.dir, 'gpu.csv'),
      [g.index, g.uuid, g.name, n(g['memory.used [MiB]']), n(g['memory.total [MiB]']), n(g['utilization.gpu [%]']), n(g['temperature.gpu'])].join(', ') + '\n',
    );
    writeFileSync(join(sshd.dir, 'apps.csv'), apps.map((a) => [a.gpu_uuid, a.pid, n(a['used_gpu_memory [MiB]']), a.process_name].join(', ')).join('\n') + '\n');
    writeFileSync(join(sshd.dir, 'ps.txt'), apps.map((a) => `${a.pid.padStart(8)} alice ${'7200'.padStart(10)} ${a.process_name}`).join('\n') + '\n');

    const cfg = join(root, 'gpu-doctor.yaml');
    writeFileSync(
      cfg,
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        '  connect_timeout_ms: 5000',
        '  exec_timeout_ms: 10000',
        'host_groups:',
        '  - name: lab',
        '    source: ssh',
        '    hosts:',
        `      - { name: h100-ssh, host: 127.0.0.1, port: ${sshd.port}, host_key: "${sshd.fingerprint}" }`,
        '  - name: cluster',
        '    source: prometheus',
        `    url: ${prom.url}`,
        '    timeout_ms: 5000',
        '    history_step_s: 1',
        '    hosts:',
        '      - { name: a100-prom, match: 127.0.0.2 }',
        '      - { name: h100-prom, match: 127.0.0.3 }',
        '',
      ].join('\n'),
    );
    const loaded = loadConfig(cfg);
    svc = new SourcedHostsService(withSqliteRegistry({ config: loaded.config, baseDir: loaded.baseDir, agent: null }));
  });

  afterAll(async () => {
    await svc?.close();
    await sshd?.stop();
    await prom?.stop();
    for (const c of closers) await c();
    rmSync(root, { recursive: true, force: true });
  });

  const ok = (r: HostStatusResult | undefined) => {
    if (!r || !r.ok) throw new Error(`not ok: ${JSON.stringify(r)}`);
    return r;
  };

  it('status answers both groups; the H100 reads the same from Prometheus as over SSH', async () => {
    const all = await svc.status([]);
    expect(all.map((r) => r.name).sort()).toEqual(['a100-prom', 'h100-prom', 'h100-ssh']);
    const ssh = ok(all.find((r) => r.name === 'h100-ssh'));
    const viaProm = ok(all.find((r) => r.name === 'h100-prom'));
    // Over SSH the health query adds power, ECC and clocks; nvidia_gpu_exporter's series here have none of them.
    expect(viaProm.gpus).toEqual(ssh.gpus.map(({ health: _health, ...g }) => ({ ...g, error: null })));
    expect(ssh.gpus[0].health).toMatchObject({ powerDrawW: 631.95, powerLimitW: 700, eccUncorrectedVolatile: 0 });
    expect(viaProm.gpus[0]).toMatchObject({ index: 0, name: 'NVIDIA H100 80GB HBM3', memoryUsedMiB: 19818, memoryTotalMiB: 81559, utilizationPct: 100 });
    const procs = (r: typeof ssh) => r.processes.map((p) => [p.gpuIndex, p.pid, p.memoryMiB]);
    expect(procs(viaProm)).toEqual(procs(ssh));
    // ps over SSH names the owner; Prometheus has the process name only.
    expect(ssh.processes.every((p) => p.user === 'alice')).toBe(true);
    expect(viaProm.processes.map((p) => [p.user, p.command])).toEqual([
      [null, '/root/tools/memhog'],
      [null, '/root/tools/memhog'],
      [null, './gpu_burn'],
    ]);
    expect(viaProm.warning).toMatch(/no node_exporter memory series for 127\.0\.0\.3/);

    const a100 = ok(all.find((r) => r.name === 'a100-prom'));
    expect(a100.gpus).toEqual([
      {
        index: 0,
        uuid: 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660',
        name: null,
        memoryUsedMiB: 4845,
        memoryTotalMiB: 40535,
        utilizationPct: null,
        temperatureC: 61,
        error: null,
        // dcgm-exporter's DCGM_FI_DEV_POWER_USAGE and DCGM_FI_DEV_XID_ERRORS (0: no Xid) through the real Prometheus.
        health: {
          powerDrawW: 409.692,
          powerLimitW: null,
          eccUncorrectedVolatile: null,
          retiredPagesPending: null,
          remappedRowsPending: null,
          remappedRowsFailure: null,
          clockReasons: null,
          lastXid: 0,
        },
      },
    ]);
    expect(a100.memory?.totalBytes).toBe(3831959552);
    expect(a100.warning).toMatch(/no per-process data: dcgm-exporter/);

    const text = renderText(statusReply(all));
    for (const h of ['a100-prom', 'h100-prom', 'h100-ssh']) expect(text).toContain(h);
    expect(text).toContain('no per-process data');
    expect(text).toContain('410 W');
    expect(text).toContain('632/700 W');
    expect(text).not.toContain('GPUs that need attention');
  });

  it('mem answers both groups, and names the host whose node_exporter is missing', async () => {
    const all = await svc.mem([]);
    const by = Object.fromEntries(all.map((r) => [r.name, r]));
    expect(by['h100-ssh'].ok).toBe(true);
    expect(by['a100-prom']).toMatchObject({ ok: true, memory: { totalBytes: 3831959552, availableBytes: null, swapTotalBytes: 4294963200 } });
    expect(by['h100-prom']).toMatchObject({ ok: false, error: expect.stringMatching(/no node_exporter memory series for 127\.0\.0\.3/) as unknown });
    const text = renderText(memReply(all));
    expect(text).toContain('a100-prom');
    expect(text).toContain('h100-ssh');
  });

  it('fit ranks the GPUs of both groups; a Prometheus host gets no ssh line (its login address is not known)', async () => {
    const [status, list] = await Promise.all([svc.status([]), svc.list()]);
    const targets = new Map(list.map((h) => [h.name, sshHint(h.target)]));
    const r = rankFits(status, { sizeMiB: 30 * 1024, count: 1, hours: 1, shared: true, ownUsers: [] }, DEFAULT_FIT_SETTINGS, [], (h) => targets.get(h) ?? null);
    expect(r.fits.map((f) => f.host).sort()).toEqual(['a100-prom', 'h100-prom', 'h100-ssh']);
    expect(r.fits.find((f) => f.host === 'h100-prom')?.ssh).toBeNull();
    expect(r.fits.find((f) => f.host === 'h100-ssh')?.ssh).toBe(`ssh -p ${sshd.port} 127.0.0.1`);
  });

  it('hosts list shows where each host is read from', async () => {
    const list = await svc.list();
    expect(list.find((h) => h.name === 'h100-prom')?.target).toBe(`prometheus ${new URL(prom.url).host} (instance=127.0.0.3)`);
    expect(list.find((h) => h.name === 'h100-ssh')?.target).toMatch(/@127\.0\.0\.1:/);
  });

  it('a digest watches hosts of both groups: live samples, and history read with query_range', async () => {
    const store = tempWatchStore();
    try {
      const now = Date.now();
      // What Prometheus already holds (the last minute, 1 s steps) ...
      const prometheus = svc.sourceOf({ name: 'h100-prom', host: 'h100-prom', origin: 'config' }) as PrometheusHostSource;
      const history = await prometheus.history(now - 60_000, now);
      expect(history.warnings).toEqual([]);
      const hosts = new Set(history.samples.map((s) => s.host));
      expect([...hosts].sort()).toEqual(['a100-prom', 'h100-prom']);
      expect(history.samples.some((s) => s.host === 'h100-prom' && 'pid' in s && s.pid === 11345)).toBe(true);
      await store.insertPaced(history.samples);
      // ... then a live round of the sampler over every host.
      const round = await sampleOnce(svc, store, now);
      expect(round.ok).toBe(3);
      const { findings, watched } = findingsFromStore(store, {}, now);
      expect(watched.hosts).toBe(3);
      const text = renderText(digestReply(findings, watched));
      expect(text).toMatch(/3 hosts/);
    } finally {
      store.close();
    }
  });

  it('at watch start the store is filled from Prometheus since its last sample, once', async () => {
    const store = tempWatchStore();
    try {
      const now = Date.now();
      const first = await svc.backfillHistory(store, now);
      expect(first.warnings).toEqual([]);
      expect(first.samples).toBeGreaterThan(0);
      expect(store.watched(now - 60_000).hosts).toBe(2);
      // Nothing is read twice: the next start reads from the last stored sample on.
      const again = await svc.backfillHistory(store, (store.latestTsMs() ?? now) + 500);
      expect(again.samples).toBe(0);
    } finally {
      store.close();
    }
  });

  it('a Prometheus that is down is one line per host, and the SSH host still answers', async () => {
    const cfg = loadConfig(join(root, 'gpu-doctor.yaml')).config;
    const closedPort = await freePort();
    const downCfg = {
      ...cfg,
      host_groups: cfg.host_groups.map((g) => (g.source === 'prometheus' ? { ...g, url: `http://127.0.0.1:${closedPort}`, timeout_ms: 1000 } : g)),
    };
    const down = new SourcedHostsService(withSqliteRegistry({ config: downCfg, baseDir: root, agent: null }));
    try {
      const all = await down.status([]);
      const by = Object.fromEntries(all.map((r) => [r.name, r]));
      expect(by['h100-ssh'].ok).toBe(true);
      expect(by['a100-prom']).toMatchObject({ ok: false, error: `Prometheus at 127.0.0.1:${closedPort} unreachable (ECONNREFUSED)` });
      expect(by['h100-prom']).toMatchObject({ ok: false, error: `Prometheus at 127.0.0.1:${closedPort} unreachable (ECONNREFUSED)` });
    } finally {
      await down.close();
    }
  });
});
