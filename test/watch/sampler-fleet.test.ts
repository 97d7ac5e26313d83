// The leak-watch sampler over a fleet bigger than the 256 names the hosts service takes in one call
// (the cap on what a chat request may name): every host is sampled, not the first 256. Found by
// bench/ssh-capacity.ts at 400 hosts. The fleet is a `source: prometheus` group of 300 hosts (the real
// SourcedHostsService and its Prometheus group) against a local HTTP server answering /api/v1/query as
// Prometheus does, with the real dcgm-exporter output of test/fixtures/prometheus per host.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { MAX_NAMES_PER_CALL, sampleOnce } from '../../src/watch/sampler.js';
import { exposition, fixtureText } from '../sources/exposition.js';
import { tempWatchStore, withSqliteRegistry } from '../storage/sqlite-stores.js';

const N = 300;
const ip = (i: number) => `10.0.${i >> 8}.${i & 255}`;
const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-sampler-fleet-'));
let server: Server;
let url = '';
let queries = 0;

beforeAll(async () => {
  const gpu = Array.from({ length: N }, (_, i) => exposition(fixtureText('dcgm-exporter-a100.prom'), { instance: `${ip(i)}:9400`, job: 'dcgm' })).flat();
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      queries++;
      const query = new URLSearchParams(body).get('query') ?? '';
      const result = query.includes('node_memory_') ? [] : gpu;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(root, { recursive: true, force: true });
});

it(`samples every host of a fleet larger than ${MAX_NAMES_PER_CALL} (the service's names-per-call cap)`, async () => {
  expect(N).toBeGreaterThan(MAX_NAMES_PER_CALL);
  const config = parseConfig({
    data_dir: join(root, 'data'),
    host_groups: [{ name: 'fleet', source: 'prometheus', url, hosts: Array.from({ length: N }, (_, i) => ({ name: `gpu${i}`, match: ip(i) })) }],
  });
  const svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
  const store = tempWatchStore();
  try {
    const round = await sampleOnce(svc, store, Date.now());
    expect(round.failed).toBe(0);
    expect(round.ok).toBe(N);
    expect(new Set(round.status.map((s) => s.name)).size).toBe(N);
    // One GPU sample per host (dcgm-exporter: whole GPUs; no node series here).
    expect(round.samples).toBe(N);
    // The slices are asked at once: the group's two queries serve every host (a query per slice at most).
    expect(queries).toBeLessThanOrEqual(2 * Math.ceil(N / MAX_NAMES_PER_CALL));
  } finally {
    store.close();
    await svc.close();
  }
});
