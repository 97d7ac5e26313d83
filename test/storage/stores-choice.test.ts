// The one choice of storage backend (src/app.ts openStores), which the bot and the `gpu-doctor hosts`
// and `feedback` CLIs all take: SQLite files in data_dir without `storage:`, the replicas' Postgres with it.
// Every store comes from the choice; nothing else picks a default or opens a backend.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkLayering, readSourceTree } from '../../scripts/layering.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStores } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { startPostgres, type PgInstance } from './pg-harness.js';
import { describeWithPostgres } from './pg-suite.js';

const entry = { ts: 1, platform: 'slack', user: 'U1', channel: 'C1', command: '/gpu status', outcome: 'ok' as const, ms: 3 };

describe('one choice of backend', () => {
  it('no src/ file but app.ts loads a backend (storage/sqlite/, storage/postgres/): the CLIs open their stores through openStores', () => {
    const { edges } = checkLayering(readSourceTree(resolve(import.meta.dirname, '../..')));
    const backend = /^src\/storage\/(sqlite|postgres)\//;
    // Type-only imports load nothing; a value or dynamic import opens (or may open) a backend.
    const opening = edges.filter((e) => !e.typeOnly && backend.test(e.to) && !e.from.startsWith('src/storage/') && e.from !== 'src/app.ts');
    expect(opening.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });
});

describe('storage choice without storage:', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-stores-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is SQLite in data_dir: the registry in gpu-doctor.sqlite, the audit trail in audit.sqlite', async () => {
    const stores = await openStores({ config: parseConfig({ data_dir: 'data' }), file: join(dir, 'c.yaml'), baseDir: dir });
    expect(stores.shared).toBeUndefined();
    const registry = stores.registry([]);
    await registry.add({ name: 'gpu7', host: '10.0.0.7' });
    await registry.close();
    const audit = stores.audit(() => undefined);
    audit.record(entry);
    audit.close();
    await stores.close();
    expect([existsSync(join(dir, 'data', 'gpu-doctor.sqlite')), existsSync(join(dir, 'data', 'audit.sqlite'))]).toEqual([true, true]);
    const again = (await openStores({ config: parseConfig({ data_dir: 'data' }), file: null, baseDir: dir })).registry([]);
    expect(again.list().map((h) => h.name)).toEqual(['gpu7']);
    await again.close();
  });
});

describeWithPostgres('storage choice with storage: Postgres', 'test/storage/stores-choice.test.ts', () => {
  let server: PgInstance;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'gd-stores-pg-'));
  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase('stores_choice');
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is the replicas' Postgres for the registry and the audit trail; nothing is written to data_dir", async () => {
    const stores = await openStores({ config: parseConfig({ data_dir: 'data', storage: { url } }), file: null, baseDir: dir });
    expect(stores.shared).toBeDefined();
    const registry = stores.registry([]);
    await registry.add({ name: 'gpu8', host: '10.0.0.8' });
    const errors: unknown[] = [];
    const audit = stores.audit((e) => errors.push(e));
    audit.record(entry);
    await (audit as unknown as { flush(): Promise<void> }).flush();
    const rows = await stores.shared!.pool.query(
      'SELECT (SELECT count(*) FROM audit)::int AS audit, (SELECT count(*) FROM registry_hosts WHERE name = $1)::int AS hosts',
      ['gpu8'],
    );
    await stores.close();
    expect({ errors, ...rows.rows[0] }).toEqual({ errors: [], audit: 1, hosts: 1 });
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });
});
