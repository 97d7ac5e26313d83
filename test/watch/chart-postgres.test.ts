// Charts from Postgres storage (a real PostgreSQL): the bot reads the host's samples from the database
// and sends them to the chart child as columns (src/watch/chart-samples.ts). `/gpu chart` and `/gpu digest`
// through the bot as createApp builds it from a config file, answer with the same text and a PNG as
// from SQLite. One process grows 1 GiB an hour for six hours.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { createApp, type App } from '../../src/app.js';
import type { CommandContext } from '../../src/core/command.js';
import { openPool, type Pool } from '../../src/storage/postgres/connect.js';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { PgWatchState } from '../../src/storage/postgres/watch.js';
import type { Sample } from '../../src/watch/types.js';
import { startPostgres, type PgInstance } from '../storage/pg-harness.js';
import { describeWithPostgres } from '../storage/pg-suite.js';

const MIN = 60_000;

describeWithPostgres('charts from Postgres storage', 'test/watch/chart-postgres.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gd-pg-chart-'));
  let server: PgInstance;
  let pool: Pool;
  let app: App | null = null;
  const ctx = (): CommandContext => ({ platform: 'console', userId: 'carol', isAdmin: false, services: app!.services });

  beforeAll(async () => {
    server = await startPostgres();
    const url = await server.createDatabase('charts');
    const configFile = join(root, 'config.yaml');
    writeFileSync(
      configFile,
      [`data_dir: ${join(root, 'data')}`, 'storage:', `  url: ${url}`, 'watch:', '  enabled: true', '  sample_interval_s: 300', ''].join('\n'),
    );
    // Written before the bot starts, as another replica's sampler would have.
    pool = openPool({ url });
    await migrate(pool);
    const end = Date.now() - MIN;
    const samples: Sample[] = [];
    for (let k = 0; k <= 360; k += 5)
      samples.push({
        ts: new Date(end - (360 - k) * MIN).toISOString(),
        host: 'creep',
        gpu: 0,
        gpuTotalMiB: 81_559,
        gpuUsedMiB: 20_000 + (k / 60) * 1024,
        utilizationPct: 90,
        pid: 4242,
        processStart: new Date(end - 7 * 3_600_000).toISOString(),
        user: 'alice',
        command: 'python train.py',
        processMiB: 20_000 + (k / 60) * 1024,
      });
    await new PgWatchState(pool, { replica: 'seed', leaseMs: 5000 }).insert(samples);
    app = await createApp(configFile);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await pool?.end();
    await server?.stop();
  });

  it('answers /gpu chart with the creep and its PNG', async () => {
    const { reply } = await app!.registry.dispatch('/gpu chart creep 0 6', ctx());
    const text = renderText(reply);
    expect(text).toContain('Chart creep · GPU 0 (last 6 h)');
    expect(text).toMatch(/1 process \(alice · pid 4242\)/);
    expect(text).toMatch(/alice pid 4242 grows \+[\d.]+ MiB\/h/);
    expect(text).not.toContain('could not be drawn');
    expect(reply.files?.[0]).toMatchObject({ filename: 'creep-gpu0-6h.png', contentType: 'image/png' });
    expect(reply.files![0].data.subarray(1, 4).toString('ascii')).toBe('PNG');
  }, 120_000);

  it("attaches the finding's chart to /gpu digest", async () => {
    const { reply } = await app!.registry.dispatch('/gpu digest', ctx());
    expect(renderText(reply)).toContain('alice');
    expect(reply.files?.[0]).toMatchObject({ filename: 'creep-gpu0-4242.png', contentType: 'image/png' });
  }, 120_000);
});
