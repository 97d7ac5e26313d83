// Issue 22 items 15 and 18 through the app as the bot builds it (createApp from a config file, commands
// dispatched by its registry as the chat adapters do), against the local fake Prometheus of
// fake-prometheus.ts: the history backfill at start at 8 hosts x 8 GPUs x 72 h (it threw `Maximum
// call stack size exceeded` on push(...batch)); concurrent `/gpu status` asks over one group make one
// request per exporter family (single flight), and an answer with far more series than the hosts
// asked is refused before it is parsed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { renderText } from '../../src/adapters/console/render.js';
import type { CommandContext } from '../../src/core/command.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { startPostgres, type PgInstance } from '../storage/pg-harness.js';
import { describeWithPostgres } from '../storage/pg-suite.js';
import { answerFor, json, startFakePrometheus, type FakePrometheus, type FakeRequest } from './fake-prometheus.js';

const H = 3_600_000;

let fake: FakePrometheus;
const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-promload-'));
beforeAll(async () => {
  fake = await startFakePrometheus();
});
afterAll(async () => {
  await fake?.close();
  rmSync(root, { recursive: true, force: true });
});

function configFile(name: string, lines: string[]): string {
  const file = join(root, `${name}.yaml`);
  writeFileSync(file, [`data_dir: ${join(root, name)}`, ...lines, ''].join('\n'));
  return file;
}

const promGroup = (name: string, hosts: [string, string][], extra: string[] = []) => [
  `  - name: ${name}`,
  '    source: prometheus',
  `    url: ${fake.url(name)}`,
  ...extra,
  '    hosts:',
  ...hosts.map(([n, ip]) => `      - { name: ${n}, match: "${ip}" }`),
];

const ask = (app: App, line: string) => {
  const ctx: CommandContext = { platform: 'console', userId: 'me', isAdmin: false, locale: 'en', services: app.services };
  return app.registry.dispatch(line, ctx).then((r) => renderText(r.reply));
};

/** dcgm-exporter's FB_USED and FB_FREE of 8 GPUs on each host, every step of the asked range (a query_range answer). */
function dcgmMatrix(req: FakeRequest, ips: string[]): unknown {
  const [start, end, step] = ['start', 'end', 'step'].map((k) => Number(req.params.get(k)));
  const times: number[] = [];
  for (let t = start; t <= end; t += step) times.push(t);
  const result: unknown[] = [];
  for (const ip of ips)
    for (let gpu = 0; gpu < 8; gpu++)
      for (const [field, v] of [
        ['FB_USED', 1000 + gpu],
        ['FB_FREE', 80000 - gpu],
      ] as const)
        result.push({
          metric: { __name__: `DCGM_FI_DEV_${field}`, instance: `${ip}:9400`, job: 'dcgm', gpu: String(gpu), UUID: `GPU-${ip}-${gpu}` },
          values: times.map((t) => [t, String(v)]),
        });
  return { status: 'success', data: { resultType: 'matrix', result } };
}

describe('the Prometheus history backfill at start', () => {
  it('stores 8 hosts x 8 GPUs x 72 h of history (one query_range answer of 276,480 samples)', { timeout: 300_000 }, async () => {
    const hosts: [string, string][] = Array.from({ length: 8 }, (_, i) => [`big${i}`, `10.5.0.${i}`]);
    const ips = hosts.map(([, ip]) => ip);
    fake.on('big', (r, res) => {
      if (!r.path.endsWith('query_range')) return json(res, 200, answerFor(r, ips));
      return json(res, 200, r.query.includes('node_memory_') ? { status: 'success', data: { resultType: 'matrix', result: [] } } : dcgmMatrix(r, ips));
    });
    const file = configFile('backfill', [
      'watch: { enabled: true, sample_interval_s: 3600 }',
      'host_groups:',
      ...promGroup('big', hosts, ['    timeout_ms: 60000']),
    ]);
    const logged: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => (logged.push(String(s)), true));
    let app: App | undefined;
    try {
      app = await createApp(file);
    } finally {
      spy.mockRestore();
      await app?.close();
    }
    expect(logged.filter((l) => l.includes('Prometheus history'))).toEqual([]);
    const store = WatchStore.inDataDir(join(root, 'backfill'));
    try {
      let samples = 0;
      const perHost = new Map<string, number>();
      for (const s of store.samplesSince(Date.now() - 73 * H)) {
        samples++;
        perHost.set(s.host, (perHost.get(s.host) ?? 0) + 1);
      }
      // Every step of 72 h at the 60 s history step (4,320 or 4,321 of them), 8 GPUs, 8 hosts.
      expect([...perHost.keys()].sort()).toEqual(hosts.map(([n]) => n).sort());
      expect(samples).toBeGreaterThanOrEqual(8 * 8 * 4320);
    } finally {
      store.close();
    }
  });
});

describeWithPostgres('the Prometheus history backfill with Postgres storage', 'test/sources/prometheus-load.test.ts', () => {
  let server: PgInstance | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it("writes 72 h of a host into the replicas' database, and a restart adds no second copy", { timeout: 300_000 }, async () => {
    server = await startPostgres();
    const url = await server.createDatabase('backfill');
    fake.on('pgfill', (r, res) => {
      if (!r.path.endsWith('query_range')) return json(res, 200, answerFor(r, ['10.9.0.1']));
      return json(res, 200, r.query.includes('node_memory_') ? { status: 'success', data: { resultType: 'matrix', result: [] } } : dcgmMatrix(r, ['10.9.0.1']));
    });
    const file = configFile('pgfill', [
      `storage: { url: "${url}" }`,
      'watch: { enabled: true, sample_interval_s: 3600 }',
      'host_groups:',
      ...promGroup('pgfill', [['pg1', '10.9.0.1']], ['    timeout_ms: 60000']),
    ]);
    const rows = async (app: App) =>
      Number((await app.storage!.pool.query<{ n: string }>('SELECT count(*) AS n FROM watch_samples WHERE pid = 0 AND gpu >= 0')).rows[0].n);
    const first = await createApp(file);
    let stored: number;
    try {
      stored = await rows(first);
      // Every step of 72 h at the 60 s history step, 8 GPUs (the host's own sampler round may add one more step).
      expect(stored).toBeGreaterThanOrEqual(8 * 4320);
      expect(await first.storage!.watch.watched(Date.now() - 73 * H)).toMatchObject({ hosts: 1 });
    } finally {
      await first.close();
    }
    const again = await createApp(file);
    try {
      expect(await rows(again)).toBeLessThan(stored + 8 * 10);
    } finally {
      await again.close();
    }
  });
});

describe('concurrent asks over one group', () => {
  it('five /gpu status asks made one after the other while the first is in flight share one request per exporter family', { timeout: 120_000 }, async () => {
    const hosts: [string, string][] = [
      ['sf1', '10.7.0.1'],
      ['sf2', '10.7.0.2'],
      ['sf3', '10.7.0.3'],
    ];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    fake.on('single', async (r, res) => {
      await released;
      json(
        res,
        200,
        answerFor(
          r,
          hosts.map(([, ip]) => ip),
        ),
      );
    });
    const app = await createApp(configFile('single', ['host_groups:', ...promGroup('single', hosts)]));
    try {
      const first = ask(app, '/gpu status');
      // The first ask's two requests reach the server and wait there.
      // (Bounded by the test's timeout: a loaded machine may take its time to get there.)
      while (fake.stats('single').requests < 2) await new Promise((r) => setTimeout(r, 10));
      expect(fake.stats('single').requests).toBe(2);
      const later: Promise<string>[] = [];
      for (let i = 0; i < 4; i++) {
        later.push(ask(app, i % 2 ? '/gpu status' : '/gpu status sf2'));
        await new Promise((r) => setTimeout(r, 20));
      }
      release();
      const replies = await Promise.all([first, ...later]);
      for (const reply of replies) expect(reply).toMatch(/4845\/40535 MiB/);
      expect(replies[0]).toMatch(/3\/3 hosts answered/);
      expect(fake.stats('single').requests).toBe(2);
      // Once that answer is in, a new ask makes a new request pair (single flight, not a cache).
      await ask(app, '/gpu status sf1');
      expect(fake.stats('single').requests).toBe(4);
    } finally {
      release();
      await app.close();
    }
  });

  it('an answer with far more series than the hosts asked is refused before it is parsed, with one line', { timeout: 120_000 }, async () => {
    // 30,000 series for one host: over the 20,000 an answer for up to 20 hosts may hold.
    fake.on('many', (r, res) => {
      if (r.query.includes('node_memory_')) return json(res, 200, answerFor(r, ['10.8.0.1']));
      const result = Array.from({ length: 30_000 }, (_, i) => ({
        metric: { __name__: 'DCGM_FI_DEV_FB_USED', instance: '10.8.0.1:9400', gpu: String(i), UUID: `GPU-${i}` },
        value: [1, '1'],
      }));
      json(res, 200, { status: 'success', data: { resultType: 'vector', result } });
    });
    const app = await createApp(configFile('many', ['host_groups:', ...promGroup('many', [['many1', '10.8.0.1']])]));
    try {
      const reply = await ask(app, '/gpu status many1');
      expect(reply).toMatch(/many1: Prometheus at [^ ]+: answer of more than 20000 series refused/);
    } finally {
      await app.close();
    }
  });
});
